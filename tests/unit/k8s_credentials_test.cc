// Credentials from kubeconfig files and from a pod's service account. The files are
// written to a temporary folder; the expected values follow the kubeconfig format
// (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/)
// and RFC 4648's base64 test vectors.
#include "k8s/credentials.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Base64

TEST(Base64Decode, Rfc4648TestVectors) {
  EXPECT_EQ(Must(Base64Decode("")), "");
  EXPECT_EQ(Must(Base64Decode("Zg==")), "f");
  EXPECT_EQ(Must(Base64Decode("Zm8=")), "fo");
  EXPECT_EQ(Must(Base64Decode("Zm9v")), "foo");
  EXPECT_EQ(Must(Base64Decode("Zm9vYg==")), "foob");
  EXPECT_EQ(Must(Base64Decode("Zm9vYmE=")), "fooba");
  EXPECT_EQ(Must(Base64Decode("Zm9vYmFy")), "foobar");
}

TEST(Base64Decode, LineBreaksAreSkipped) {
  // `base64` wraps its output at 76 columns; kubeconfig files may carry it so.
  EXPECT_EQ(Must(Base64Decode("Zm9v\nYmFy\n")), "foobar");
  EXPECT_EQ(Must(Base64Decode("Zm9v\r\nYmFy")), "foobar");
}

TEST(Base64Decode, BinaryBytes) {
  // "+/8=" is the bytes fb ff.
  EXPECT_EQ(Must(Base64Decode("+/8=")), std::string("\xfb\xff", 2));
  EXPECT_EQ(Must(Base64Decode("AA==")), std::string("\0", 1));
}

TEST(Base64Decode, BadCharacterIsRejectedWithItsOffset) {
  auto r = Base64Decode("Zm9v!mFy");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "offset 4"));
  EXPECT_FALSE(Base64Decode("Zm9v*").ok());
  EXPECT_FALSE(Base64Decode("Zm9v.").ok());
}

TEST(Base64Decode, TruncatedInputIsRejected) {
  // One character carries 6 bits: not a byte.
  EXPECT_FALSE(Base64Decode("Z").ok());
  EXPECT_FALSE(Base64Decode("Zm9vY").ok());
}

// ---------------------------------------------------------------------------------------
// Kubeconfig

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "gantry-kubeconfig-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  // A kubeconfig with four clusters and users; "Zm9vYmFy" is base64 for "foobar".
  std::string WriteKubeconfig() {
    Write("certs/ca.pem", "PROD CA PEM\n");
    Write("tokens/bob", "bob-token\n");
    Write("dave.crt", "DAVE CERT\n");
    Write("keys/dave.key", "DAVE KEY\n");
    return Write("config", R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example.com:6443
    certificate-authority-data: Zm9vYmFy
- name: prod-cluster
  cluster:
    server: https://prod.example.com
    certificate-authority: certs/ca.pem
- name: lab-cluster
  cluster:
    server: https://10.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: alice
  user:
    token: alice-token
- name: bob
  user:
    tokenFile: tokens/bob
- name: carol
  user:
    client-certificate-data: Zm9v
    client-key-data: Zm8=
- name: dave
  user:
    client-certificate: dave.crt
    client-key: )" + (dir_ / "keys/dave.key").string() +
                               R"(
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: alice
- name: prod
  context:
    cluster: prod-cluster
    user: bob
- name: lab
  context:
    cluster: lab-cluster
    user: carol
- name: lab-dave
  context:
    cluster: lab-cluster
    user: dave
- name: anonymous
  context:
    cluster: dev-cluster
- name: ghost-cluster
  context:
    cluster: nowhere
    user: alice
- name: ghost-user
  context:
    cluster: dev-cluster
    user: nobody
)");
  }

  fs::path dir_;
};

TEST_F(KubeconfigTest, CurrentContextWithInlineCaAndToken) {
  std::string path = WriteKubeconfig();
  Credentials c = Must(LoadKubeconfig(path));
  EXPECT_EQ(c.server, "https://dev.example.com:6443");
  EXPECT_EQ(c.ca_pem, "foobar");
  EXPECT_FALSE(c.insecure_skip_verify);
  EXPECT_EQ(c.token, "alice-token");
  EXPECT_EQ(c.token_file, "");
  EXPECT_EQ(c.client_cert_pem, "");
  EXPECT_EQ(c.client_key_pem, "");
  EXPECT_TRUE(Contains(c.source, path));
  EXPECT_TRUE(Contains(c.source, "dev"));
}

