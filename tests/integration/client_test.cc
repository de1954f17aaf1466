// The HTTP client and the credentials against a real kube-apiserver: requests of every
// method, authentication and TLS failures that say what went wrong, and the kubeconfig
// that testenv.sh writes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "k8s/client.h"
#include "k8s/credentials.h"
#include "k8s/objects.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(ClientTest, GetPostPatchPutDeleteAgainstTheServer) {
  TestEnv& env = TestEnv::Get();
  k8s::Client& client = env.client();

  auto version = client.Get("/version");
  ASSERT_TRUE(version.ok()) << version.status().message();
  ASSERT_EQ(version->status, 200) << version->Describe();
  EXPECT_EQ(json::parse(version->body).value("gitVersion", ""), "v1.37.2");

  ASSERT_TRUE(env.CreateNamespace("it-client").ok());
  const std::string collection = "/api/v1/namespaces/it-client/configmaps";
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "settings"}}},
             {"data", {{"policy", "binpack"}}}};
  auto created = client.Request("POST", collection, cm.dump());
  ASSERT_TRUE(created.ok()) << created.status().message();
  ASSERT_EQ(created->status, 201) << created->Describe();

  // A second create of the same name is refused, and the message says why.
  auto again = client.Request("POST", collection, cm.dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409);
  EXPECT_NE(again->Describe().find("already exists"), std::string::npos) << again->Describe();

  auto patched =
      client.Request("PATCH", collection + "/settings",
                     R"({"data":{"policy":"spread","extra":"1"}})", "application/merge-patch+json");
  ASSERT_TRUE(patched.ok());
  ASSERT_EQ(patched->status, 200) << patched->Describe();

  auto read = client.Get(collection + "/settings");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->status, 200);
  json object = json::parse(read->body);
  EXPECT_EQ(object["data"]["policy"], "spread");
  EXPECT_EQ(object["data"]["extra"], "1");

  // PUT with a stale resourceVersion loses (409): what leader election relies on.
  json stale = json::parse(created->body);
  stale["data"]["policy"] = "stale";
  auto put = client.Request("PUT", collection + "/settings", stale.dump());
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->status, 409) << put->Describe();
  object["data"]["policy"] = "fresh";
  put = client.Request("PUT", collection + "/settings", object.dump());
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->status, 200) << put->Describe();

  auto deleted = client.Request("DELETE", collection + "/settings");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, 200) << deleted->Describe();
  auto gone = client.Get(collection + "/settings");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status, 404);
  EXPECT_NE(gone->Describe().find("not found"), std::string::npos) << gone->Describe();
}

TEST(ClientTest, WrongTokenIsAnsweredWith401) {
  k8s::Credentials credentials = TestEnv::Get().credentials();
  credentials.token = "not-the-token";
  auto client = k8s::Client::Create(credentials);
  ASSERT_TRUE(client.ok());
  auto response = (*client)->Get("/api/v1/namespaces");
  ASSERT_TRUE(response.ok()) << response.status().message();
  EXPECT_EQ(response->status, 401);
  EXPECT_NE(response->Describe().find("Unauthorized"), std::string::npos) << response->Describe();
}

TEST(ClientTest, UntrustedServerCertificateFailsWithATlsMessage) {
  // A CA that did not sign the server's certificate.
  const std::string dir = TestEnv::Get().dir() + "/other-ca";
  std::filesystem::create_directories(dir);
  std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout '" + dir +
      "/ca.key' -out '" + dir + "/ca.crt' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  k8s::Credentials credentials = TestEnv::Get().credentials();
  credentials.ca_pem = ReadAll(dir + "/ca.crt");
  ASSERT_FALSE(credentials.ca_pem.empty());
  auto client = k8s::Client::Create(credentials);
  ASSERT_TRUE(client.ok());

  auto started = std::chrono::steady_clock::now();
  auto response = (*client)->Get("/version");
  ASSERT_FALSE(response.ok()) << "a server with an untrusted certificate answered "
                              << response->status;
  const std::string& message = response.status().message();
  EXPECT_NE(message.find("certificate"), std::string::npos) << message;
  EXPECT_NE(message.find(credentials.server), std::string::npos) << message;
  // Retrying cannot fix a certificate: the client gives up at once.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500)) << message;

  // Skipping verification (insecure-skip-tls-verify) gets through.
  credentials.insecure_skip_verify = true;
  auto insecure = k8s::Client::Create(credentials);
  ASSERT_TRUE(insecure.ok());
  auto answered = (*insecure)->Get("/version");
  ASSERT_TRUE(answered.ok()) << answered.status().message();
  EXPECT_EQ(answered->status, 200);
}

TEST(ClientTest, KubeconfigOfTheTestenvReachesTheServer) {
  TestEnv& env = TestEnv::Get();
  auto credentials = k8s::LoadKubeconfig(env.kubeconfig_path());
  ASSERT_TRUE(credentials.ok()) << credentials.status().message();
  EXPECT_EQ(credentials->server, env.EnvValue("GANTRY_APISERVER_URL"));
  EXPECT_EQ(credentials->token, env.EnvValue("GANTRY_TOKEN"));
  EXPECT_EQ(credentials->ca_pem, ReadAll(env.EnvValue("GANTRY_CA_FILE")));
  EXPECT_NE(credentials->source.find("gantry-test"), std::string::npos) << credentials->source;

  // The usual search with an explicit path finds the same.
  auto found = k8s::FindCredentials(env.kubeconfig_path());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->server, credentials->server);

  auto client = k8s::Client::Create(*credentials);
  ASSERT_TRUE(client.ok());
  auto namespaces = (*client)->Get("/api/v1/namespaces/kube-system");
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().message();
  EXPECT_EQ(namespaces->status, 200) << namespaces->Describe();

  // A context that is not there is named in the error.
  auto missing = k8s::LoadKubeconfig(env.kubeconfig_path(), "prod");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("\"prod\""), std::string::npos);
}

TEST(ClientTest, NodesGetTheirStatusThroughTheStatusSubresource) {
  TestEnv& env = TestEnv::Get();
  auto node = env.CreateNode("it-client-gpu-node", 8, "64", "512Gi",
                             {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}});
  ASSERT_TRUE(node.ok()) << node.status().message();
  auto read = env.Call("GET", "/api/v1/nodes/it-client-gpu-node");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)["status"]["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ((*read)["status"]["capacity"]["cpu"], "64");
  EXPECT_EQ((*read)["metadata"]["labels"]["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
  auto parsed = k8s::ParseNode(*read);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->name, "it-client-gpu-node");
  EXPECT_EQ(parsed->gpus.size(), 8u);

  PodParams params;
  params.name = "it-client-pod";
  params.gpus = 2;
  auto pod = env.CreatePod(params);
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ((*pod)["spec"]["schedulerName"], "gantry");
  EXPECT_EQ((*pod)["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "2");
}

}  // namespace
}  // namespace gantry::testing
