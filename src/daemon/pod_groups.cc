#include "daemon/pod_groups.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace gantry {

std::string PodGroups::Key(k8s::GroupApi api, const std::string& namespace_,
                           const std::string& name) {
  const char* prefix = api == k8s::GroupApi::kCoscheduling ? "xk|"
                       : api == k8s::GroupApi::kNative     ? "k8s|"
                       : api == k8s::GroupApi::kComposite  ? "cpg|"
                                                           : "vc|";
  return prefix + namespace_ + "/" + name;
}

std::string PodGroups::NativeKeyOf(const k8s::PodInfo& pod) {
  if (pod.group_api != k8s::GroupApi::kNative) return "";
  return Key(k8s::GroupApi::kNative, pod.meta.namespace_, pod.group);
}

std::optional<ObjectEvent> PodGroups::On(k8s::GroupApi api, k8s::EventType type,
                                         const nlohmann::json& object,
                                         const k8s::ObjectMeta& meta) {
  const std::string key = Key(api, meta.namespace_, meta.name);
  if (const k8s::PodGroupInfo* old = Find(key);
      api == k8s::GroupApi::kComposite || (old != nullptr && !old->parent.empty())) {
    ++tree_version_;
  }
  if (type == k8s::EventType::kDeleted) {
    groups_.erase(key);
    invalid_.erase(key);
    return std::nullopt;
  }
  auto group = k8s::ParsePodGroup(object, api);
  if (group.ok() && !group->parent.empty()) ++tree_version_;
  if (group.ok()) {
    groups_[key] = std::move(group).value();
    invalid_.erase(key);
    return std::nullopt;
  }
  groups_.erase(key);
  std::string message = Bounded(group.status().message(), kMaxMessage);
  std::string& known = invalid_[key];
  if (known == message) return std::nullopt;
  known = message;
  return ObjectEvent{
      GroupApiVersion(api), GroupKind(api), meta.namespace_, meta.name, meta.uid, "Warning",
      "InvalidPodGroup",    known};
}

const k8s::PodGroupInfo* PodGroups::Find(const std::string& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : &it->second;
}

std::vector<const k8s::PodGroupInfo*> PodGroups::ChildrenOf(const std::string& namespace_,
                                                            const std::string& parent) const {
  std::vector<const k8s::PodGroupInfo*> out;
  for (const auto& [key, group] : groups_) {
    if (group.parent == parent && group.meta.namespace_ == namespace_ &&
        (group.api == k8s::GroupApi::kNative || group.api == k8s::GroupApi::kComposite)) {
      out.push_back(&group);
    }
  }
  std::sort(out.begin(), out.end(), [](const k8s::PodGroupInfo* a, const k8s::PodGroupInfo* b) {
    return std::pair(a->api, a->meta.name) < std::pair(b->api, b->meta.name);
  });
  return out;
}

std::string PodGroups::RootOf(const std::string& ns, const std::string& pod_group,
                              std::string* missing) const {
  const k8s::PodGroupInfo* group = Find(Key(k8s::GroupApi::kNative, ns, pod_group));
  if (group == nullptr || group->parent.empty()) return "";
  std::string name = group->parent;
  // Four levels at most, as kube-scheduler allows: a longer chain is a cycle or too deep.
  for (int depth = 1; depth < kMaxGroupTreeDepth; ++depth) {
    const std::string key = Key(k8s::GroupApi::kComposite, ns, name);
    const k8s::PodGroupInfo* parent = Find(key);
    if (parent == nullptr) {
      if (missing != nullptr) {
        const std::string* bad = WhyInvalid(key);
        *missing = "CompositePodGroup " + ns + "/" + name + " (scheduling.k8s.io/v1alpha3) " +
                   (bad ? "is invalid: " + *bad : std::string("does not exist yet"));
      }
      return "";
    }
    if (parent->parent.empty()) return name;
    name = parent->parent;
  }
  if (missing != nullptr) {
    *missing = "PodGroup " + ns + "/" + pod_group + ": its CompositePodGroups form a cycle " +
               "or are deeper than " + std::to_string(kMaxGroupTreeDepth) + " levels";
  }
  return "";
}

const std::string* PodGroups::WhyInvalid(const std::string& key) const {
  auto it = invalid_.find(key);
  return it == invalid_.end() ? nullptr : &it->second;
}

std::string PodGroups::TrackForeignPod(const std::string& pod_key, const std::string& group_key,
                                       const std::string& scheduler) {
  std::string left;
  if (auto was = foreign_group_of_.find(pod_key); was != foreign_group_of_.end()) {
    if (was->second == group_key) {
      foreign_[group_key][pod_key] = scheduler;
      return "";
    }
    left = was->second;
    auto pods = foreign_.find(left);
    if (pods != foreign_.end() && pods->second.erase(pod_key) && pods->second.empty()) {
      foreign_.erase(pods);
    }
    foreign_group_of_.erase(was);
  }
  if (!group_key.empty()) {
    foreign_[group_key][pod_key] = scheduler;
    foreign_group_of_[pod_key] = group_key;
  }
  return left;
}

std::string PodGroups::Conflict(const std::string& key,
                                const std::map<int32_t, int32_t>& priorities,
                                const std::string& ours) const {
  const k8s::PodGroupInfo* group = Find(key);
  if (!group || group->api != k8s::GroupApi::kNative) return "";
  const std::string name = "PodGroup " + group->meta.Key();
  if (auto foreign = foreign_.find(key); foreign != foreign_.end() && !foreign->second.empty()) {
    const auto& [pod, scheduler] = *foreign->second.begin();
    return name + ": all pods in a single pod group should have the same .spec.schedulerName " +
           "set, got: \"" + Bounded(scheduler, 100) + "\" (pod " + pod + ") and \"" + ours + "\"";
  }
  const int32_t priority = group->priority.value_or(0);
  for (const auto& [pod_priority, count] : priorities) {
    if (pod_priority == priority) continue;
    return name + ": all pods in a single pod group should have the same priority as the pod " +
           "group's priority, got " + std::to_string(pod_priority) + " and " +
           std::to_string(priority);
  }
  return "";
}

}  // namespace gantry