TEST_F(KubeconfigTest, ExplicitContextCaFileAndTokenFileRelativeToTheKubeconfig) {
  std::string path = WriteKubeconfig();
  // The test runs elsewhere: relative paths must be taken from the kubeconfig's folder,
  // not from the working directory.
  ASSERT_NE(fs::current_path(), dir_);
  Credentials c = Must(LoadKubeconfig(path, "prod"));
  EXPECT_EQ(c.server, "https://prod.example.com");
  EXPECT_EQ(c.ca_pem, "PROD CA PEM\n");
  EXPECT_EQ(c.token, "bob-token");  // the file's trailing newline is not part of it
  EXPECT_EQ(fs::path(c.token_file), dir_ / "tokens/bob");
  EXPECT_TRUE(Contains(c.source, "prod"));
}

TEST_F(KubeconfigTest, ClientCertificateDataAndInsecureSkipVerify) {
  Credentials c = Must(LoadKubeconfig(WriteKubeconfig(), "lab"));
  EXPECT_EQ(c.server, "https://10.0.0.1:6443");
  EXPECT_TRUE(c.insecure_skip_verify);
  EXPECT_EQ(c.ca_pem, "");
  EXPECT_EQ(c.client_cert_pem, "foo");
  EXPECT_EQ(c.client_key_pem, "fo");
  EXPECT_EQ(c.token, "");
}

TEST_F(KubeconfigTest, ClientCertificateFilesRelativeAndAbsolute) {
  Credentials c = Must(LoadKubeconfig(WriteKubeconfig(), "lab-dave"));
  EXPECT_EQ(c.client_cert_pem, "DAVE CERT\n");
  EXPECT_EQ(c.client_key_pem, "DAVE KEY\n");
}

TEST_F(KubeconfigTest, ContextWithoutUser) {
  Credentials c = Must(LoadKubeconfig(WriteKubeconfig(), "anonymous"));
  EXPECT_EQ(c.server, "https://dev.example.com:6443");
  EXPECT_EQ(c.token, "");
  EXPECT_EQ(c.client_cert_pem, "");
}

TEST_F(KubeconfigTest, MissingContextNamesFileAndContext) {
  std::string path = WriteKubeconfig();
  auto r = LoadKubeconfig(path, "staging");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  EXPECT_TRUE(Contains(r.status().message(), "\"staging\""));
}

TEST_F(KubeconfigTest, MissingClusterNamesFileContextAndCluster) {
  std::string path = WriteKubeconfig();
  auto r = LoadKubeconfig(path, "ghost-cluster");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  EXPECT_TRUE(Contains(r.status().message(), "\"ghost-cluster\""));
  EXPECT_TRUE(Contains(r.status().message(), "cluster \"nowhere\""));
}

TEST_F(KubeconfigTest, MissingUserNamesFileContextAndUser) {
  std::string path = WriteKubeconfig();
  auto r = LoadKubeconfig(path, "ghost-user");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  EXPECT_TRUE(Contains(r.status().message(), "\"ghost-user\""));
  EXPECT_TRUE(Contains(r.status().message(), "user \"nobody\""));
}

TEST_F(KubeconfigTest, NoCurrentContext) {
  std::string path = Write("config", R"(clusters:
- name: c
  cluster: {server: https://x}
contexts:
- name: c
  context: {cluster: c}
)");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  EXPECT_TRUE(Contains(r.status().message(), "current-context"));
  EXPECT_EQ(Must(LoadKubeconfig(path, "c")).server, "https://x");
}

TEST_F(KubeconfigTest, ClusterWithoutServer) {
  std::string path = Write("config", R"(current-context: c
clusters:
- name: c
  cluster: {insecure-skip-tls-verify: true}
contexts:
- name: c
  context: {cluster: c}
)");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  EXPECT_TRUE(Contains(r.status().message(), "server"));
}

TEST_F(KubeconfigTest, MissingFilesReferencedByTheKubeconfig) {
  std::string path = Write("config", R"(current-context: c
clusters:
- name: c
  cluster: {server: https://x, certificate-authority: missing-ca.pem}
contexts:
- name: c
  context: {cluster: c, user: u}
users:
- name: u
  user: {tokenFile: missing-token}
)");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "certificate-authority"));
  EXPECT_TRUE(Contains(r.status().message(), (dir_ / "missing-ca.pem").string()));

  Write("missing-ca.pem", "CA");
  r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "tokenFile"));
  EXPECT_TRUE(Contains(r.status().message(), (dir_ / "missing-token").string()));
}

