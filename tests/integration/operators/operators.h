// Helpers of the operator tests (tests/integration/operators/): the controllers and kwok
// beside the test server, nodes for a test, and reading back what the controllers made.
// Each test works in a namespace of its own, on nodes labelled gantry-test=<namespace>, with
// a daemon of its own, so that the tests of this binary stay out of each other's way.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/status.h"

namespace gantry::testing {

// kube-controller-manager's controllers these tests need (its --controllers names); the
// resourceclaim controller makes claims from templates, a PodGroup's included.
inline constexpr const char* kWorkloadControllers =
    "job-controller,deployment-controller,replicaset-controller,statefulset-controller,"
    "garbage-collector-controller,disruption-controller,resourceclaim-controller";

// kube-controller-manager with kWorkloadControllers, and kwok (both once per binary).
Status StartControllersAndKwok();

// The folder scripts/k8s/build-operators.sh fills (bin/, share/crds/): $GANTRY_OPERATORS_DIR
// when set, else what the script prints (it builds on first use).
Result<std::string> OperatorsDir();

// Applies every CRD file in `dir` (*.yaml) whose CRD the server does not have yet, each
// changed by `edit` first (when given).
Status EnsureCrdsIn(const std::string& dir,
                    const std::function<void(nlohmann::json&)>& edit = nullptr);

// `count` nodes "<test>-node-<i>" with `gpus` GPUs each, 32 CPUs and 256Gi, labelled
// gantry-test=<test>; kwok manages them when `kwok` (it makes their pods Running).
Status CreateNodes(const std::string& test, int first, int count, int gpus, bool kwok);

// The pods of a namespace (with a label selector when not empty); empty on error.
std::vector<nlohmann::json> PodsIn(const std::string& ns, const std::string& selector = "");
// An object by its path; an empty object when it cannot be read.
nlohmann::json Get(const std::string& path);
// The status condition `type` of an object ("True", "False", or "" when absent).
std::string Condition(const nlohmann::json& object, const std::string& type);
// The node a pod is bound to; "" when it is not bound.
std::string NodeName(const nlohmann::json& pod);

// The shape of a container: requests (and limits, for GPUs, as the API wants) of `cpu`,
// 1Gi of memory and `gpus` GPUs.
nlohmann::json Container(const std::string& name, const std::string& cpu, int gpus);

}  // namespace gantry::testing
