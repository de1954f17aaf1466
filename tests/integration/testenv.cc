#include "tests/integration/testenv.h"

#include "k8s/yaml_json.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

namespace gantry::testing {
namespace {

using json = nlohmann::json;

TestEnv* g_env = nullptr;

// gtest owns the environment; registering it here runs the control plane once per binary.
[[maybe_unused]] ::testing::Environment* const kRegistered =
    ::testing::AddGlobalTestEnvironment(g_env = new TestEnv);

const std::string kScript = std::string(GANTRY_SOURCE_DIR) + "/scripts/k8s/testenv.sh";

std::string Quote(const std::string& s) {
  return "'" + s + "'";
}

std::string Name(const json& object) {
  return object.value("/metadata/name"_json_pointer, std::string());
}

}  // namespace

Result<std::vector<json>> YamlFileToJson(const std::string& path) {
  auto documents = k8s::LoadYamlDocuments(path);
  if (!documents.ok()) return documents.status();
  std::vector<json> out;
  for (k8s::YamlDocument& document : *documents) out.push_back(std::move(document.object));
  return out;
}

Result<std::string> CollectionPath(const json& object) {
  struct Kind {
    const char* plural;
    bool namespaced;
  };
  // The kinds that deploy/ and the tests use. Both PodGroup APIs share kind and plural.
  // Job is batch/v1's (no other API the tests use has a kind Job).
  static const std::map<std::string, Kind> kKinds = {
      {"Namespace", {"namespaces", false}},
      {"Node", {"nodes", false}},
      {"Pod", {"pods", true}},
      {"ConfigMap", {"configmaps", true}},
      {"Service", {"services", true}},
      {"Lease", {"leases", true}},
      {"PriorityClass", {"priorityclasses", false}},
      {"CustomResourceDefinition", {"customresourcedefinitions", false}},
      {"Queue", {"queues", false}},
      {"PodGroup", {"podgroups", true}},
      {"CompositePodGroup", {"compositepodgroups", true}},
      {"Secret", {"secrets", true}},
      {"Job", {"jobs", true}},
      {"Deployment", {"deployments", true}},
      {"PodDisruptionBudget", {"poddisruptionbudgets", true}},
      {"RayCluster", {"rayclusters", true}},
      {"ResourceFlavor", {"resourceflavors", false}},
      {"ClusterQueue", {"clusterqueues", false}},
      {"LocalQueue", {"localqueues", true}},
      {"DeviceClass", {"deviceclasses", false}},
      {"ResourceSlice", {"resourceslices", false}},
      {"ResourceClaim", {"resourceclaims", true}},
      {"ResourceClaimTemplate", {"resourceclaimtemplates", true}},
      {"NodePool", {"nodepools", false}},
      {"KWOKNodeClass", {"kwoknodeclasses", false}},
  };
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  auto it = kKinds.find(kind);
  if (api_version.empty() || it == kKinds.end()) {
    return Status::Invalid("no REST path known for apiVersion \"" + api_version + "\" kind \"" +
                           kind + "\"");
  }
  std::string path =
      (api_version.find('/') == std::string::npos ? "/api/" : "/apis/") + api_version;
  if (it->second.namespaced) {
    std::string ns = object.value("/metadata/namespace"_json_pointer, std::string("default"));
    path += "/namespaces/" + ns;
  }
  return path + "/" + it->second.plural;
}

TestEnv& TestEnv::Get() {
  return *g_env;
}

void TestEnv::SetUp() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gantry-it-XXXXXX";
  if (!mkdtemp(pattern.data())) GTEST_FAIL() << "mkdtemp " << pattern << " failed";
  dir_ = pattern;
  Status started = Script("start");
  if (!started.ok()) GTEST_FAIL() << "control plane did not start: " << started.message();
  started_ = true;
  // Should this process die without TearDown (crash, ctest timeout), a watcher in its own
  // session stops the control plane instead of leaving etcd and kube-apiserver behind.
  std::string watcher = "setsid sh -c 'while kill -0 " + std::to_string(getpid()) +
                        " 2>/dev/null; do sleep 1; done; exec \"$0\" stop \"$1\"' " +
                        Quote(kScript) + " " + Quote(dir_) + " </dev/null >/dev/null 2>&1 &";
  if (std::system(watcher.c_str()) != 0) ADD_FAILURE() << "could not start the watcher";

  auto credentials = k8s::LoadKubeconfig(kubeconfig_path());
  if (!credentials.ok()) GTEST_FAIL() << credentials.status().message();
  credentials_ = *credentials;
  k8s::ClientOptions options;
  options.timeout_s = 20;
  auto client = k8s::Client::Create(credentials_, options);
  if (!client.ok()) GTEST_FAIL() << client.status().message();
  client_ = std::move(client).value();
}

