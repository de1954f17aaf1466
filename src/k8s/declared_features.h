// NodeDeclaredFeatures (GA in Kubernetes 1.37): what a node declares and what a pod needs
// (declared_features.cc). The predicates plugin refuses a node that lacks one, as
// kube-scheduler's NodeDeclaredFeatures filter does.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace gantry::k8s {

// A node reads at most this many declared features; the rest are not declared (a pod that
// needs one is not placed there), so that a node object bounds what it costs.
inline constexpr size_t kMaxDeclaredFeatures = 256;

// The features a pod of `spec` needs, sorted.
std::vector<std::string> RequiredFeatures(const nlohmann::json& spec);
// A node object's status.declaredFeatures, sorted, each once.
std::vector<std::string> DeclaredFeatures(const nlohmann::json& node);

}  // namespace gantry::k8s
