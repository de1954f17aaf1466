#include "daemon/pod_groups.h"

#include <nlohmann/json.hpp>

namespace gantry {

std::string PodGroups::Key(k8s::GroupApi api, const std::string& namespace_,
                           const std::string& name) {
  const char* prefix = api == k8s::GroupApi::kCoscheduling ? "xk|"
                       : api == k8s::GroupApi::kNative     ? "k8s|"
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
  if (type == k8s::EventType::kDeleted) {
    groups_.erase(key);
    invalid_.erase(key);
    return std::nullopt;
  }
  auto group = k8s::ParsePodGroup(object, api);
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
      GroupApiVersion(api), "PodGroup", meta.namespace_, meta.name, meta.uid, "Warning",
      "InvalidPodGroup",    known};
}

const k8s::PodGroupInfo* PodGroups::Find(const std::string& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : &it->second;
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
