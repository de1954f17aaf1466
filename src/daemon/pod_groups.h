// The PodGroups the daemon has read, of its three APIs (Volcano's, scheduler-plugins',
// Kubernetes' own), by key "api|namespace/name": each as read, or why it could not be; and
// the pods of other schedulers that name a native group, which kube-scheduler's rule (one
// scheduler per group) makes the group's business. A component of the cluster cache, which
// asks it by key and is told which groups changed.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/api_requests.h"
#include "k8s/informer.h"
#include "k8s/objects.h"

namespace gantry {

class PodGroups {
 public:
  static std::string Key(k8s::GroupApi api, const std::string& namespace_, const std::string& name);
  // The key of the pod's native group; "" when it names none.
  static std::string NativeKeyOf(const k8s::PodInfo& pod);

  // Reads an event about a PodGroup of `api` whose metadata is `meta`. Returns the
  // InvalidPodGroup event to report when it cannot be read for a reason not said before.
  std::optional<ObjectEvent> On(k8s::GroupApi api, k8s::EventType type,
                                const nlohmann::json& object, const k8s::ObjectMeta& meta);
  // The group as read; nullptr when absent or invalid.
  const k8s::PodGroupInfo* Find(const std::string& key) const;
  // Why it could not be read; nullptr when it could (or is absent).
  const std::string* WhyInvalid(const std::string& key) const;
  size_t size() const { return groups_.size() + invalid_.size(); }

  // ---- CompositePodGroups' trees.
  // The groups read whose spec.parentCompositePodGroupName is `parent` in `namespace_`:
  // native PodGroups and CompositePodGroups, by kind then name. A scan of every group:
  // callers keep what they build from it until tree_version() changes.
  std::vector<const k8s::PodGroupInfo*> ChildrenOf(const std::string& namespace_,
                                                   const std::string& parent) const;
  // Changes whenever a CompositePodGroup, or a native PodGroup with a parent (before or
  // after), is read, changed or deleted.
  uint64_t tree_version() const { return tree_version_; }
  // The root CompositePodGroup of the native PodGroup `pod_group`: "" when it has no
  // parent, or a link is missing (then *missing, when given, names it in HoldReason's words).
  std::string RootOf(const std::string& ns, const std::string& pod_group,
                     std::string* missing = nullptr) const;

  // The pod `pod_key` is now of another scheduler (`scheduler`) in the native group
  // `group_key`, or in none ("" when it is ours, finished or gone). Returns the group it
  // left, when it left one ("" else).
  std::string TrackForeignPod(const std::string& pod_key, const std::string& group_key,
                              const std::string& scheduler);

  // What kube-scheduler refuses in a native group (validatePodGroup): pods naming another
  // scheduler than `ours`, or a priority (of `priorities`, over the group's pods) other than
  // the group's; in its words. "" when nothing, or the group is not a native one read.
  std::string Conflict(const std::string& key, const std::map<int32_t, int32_t>& priorities,
                       const std::string& ours) const;

 private:
  std::unordered_map<std::string, k8s::PodGroupInfo> groups_;
  std::unordered_map<std::string, std::string> invalid_;
  // Native groups' pods of other schedulers: group key -> pod key -> scheduler name; and
  // each such pod's group.
  std::unordered_map<std::string, std::map<std::string, std::string>> foreign_;
  std::unordered_map<std::string, std::string> foreign_group_of_;
  uint64_t tree_version_ = 0;
};

}  // namespace gantry
