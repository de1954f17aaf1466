// The integration tests' control plane: one etcd + kube-apiserver (scripts/k8s/testenv.sh)
// per test binary, started before the first test and stopped after the last, with a
// Client for it and helpers to create what tests need (nodes with GPUs, pods, objects from
// YAML files, CRDs). Tests share the server, so each works in names of its own
// (a namespace, a lease name) and never assumes an otherwise empty cluster.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/client.h"
#include "k8s/credentials.h"
#include "model/status.h"

namespace gantry::testing {

struct PodParams {
  std::string namespace_ = "default";
  std::string name;
  std::string scheduler_name = "gantry";
  std::string cpu = "100m";
  std::string memory = "128Mi";
  int gpus = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

class TestEnv : public ::testing::Environment {
 public:
  // The environment of this test binary; valid while tests run.
  static TestEnv& Get();

  void SetUp() override;
  void TearDown() override;

  // The folder testenv.sh works in (kubeconfig, env, logs).
  const std::string& dir() const { return dir_; }
  std::string kubeconfig_path() const { return dir_ + "/kubeconfig"; }
  // A value from DIR/env, e.g. "GANTRY_ETCD_URL"; "" when absent.
  std::string EnvValue(const std::string& name) const;
  const k8s::Credentials& credentials() const { return credentials_; }
  k8s::Client& client() { return *client_; }

  // The upstream kube-scheduler beside the server, once per test binary (later calls do
  // nothing), with one profile named `scheduler_name` (so that it takes only pods that ask
  // for it: other tests' pods with default-scheduler stay theirs). Stopped with the server.
  Status StartKubeScheduler(const std::string& scheduler_name);
  // kube-controller-manager with only its PV controller, which binds claims and finishes
  // the bindings a scheduler starts; or with `controllers` (its --controllers list, e.g.
  // "job-controller,deployment-controller") when not empty. Once per binary: later calls
  // do nothing, whatever they ask.
  Status StartControllerManager(const std::string& controllers = "");
  // kwok, managing only the nodes annotated kwok.x-k8s.io/node=fake (CreateNode's
  // `annotations`): it makes pods bound to them Running, completes those of Jobs and
  // finishes their deletion, as kubelets would (once; later calls do nothing).
  Status StartKwok();
  // KubeRay's operator (scripts/k8s/build-operators.sh) with `args`, once per binary.
  Status StartRayOperator(const std::string& args);
  // Kueue's controller manager with a Configuration (YAML) without health, webhook and
  // metrics sections (testenv.sh adds them), once per binary.
  Status StartKueue(const std::string& config_yaml);
  // Karpenter with its kwok cloud provider, offering the instance types of
  // `instance_types_json` (Karpenter's kwok InstanceTypeOptions list), once per binary.
  Status StartKarpenter(const std::string& instance_types_json);

  // kube-apiserver alone; etcd and its data stay. Same port, same certificate.
  Status RestartApiServer();
  Status StopApiServer();
  Status StartApiServer();

  // Sends a request and returns the decoded answer; an error, naming the request, for
  // anything but 2xx.
  Result<nlohmann::json> Call(const std::string& method, const std::string& path,
                              const nlohmann::json& body = nullptr,
                              const std::string& content_type = "application/json");
  // GET of a text answer (the API server's /metrics); an error for anything but 2xx.
  Result<std::string> GetText(const std::string& path);

  // Creates every document of a YAML file, in order; after a CustomResourceDefinition
  // waits until it is Established. A Namespace that exists already is fine (example
  // files share them); any other conflict is an error. Returns the created objects.
  Result<std::vector<nlohmann::json>> ApplyYamlFile(const std::string& path);
  // The same for one object (already JSON).
  Result<nlohmann::json> Apply(const nlohmann::json& object);
  // Applies the CRDs Gantry ships (deploy/crds/) that the server does not have yet: tests
  // sharing a server call it each, in any order.
  Status EnsureGantryCrds();
  // Applies an upstream CRD (../shared/upstream-crds/FILE, reference data left there)
  // unless the server has the CRD named `crd_name` already.
  Status EnsureUpstreamCrd(const std::string& crd_name, const std::string& file);

  // A Node with `gpus` nvidia.com/gpu, then its status (capacity = allocatable, Ready)
  // through the status subresource, as kube-scheduler's integration tests do.
  Result<nlohmann::json> CreateNode(const std::string& name, int gpus, const std::string& cpu,
                                    const std::string& memory,
                                    const std::map<std::string, std::string>& labels = {},
                                    const std::map<std::string, std::string>& annotations = {});
  Result<nlohmann::json> CreatePod(const PodParams& params);
  Status CreateNamespace(const std::string& name);

  // Polls `predicate` every `poll` until it holds (true) or `timeout` passes (false).
  static bool WaitFor(const std::function<bool()>& predicate, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds poll = std::chrono::milliseconds(20));

 private:
  // testenv.sh COMMAND DIR ARGS (ARGS already quoted for the shell).
  Status Script(const std::string& command, const std::string& args = "");
  Status WaitEstablished(const std::string& crd_name);

  std::string dir_;
  bool started_ = false;
  bool kube_scheduler_started_ = false;
  bool controller_manager_started_ = false;
  bool kwok_started_ = false;
  bool ray_operator_started_ = false;
  bool kueue_started_ = false;
  bool karpenter_started_ = false;
  k8s::Credentials credentials_;
  std::unique_ptr<k8s::Client> client_;
};

// YAML (yaml-cpp) to JSON with YAML 1.2 core-schema scalars: plain true/false, null,
// integers and floats become JSON values; quoted scalars stay strings.
// Empty documents are left out.
Result<std::vector<nlohmann::json>> YamlFileToJson(const std::string& path);

// The REST collection of an object from its apiVersion, kind and namespace, e.g.
// "/api/v1/namespaces/ml/pods"; an error for kinds the tests do not know.
Result<std::string> CollectionPath(const nlohmann::json& object);

// The `field` ("message", "reason") of a pod's PodScheduled=False condition, "" when it has
// none.
inline std::string PodScheduledField(const nlohmann::json& pod, const char* field) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return "";
  for (const nlohmann::json& c : pod["status"]["conditions"]) {
    if (c["type"] == "PodScheduled" && c["status"] == "False") return c.value(field, "");
  }
  return "";
}
inline std::string PodScheduledMessage(const nlohmann::json& pod) {
  return PodScheduledField(pod, "message");
}

}  // namespace gantry::testing
