// NodeDeclaredFeatures (GA in Kubernetes 1.37): the features a node's kubelet declares
// (status.declaredFeatures) and those a pod needs, inferred from its spec as
// component-helpers' nodedeclaredfeatures registry infers them for scheduling (v0.37.2:
// only RestartAllContainersOnContainerExits, UserNamespacesHostNetworkSupport and
// VolumeBindMountOptions say anything at scheduling; the resize features speak only of
// updates).
#include "k8s/declared_features.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// Whether any container of the lists has a field that `uses` says needs the feature.
template <typename Uses>
bool AnyContainer(const json& spec, Uses uses) {
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    const json& containers = Field(spec, list);
    for (size_t i = 0; containers.is_array() && i < containers.size(); ++i) {
      if (uses(containers[i])) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> RequiredFeatures(const json& spec) {
  std::vector<std::string> out;
  // restartallcontainers: a rule of containers or init containers (not ephemeral ones,
  // which cannot have rules) whose action restarts them all.
  const bool restart_all = AnyContainer(spec, [](const json& c) {
    const json& rules = Field(c, "restartPolicyRules");
    for (size_t i = 0; rules.is_array() && i < rules.size(); ++i) {
      if (String(rules[i], "action") == "RestartAllContainers") return true;
    }
    return false;
  });
  if (restart_all) out.push_back("RestartAllContainersOnContainerExits");
  // usernamespaceshostnetwork: the host network without the host's user namespace.
  const json& host_network = Field(spec, "hostNetwork");
  const json& host_users = Field(spec, "hostUsers");
  if (host_network.is_boolean() && host_network.get<bool>() && host_users.is_boolean() &&
      !host_users.get<bool>()) {
    out.push_back("UserNamespacesHostNetworkSupport");
  }
  // volumebindmountoptions: a volume mount with bind mount options.
  const bool bind_options = AnyContainer(spec, [](const json& c) {
    const json& mounts = Field(c, "volumeMounts");
    for (size_t i = 0; mounts.is_array() && i < mounts.size(); ++i) {
      const json& options = Field(mounts[i], "bindMountOptions");
      if (options.is_array() && !options.empty()) return true;
    }
    return false;
  });
  if (bind_options) out.push_back("VolumeBindMountOptions");
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> DeclaredFeatures(const json& node) {
  std::vector<std::string> out;
  const json& declared = Field(Field(node, "status"), "declaredFeatures");
  for (size_t i = 0; declared.is_array() && i < declared.size(); ++i) {
    // The API server holds the list to feature names; anything else is no feature.
    if (!declared[i].is_string()) continue;
    const std::string& name = declared[i].get_ref<const std::string&>();
    if (!name.empty() && name.size() <= kMaxNameLength) out.push_back(name);
    if (out.size() >= kMaxDeclaredFeatures) break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gantry::k8s
