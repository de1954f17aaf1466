// Volcano Queues, PriorityClasses and Namespaces: the queue tree jobs are filed under and
// the priorities and namespaces pods name; queues made for the names workloads give.
#include "daemon/cluster_cache.h"

#include <algorithm>

#include "k8s/json_fields.h"
#include "model/limits.h"
#include "model/queue_tree.h"

namespace gantry {

using json = nlohmann::json;

bool ClusterCache::QueueRefused(const std::string& name) const {
  return state_.FindQueue(name) == kNone && !queues_.count(name) &&
         queues_from_workloads_ >= kMaxQueuesFromWorkloads;
}

QueueId ClusterCache::QueueFor(const std::string& name, bool from_workload) {
  QueueId id = state_.FindQueue(name);
  if (id != kNone) return id;
  auto it = queues_.find(name);
  if (from_workload && it == queues_.end()) {
    if (queues_from_workloads_ >= kMaxQueuesFromWorkloads) return kNone;
    queues_from_workloads_++;
  }
  Queue queue;
  queue.name = name;
  if (it != queues_.end()) {
    queue.weight = it->second.weight;
    queue.guarantee = it->second.guarantee;
    queue.capability = it->second.capability;
  }
  auto added = state_.AddQueue(queue);
  if (added.ok()) return *added;
  // The queue object's limits were inconsistent: keep the queue, without them.
  Queue plain;
  plain.name = name;
  return state_.AddQueue(plain).value();
}

void ClusterCache::OnQueue(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  k8s::QueueInfo info;
  info.meta = *meta;
  if (type != k8s::EventType::kDeleted) {
    auto parsed = k8s::ParseQueue(object);
    if (!parsed.ok()) {
      Problem({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid, "Warning",
               "InvalidQueue", Bounded(parsed.status().message(), kMaxMessage)});
      return;
    }
    info = std::move(parsed).value();
    if (!info.deserved.FitsInNamed(info.capability)) {
      Problem({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid, "Warning",
               "InvalidQueue",
               Bounded("queue " + meta->name + ": spec.deserved (" + info.deserved.ToString() +
                           ") exceeds spec.capability (" + info.capability.ToString() +
                           "); the queue is shared by weight instead",
                       kMaxMessage)});
      info.deserved = {};
    }
    queues_[meta->name] = info;
  } else {
    queues_.erase(meta->name);
  }
  QueueId id = QueueFor(meta->name, /*from_workload=*/false);
  Status st = state_.UpdateQueue(id, info.weight, info.guarantee, info.capability);
  if (!st.ok()) {
    Problem({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid, "Warning",
             "InvalidQueue", st.message()});
  }
  if (type == k8s::EventType::kDeleted) {
    // What is left is a plain top-level queue for the jobs that still name it.
    (void)state_.SetQueueTree(id, kNone, "", true, {});
    state_.SetQueueUsageHalfLife(id, 0);
    state_.SetQueueMovable(id, false);
    queue_problems_.erase(meta->name);
  }
  RelinkQueues();
}

void ClusterCache::RelinkQueues() {
  for (const auto& [name, info] : queues_) {
    const QueueId id = state_.FindQueue(name);
    if (id == kNone) continue;
    QueueId parent = kNone;
    std::string missing;
    if (!info.parent.empty()) {
      parent = queues_.count(info.parent) ? state_.FindQueue(info.parent) : kNone;
      if (parent == kNone && info.parent != "root") missing = info.parent;
    }
    // A deserved amount that does not fit the capability the queue has now (its update was
    // refused, and reported, by UpdateQueue) is left out.
    if (!state_.SetQueueTree(id, parent, missing, info.reclaimable, info.deserved).ok()) {
      (void)state_.SetQueueTree(id, parent, missing, info.reclaimable, {});
    }
    state_.SetQueueUsageHalfLife(id, info.usage_half_life_s);
    state_.SetQueueMovable(id, info.movable);
  }
  const QueueTree tree = BuildQueueTree(state_.queues());
  for (const auto& [name, info] : queues_) {
    const QueueId id = state_.FindQueue(name);
    if (id == kNone) continue;
    std::string& reported = queue_problems_[name];
    if (reported == tree.problem[id]) continue;
    reported = tree.problem[id];
    if (!reported.empty()) {
      Problem({"scheduling.volcano.sh/v1beta1", "Queue", "", name, info.meta.uid, "Warning",
               "InvalidQueue", Bounded(reported, kMaxMessage)});
    }
  }
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
  if (type == k8s::EventType::kDeleted) {
    state_.RemoveNamespace(meta->name);
    devices_.OnNamespace(meta->name, nullptr);
    return;
  }
  Labels labels = k8s::LabelsOf(k8s::Field(k8s::Field(object, "metadata"), "labels"));
  devices_.OnNamespace(meta->name, &labels);
  state_.SetNamespaceLabels(meta->name, std::move(labels));
}

}  // namespace gantry
