#include "k8s/credentials.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

#include "yaml/yaml_load.h"

namespace gantry::k8s {
namespace {

Result<std::string> ReadFile(const std::string& path, const std::string& what) {
  auto text = ReadInputFile(path);
  if (!text.ok() && text.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(what + ": cannot read " + path);
  }
  if (!text.ok()) return text.status().WithPrefix(what);
  return text;
}

// The entry of a kubeconfig list (clusters, users, contexts) with this name.
YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const YAML::Node& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item;
  }
  return YAML::Node();
}

std::string Scalar(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : "";
}

// A field given either inline as base64 (`<key>-data`) or as a file path (`<key>`).
Result<std::string> DataOrFile(const YAML::Node& map, const std::string& key,
                               const std::filesystem::path& dir, const std::string& where) {
  std::string data = Scalar(map, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = Base64Decode(data);
    if (!decoded.ok())
      return Status::Invalid(where + "." + key + "-data: " + decoded.status().message());
    return decoded;
  }
  std::string file = Scalar(map, key.c_str());
  if (file.empty()) return std::string();
  std::filesystem::path p(file);
  if (p.is_relative()) p = dir / p;
  return ReadFile(p.string(), where + "." + key);
}

}  // namespace

Result<std::string> Base64Decode(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int v = value(c);
    if (v < 0) return Status::Invalid("not base64: bad character at offset " + std::to_string(i));
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out.push_back(static_cast<char>((bits >> 16) & 0xff));
      out.push_back(static_cast<char>((bits >> 8) & 0xff));
      out.push_back(static_cast<char>(bits & 0xff));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1) return Status::Invalid("not base64: truncated");
  if (count == 2) out.push_back(static_cast<char>((bits >> 4) & 0xff));
  if (count == 3) {
    out.push_back(static_cast<char>((bits >> 10) & 0xff));
    out.push_back(static_cast<char>((bits >> 2) & 0xff));
  }
  return out;
}

namespace {

Result<Credentials> ParseKubeconfig(const YAML::Node& root, const std::string& path,
                                    const std::string& context) {
  std::string context_name = context.empty() ? Scalar(root, "current-context") : context;
  if (context_name.empty()) return Status::Invalid("kubeconfig " + path + ": no current-context");
  YAML::Node ctx = Named(root["contexts"], context_name);
  if (!ctx || !ctx["context"]) {
    return Status::Invalid("kubeconfig " + path + ": no context \"" + context_name + "\"");
  }
  std::string cluster_name = Scalar(ctx["context"], "cluster");
  std::string user_name = Scalar(ctx["context"], "user");
  YAML::Node cluster = Named(root["clusters"], cluster_name);
  if (!cluster || !cluster["cluster"]) {
    return Status::Invalid("kubeconfig " + path + ": context \"" + context_name +
                           "\" names cluster \"" + cluster_name + "\", which is not there");
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  Credentials c;
  c.source = "kubeconfig " + path + " (context " + context_name + ")";
  const YAML::Node cl = cluster["cluster"];
  c.server = Scalar(cl, "server");
  if (c.server.empty()) {
    return Status::Invalid("kubeconfig " + path + ": cluster \"" + cluster_name +
                           "\" has no server");
  }
  if (const YAML::Node skip = cl["insecure-skip-tls-verify"]) {
    GANTRY_RETURN_IF_ERROR(ReadYamlBool(skip, "kubeconfig " + path,
                                        "clusters[" + cluster_name + "].insecure-skip-tls-verify",
                                        &c.insecure_skip_verify));
  }
  std::string where = "kubeconfig " + path + ": clusters[" + cluster_name + "]";
  auto ca = DataOrFile(cl, "certificate-authority", dir, where);
  if (!ca.ok()) return ca.status();
  c.ca_pem = std::move(ca).value();
  if (!user_name.empty()) {
    YAML::Node user = Named(root["users"], user_name);
    if (!user || !user["user"]) {
      return Status::Invalid("kubeconfig " + path + ": context \"" + context_name +
                             "\" names user \"" + user_name + "\", which is not there");
    }
    const YAML::Node u = user["user"];
    where = "kubeconfig " + path + ": users[" + user_name + "]";
    c.token = Scalar(u, "token");
    std::string token_file = Scalar(u, "tokenFile");
    if (!token_file.empty()) {
      std::filesystem::path p(token_file);
      if (p.is_relative()) p = dir / p;
      c.token_file = p.string();
      auto token = ReadFile(c.token_file, where + ".tokenFile");
      if (!token.ok()) return token.status();
      c.token = std::move(token).value();
    }
    auto cert = DataOrFile(u, "client-certificate", dir, where);
    if (!cert.ok()) return cert.status();
    auto key = DataOrFile(u, "client-key", dir, where);
    if (!key.ok()) return key.status();
    c.client_cert_pem = std::move(cert).value();
    c.client_key_pem = std::move(key).value();
  }
  while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) c.token.pop_back();
  return c;
}

std::string YamlError(const std::string& path, const YAML::Exception& e) {
  std::string at = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
  return "kubeconfig " + path + at + ": " + e.msg;
}

}  // namespace

Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto text = ReadInputFile(path);
  if (!text.ok()) {
    if (text.status().code() == Status::Code::kNotFound) {
      return Status::NotFound("kubeconfig " + path + ": cannot read it");
    }
    return Status::Invalid("kubeconfig " + text.status().message());
  }
  auto loaded = ParseYamlNode(*text, "kubeconfig " + path);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node root = *loaded;
  // Anything but a mapping (a list, a scalar) would make yaml-cpp throw on lookups.
  if (root.IsDefined() && !root.IsNull() && !root.IsMap()) {
    return Status::Invalid("kubeconfig " + path +
                           ": expected a mapping (clusters, users, contexts, current-context)");
  }
  try {
    return ParseKubeconfig(root, path, context);
  } catch (const YAML::Exception& e) {  // an entry of the wrong shape, e.g. contexts: [a]
    return Status::Invalid(YamlError(path, e));
  }
}

Result<Credentials> InClusterCredentials(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port || !*host || !*port) {
    return Status::NotFound("not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  const std::string dir = root + "/var/run/secrets/kubernetes.io/serviceaccount";
  Credentials c;
  c.source = "service account (" + dir + ")";
  std::string h = host;
  c.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  c.token_file = dir + "/token";
  auto token = ReadFile(c.token_file, "service account token");
  if (!token.ok()) return token.status();
  c.token = std::move(token).value();
  while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) c.token.pop_back();
  auto ca = ReadFile(dir + "/ca.crt", "service account CA");
  if (!ca.ok()) return ca.status();
  c.ca_pem = std::move(ca).value();
  return c;
}

Result<Credentials> FindCredentials(const std::string& kubeconfig_path) {
  if (!kubeconfig_path.empty()) return LoadKubeconfig(kubeconfig_path);
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string first = env;
    first = first.substr(0, first.find(':'));
    return LoadKubeconfig(first);
  }
  auto in_cluster = InClusterCredentials();
  if (in_cluster.ok()) return in_cluster;
  if (const char* home = std::getenv("HOME"); home && *home) {
    std::string path = std::string(home) + "/.kube/config";
    if (std::filesystem::exists(path)) return LoadKubeconfig(path);
  }
  return Status::NotFound(
      "no credentials: give --kubeconfig, set KUBECONFIG, run in a pod, or create ~/.kube/config");
}

}  // namespace gantry::k8s