void TestEnv::TearDown() {
  client_.reset();
  if (!started_) return;
  Status stopped = Script("stop");
  if (!stopped.ok()) ADD_FAILURE() << stopped.message();
  // Keep the logs of a failed run; GANTRY_KEEP_TESTENV=1 keeps them always.
  const char* keep = std::getenv("GANTRY_KEEP_TESTENV");
  if (::testing::UnitTest::GetInstance()->Failed() || (keep && std::string(keep) == "1")) {
    std::fprintf(stderr, "control plane logs kept in %s\n", dir_.c_str());
  } else {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

Status TestEnv::Script(const std::string& command, const std::string& args) {
  std::string line = Quote(kScript) + " " + command + " " + Quote(dir_) + " " + args + " 2>&1";
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) return Status::IoError("cannot run " + line);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  int rc = pclose(pipe);
  if (rc != 0) {
    return Status::Failed("testenv.sh " + command + " " + dir_ + " failed (status " +
                          std::to_string(rc) + "):\n" + output);
  }
  return Status::Ok();
}

Status TestEnv::StartKubeScheduler(const std::string& scheduler_name) {
  if (kube_scheduler_started_) return Status::Ok();
  // With --config, kube-scheduler ignores its --kubeconfig and --leader-elect flags: the
  // file says both.
  const std::string config = dir_ + "/kube-scheduler-config.yaml";
  FILE* f = std::fopen(config.c_str(), "w");
  if (f == nullptr) return Status::IoError("cannot write " + config);
  std::fprintf(f,
               "apiVersion: kubescheduler.config.k8s.io/v1\n"
               "kind: KubeSchedulerConfiguration\n"
               "clientConnection:\n  kubeconfig: %s\n"
               "leaderElection:\n  leaderElect: false\n"
               "profiles:\n- schedulerName: %s\n",
               kubeconfig_path().c_str(), scheduler_name.c_str());
  std::fclose(f);
  GANTRY_RETURN_IF_ERROR(Script("start-scheduler", "--config=" + Quote(config)));
  kube_scheduler_started_ = true;
  return Status::Ok();
}

Status TestEnv::StartControllerManager(const std::string& controllers) {
  if (controller_manager_started_) return Status::Ok();
  GANTRY_RETURN_IF_ERROR(Script("start-controller-manager",
                                controllers.empty() ? "" : Quote("--controllers=" + controllers)));
  controller_manager_started_ = true;
  return Status::Ok();
}

Status TestEnv::StartKwok() {
  if (kwok_started_) return Status::Ok();
  GANTRY_RETURN_IF_ERROR(Script(
      "start-kwok", Quote("--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake")));
  kwok_started_ = true;
  return Status::Ok();
}

Status TestEnv::StartRayOperator(const std::string& args) {
  if (ray_operator_started_) return Status::Ok();
  GANTRY_RETURN_IF_ERROR(Script("start-ray-operator", args));
  ray_operator_started_ = true;
  return Status::Ok();
}

Status TestEnv::StartKueue(const std::string& config_yaml) {
  if (kueue_started_) return Status::Ok();
  const std::string config = dir_ + "/kueue-config-in.yaml";
  std::ofstream(config) << config_yaml;
  GANTRY_RETURN_IF_ERROR(Script("start-kueue", Quote(config)));
  kueue_started_ = true;
  return Status::Ok();
}

Status TestEnv::StartKarpenter(const std::string& instance_types_json) {
  if (karpenter_started_) return Status::Ok();
  const std::string types = dir_ + "/karpenter-instance-types.json";
  std::ofstream(types) << instance_types_json;
  GANTRY_RETURN_IF_ERROR(Script("start-karpenter", Quote(types)));
  karpenter_started_ = true;
  return Status::Ok();
}

Status TestEnv::RestartApiServer() {
  return Script("restart-apiserver");
}
Status TestEnv::StopApiServer() {
  return Script("stop-apiserver");
}
Status TestEnv::StartApiServer() {
  return Script("start-apiserver");
}

std::string TestEnv::EnvValue(const std::string& name) const {
  std::ifstream in(dir_ + "/env");
  const std::string prefix = "export " + name + "='";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0 && line.size() > prefix.size()) {
      return line.substr(prefix.size(), line.size() - prefix.size() - 1);
    }
  }
  return "";
}

Result<json> TestEnv::Call(const std::string& method, const std::string& path, const json& body,
                           const std::string& content_type) {
  auto response = client_->Request(method, path, body.is_null() ? "" : body.dump(), content_type);
  if (!response.ok()) return response.status();
  if (!response->ok()) {
    return Status::Failed(method + " " + path + ": " + response->Describe());
  }
  json decoded = json::parse(response->body, nullptr, false);
  if (decoded.is_discarded()) return Status::Failed(method + " " + path + ": answer not JSON");
  return decoded;
}

Result<std::string> TestEnv::GetText(const std::string& path) {
  auto response = client_->Request("GET", path, "", "application/json");
  if (!response.ok()) return response.status();
  if (!response->ok()) return Status::Failed("GET " + path + ": " + response->Describe());
  return response->body;
}

