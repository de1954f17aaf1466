// Volcano Queues (see QueueObjects), PriorityClasses and Namespaces: the queue tree jobs are
// filed under and the priorities and namespaces pods name.
#include "daemon/cluster_cache.h"

#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry {

using json = nlohmann::json;

void ClusterCache::OnQueue(k8s::EventType type, const json& object) {
  queues_.OnQueue(type, object, state_, &problems_);
}

void ClusterCache::OnPriorityClass(k8s::EventType type, const json& object) {
  auto pc = k8s::ParsePriorityClass(object);
  if (!pc.ok()) return;
  if (type == k8s::EventType::kDeleted) {
    priority_classes_.erase(pc->meta.name);
  } else {
    priority_classes_[pc->meta.name] = pc->value;
  }
  for (auto& [key, job] : jobs_) {
    const k8s::PodGroupInfo* group = GroupOf(job);
    if (group && group->priority_class_name == pc->meta.name) RefreshJob(job);
  }
}

void ClusterCache::OnNamespace(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const bool deleted = type == k8s::EventType::kDeleted;
  // Its annotation gantry.dev/queue: the queue of its jobs that name none.
  const std::string queue =
      deleted ? ""
              : k8s::String(k8s::Field(k8s::Field(object, "metadata"), "annotations"),
                            k8s::kQueueAnnotation);
  if (queues_.SetNamespaceDefault(meta->name, Bounded(queue, kMaxNameLength))) {
    std::vector<std::string> keys;
    for (const auto& [key, job] : jobs_) {
      if (job.namespace_ == meta->name) keys.push_back(key);
    }
    for (const std::string& key : keys) {
      ReconsiderHold(key);  // the queue may be one more than the limit allows
      if (auto job = jobs_.find(key); job != jobs_.end()) RefreshJob(job->second);
    }
  }
  if (deleted) {
    state_.RemoveNamespace(meta->name);
    devices_.OnNamespace(meta->name, nullptr);
    return;
  }
  Labels labels = k8s::LabelsOf(k8s::Field(k8s::Field(object, "metadata"), "labels"));
  devices_.OnNamespace(meta->name, &labels);
  state_.SetNamespaceLabels(meta->name, std::move(labels));
}

}  // namespace gantry