TEST_F(KubeconfigTest, BadBase64NamesTheField) {
  std::string path = Write("config", R"(current-context: c
clusters:
- name: c
  cluster: {server: https://x, certificate-authority-data: "not*base64"}
contexts:
- name: c
  context: {cluster: c}
)");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  EXPECT_TRUE(Contains(r.status().message(), "certificate-authority-data"));
}

TEST_F(KubeconfigTest, MalformedYamlGivesTheLine) {
  std::string path = Write("config",
                           "current-context: c\n"
                           "clusters:\n"
                           "- name: c\n"
                           "  cluster: {server: https://x]\n");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path + ":4:"));
}

TEST_F(KubeconfigTest, DuplicateKeysAreAnError) {
  // Which server was meant? yaml-cpp's lookup took the first.
  std::string path = Write("config",
                           "current-context: c\n"
                           "contexts: [{name: c, context: {cluster: c}}]\n"
                           "clusters:\n"
                           "- name: c\n"
                           "  cluster:\n"
                           "    server: https://a\n"
                           "    server: https://b\n");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "kubeconfig " + path + ":7:5: duplicate key \"server\" (first at line 6)");
}

TEST_F(KubeconfigTest, InsecureSkipVerifyIsABoolean) {
  // Anything but "true" was read as false without a word.
  std::string path = Write("config",
                           "current-context: c\n"
                           "contexts: [{name: c, context: {cluster: c}}]\n"
                           "clusters:\n"
                           "- name: c\n"
                           "  cluster: {server: https://a, insecure-skip-tls-verify: yes}\n");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "kubeconfig " + path +
                                      ":5:58: clusters[c].insecure-skip-tls-verify: expected true "
                                      "or false, got \"yes\"");
}

TEST_F(KubeconfigTest, MissingKubeconfig) {
  std::string path = (dir_ / "nope").string();
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), path));
}

TEST_F(KubeconfigTest, NotAMapping) {
  // A file that is YAML but not a kubeconfig is an error, not a crash.
  for (const char* text : {"just text\n", "- a\n- b\n", ""}) {
    std::string path = Write("config", text);
    auto r = LoadKubeconfig(path);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path)) << text;
  }
}

TEST_F(KubeconfigTest, EntriesOfTheWrongShape) {
  std::string path = Write("config", "current-context: a\ncontexts: [a, b]\n");
  auto r = LoadKubeconfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
  path = Write("config", "contexts:\n- name: {x: 1}\n  context: {cluster: c}\n");
  r = LoadKubeconfig(path, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "kubeconfig " + path));
}

// ---------------------------------------------------------------------------------------
// In-cluster

// Sets KUBERNETES_SERVICE_HOST/PORT for one test and puts back what was there.
class InClusterTest : public KubeconfigTest {
 protected:
  void SetUp() override {
    KubeconfigTest::SetUp();
    for (const char* name : {"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    KubeconfigTest::TearDown();
  }
  void SetService(const char* host, const char* port) {
    setenv("KUBERNETES_SERVICE_HOST", host, 1);
    setenv("KUBERNETES_SERVICE_PORT", port, 1);
  }
  void WriteServiceAccount() {
    Write("var/run/secrets/kubernetes.io/serviceaccount/token", "eyJhbGciOi.sa-token\n");
    Write("var/run/secrets/kubernetes.io/serviceaccount/ca.crt", "CLUSTER CA\n");
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(InClusterTest, ServiceAccount) {
  SetService("10.96.0.1", "443");
  WriteServiceAccount();
  Credentials c = Must(InClusterCredentials(dir_.string()));
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.token, "eyJhbGciOi.sa-token");
  EXPECT_EQ(fs::path(c.token_file), dir_ / "var/run/secrets/kubernetes.io/serviceaccount/token");
  EXPECT_EQ(c.ca_pem, "CLUSTER CA\n");
  EXPECT_FALSE(c.insecure_skip_verify);
}

TEST_F(InClusterTest, Ipv6HostGetsBrackets) {
  SetService("fd00:10:96::1", "6443");
  WriteServiceAccount();
  EXPECT_EQ(Must(InClusterCredentials(dir_.string())).server, "https://[fd00:10:96::1]:6443");
}

TEST_F(InClusterTest, NotInACluster) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  WriteServiceAccount();
  auto r = InClusterCredentials(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "KUBERNETES_SERVICE_HOST"));
  SetService("", "443");
  EXPECT_FALSE(InClusterCredentials(dir_.string()).ok());
}

TEST_F(InClusterTest, MissingTokenOrCa) {
  SetService("10.96.0.1", "443");
  auto r = InClusterCredentials(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "token"));
  Write("var/run/secrets/kubernetes.io/serviceaccount/token", "t");
  r = InClusterCredentials(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "ca.crt"));
}

}  // namespace
}  // namespace gantry::k8s