Status TestEnv::WaitEstablished(const std::string& crd_name) {
  const std::string path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crd_name;
  std::string collection;
  bool ready = WaitFor(
      [&] {
        auto crd = Call("GET", path);
        if (!crd.ok()) return false;
        bool established = false;
        for (const json& c : crd->value("/status/conditions"_json_pointer, json::array())) {
          established |= c.value("type", "") == "Established" && c.value("status", "") == "True";
        }
        if (!established) return false;
        // Established means served; checking the collection too keeps the next POST from
        // racing the handler's installation.
        const json& spec = (*crd)["spec"];
        collection = "/apis/" + spec.value("group", "") + "/" +
                     spec["versions"][0].value("name", "") + "/" +
                     spec["names"].value("plural", "");
        auto list = client_->Get(collection + "?limit=1");
        return list.ok() && list->ok();
      },
      std::chrono::seconds(30), std::chrono::milliseconds(50));
  if (!ready) return Status::Failed("CRD " + crd_name + " not Established after 30 s");
  return Status::Ok();
}

Result<json> TestEnv::Apply(const json& object) {
  auto path = CollectionPath(object);
  if (!path.ok()) return path.status();
  auto response = client_->Request("POST", *path, object.dump());
  if (!response.ok()) return response.status();
  const std::string kind = object.value("kind", "");
  if (response->status == 409 && kind == "Namespace") {
    return Call("GET", *path + "/" + Name(object));
  }
  if (!response->ok()) {
    return Status::Failed("POST " + *path + " (" + kind + " " + Name(object) +
                          "): " + response->Describe());
  }
  json created = json::parse(response->body, nullptr, false);
  if (kind == "CustomResourceDefinition") GANTRY_RETURN_IF_ERROR(WaitEstablished(Name(object)));
  return created;
}

Result<std::vector<json>> TestEnv::ApplyYamlFile(const std::string& path) {
  auto documents = YamlFileToJson(path);
  if (!documents.ok()) return documents.status();
  std::vector<json> created;
  for (const json& document : *documents) {
    auto result = Apply(document);
    if (!result.ok()) return result.status().WithPrefix(path);
    created.push_back(std::move(result).value());
  }
  return created;
}

Status TestEnv::EnsureGantryCrds() {
  const std::pair<const char*, const char*> crds[] = {
      {"podgroups.scheduling.volcano.sh", "scheduling.volcano.sh_podgroups.yaml"},
      {"queues.scheduling.volcano.sh", "scheduling.volcano.sh_queues.yaml"},
      {"podgroups.scheduling.x-k8s.io", "scheduling.x-k8s.io_podgroups.yaml"}};
  for (const auto& [crd, file] : crds) {
    if (Call("GET", std::string("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/") + crd)
            .ok()) {
      continue;
    }
    auto applied = ApplyYamlFile(std::string(GANTRY_SOURCE_DIR) + "/deploy/crds/" + file);
    if (!applied.ok()) return applied.status();
  }
  return Status::Ok();
}

Status TestEnv::CreateNamespace(const std::string& name) {
  auto created =
      Apply({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  return created.ok() ? Status::Ok() : created.status();
}

Result<json> TestEnv::CreateNode(const std::string& name, int gpus, const std::string& cpu,
                                 const std::string& memory,
                                 const std::map<std::string, std::string>& labels,
                                 const std::map<std::string, std::string>& annotations) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"labels", labels}, {"annotations", annotations}}}};
  node["metadata"]["labels"]["kubernetes.io/hostname"] = name;
  auto created = Call("POST", "/api/v1/nodes", node);
  if (!created.ok()) return created.status();
  json resources = {{"cpu", cpu}, {"memory", memory}, {"pods", "110"}};
  if (gpus > 0) resources["nvidia.com/gpu"] = std::to_string(gpus);
  json status = {
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
  return Call("PATCH", "/api/v1/nodes/" + name + "/status", status, "application/merge-patch+json");
}

Status TestEnv::EnsureUpstreamCrd(const std::string& crd_name, const std::string& file) {
  if (Call("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + crd_name).ok()) {
    return Status::Ok();
  }
  auto applied = ApplyYamlFile(std::string(GANTRY_SOURCE_DIR) + "/../shared/upstream-crds/" + file);
  return applied.ok() ? Status::Ok() : applied.status();
}

Result<json> TestEnv::CreatePod(const PodParams& p) {
  json requests = {{"cpu", p.cpu}, {"memory", p.memory}};
  json limits = json::object();
  if (p.gpus > 0) {
    // Extended resources cannot be overcommitted: the API wants limits equal to requests.
    requests["nvidia.com/gpu"] = std::to_string(p.gpus);
    limits["nvidia.com/gpu"] = std::to_string(p.gpus);
  }
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", p.name},
                {"namespace", p.namespace_},
                {"labels", p.labels},
                {"annotations", p.annotations}}},
              {"spec",
               {{"schedulerName", p.scheduler_name},
                {"containers",
                 {{{"name", "main"},
                   {"image", "registry.k8s.io/pause:3.10"},
                   {"resources", {{"requests", requests}, {"limits", limits}}}}}}}}};
  return Call("POST", "/api/v1/namespaces/" + p.namespace_ + "/pods", pod);
}

bool TestEnv::WaitFor(const std::function<bool()>& predicate, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds poll) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace gantry::testing
