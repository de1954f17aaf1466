#include "tests/integration/operators/operators.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "tests/integration/testenv.h"

namespace gantry::testing {

using json = nlohmann::json;

Status StartControllersAndKwok() {
  GANTRY_RETURN_IF_ERROR(TestEnv::Get().StartControllerManager(kWorkloadControllers));
  return TestEnv::Get().StartKwok();
}

Result<std::string> OperatorsDir() {
  const char* dir = std::getenv("GANTRY_OPERATORS_DIR");
  if (dir != nullptr && *dir != '\0') return std::string(dir);
  const std::string script = std::string(GANTRY_SOURCE_DIR) + "/scripts/k8s/build-operators.sh";
  FILE* pipe = popen(("'" + script + "' 2>/dev/null | tail -1").c_str(), "r");
  if (pipe == nullptr) return Status::IoError("cannot run " + script);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int rc = pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (rc != 0 || out.empty() || !std::filesystem::is_directory(out)) {
    return Status::Failed(script + " failed (status " + std::to_string(rc) + ")");
  }
  return out;
}

Status EnsureCrdsIn(const std::string& dir, const std::function<void(json&)>& edit) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  if (error || files.empty()) return Status::IoError(dir + ": no CRD files");
  std::sort(files.begin(), files.end());
  TestEnv& env = TestEnv::Get();
  const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  // Created all first, then waited for together: the server takes seconds to establish a
  // CRD of KubeRay's size, and establishes them side by side.
  std::vector<std::pair<std::string, std::string>> created;  // name, collection
  for (const std::string& file : files) {
    auto documents = YamlFileToJson(file);
    if (!documents.ok()) return documents.status();
    for (json& crd : *documents) {
      const std::string name = crd.value("/metadata/name"_json_pointer, std::string());
      if (env.Call("GET", crds + "/" + name).ok()) continue;
      if (edit) edit(crd);
      auto applied = env.Call("POST", crds, crd);
      if (!applied.ok()) return applied.status().WithPrefix(file);
      const json& spec = crd["spec"];
      std::string version;
      for (const json& v : spec.value("versions", json::array())) {
        if (v.value("storage", false)) version = v.value("name", "");
      }
      created.emplace_back(name, "/apis/" + spec.value("group", "") + "/" + version + "/" +
                                     spec["names"].value("plural", "") + "?limit=1");
    }
  }
  for (const auto& [name, collection] : created) {
    const bool served = TestEnv::WaitFor(
        [&] {
          auto crd = env.Call("GET", crds + "/" + name);
          return crd.ok() && Condition(*crd, "Established") == "True" &&
                 env.Call("GET", collection).ok();
        },
        std::chrono::seconds(120), std::chrono::milliseconds(100));
    if (!served) return Status::Failed("CRD " + name + " not served after 120 s");
  }
  return Status::Ok();
}

Status CreateNodes(const std::string& test, int first, int count, int gpus, bool kwok) {
  std::map<std::string, std::string> annotations;
  if (kwok) annotations["kwok.x-k8s.io/node"] = "fake";
  for (int i = first; i < first + count; ++i) {
    auto node = TestEnv::Get().CreateNode(test + "-node-" + std::to_string(i), gpus, "32", "256Gi",
                                          {{"gantry-test", test}}, annotations);
    if (!node.ok()) return node.status();
  }
  return Status::Ok();
}

std::vector<json> PodsIn(const std::string& ns, const std::string& selector) {
  std::string path = "/api/v1/namespaces/" + ns + "/pods";
  if (!selector.empty()) path += "?labelSelector=" + selector;
  auto list = TestEnv::Get().Call("GET", path);
  if (!list.ok()) return {};
  return (*list)["items"].get<std::vector<json>>();
}

json Get(const std::string& path) {
  auto object = TestEnv::Get().Call("GET", path);
  return object.ok() && object->is_object() ? *object : json::object();
}

std::string Condition(const json& object, const std::string& type) {
  for (const json& c : object.value("/status/conditions"_json_pointer, json::array())) {
    if (c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

std::string NodeName(const json& pod) {
  return pod.value("/spec/nodeName"_json_pointer, std::string());
}

json Container(const std::string& name, const std::string& cpu, int gpus) {
  json requests = {{"cpu", cpu}, {"memory", "1Gi"}};
  json limits = json::object();
  if (gpus > 0) {
    requests["nvidia.com/gpu"] = std::to_string(gpus);
    limits["nvidia.com/gpu"] = std::to_string(gpus);
  }
  return {{"name", name},
          {"image", "registry.k8s.io/pause:3.10"},
          {"resources", {{"requests", requests}, {"limits", limits}}}};
}

}  // namespace gantry::testing
