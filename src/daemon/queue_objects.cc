#include "daemon/queue_objects.h"

#include "model/limits.h"
#include "model/queue_tree.h"

namespace gantry {

using json = nlohmann::json;

bool QueueObjects::Refused(const std::string& name, const ClusterState& state) const {
  return state.FindQueue(name) == kNone && !queues_.count(name) &&
         from_workloads_ >= kMaxQueuesFromWorkloads;
}

QueueId QueueObjects::QueueFor(const std::string& name, bool from_workload, ClusterState& state) {
  QueueId id = state.FindQueue(name);
  if (id != kNone) return id;
  auto it = queues_.find(name);
  if (from_workload && it == queues_.end()) {
    if (from_workloads_ >= kMaxQueuesFromWorkloads) return kNone;
    from_workloads_++;
  }
  Queue queue;
  queue.name = name;
  if (it != queues_.end()) {
    queue.weight = it->second.weight;
    queue.guarantee = it->second.guarantee;
    queue.capability = it->second.capability;
  }
  auto added = state.AddQueue(queue);
  if (added.ok()) return *added;
  // The queue object's limits were inconsistent: keep the queue, without them.
  Queue plain;
  plain.name = name;
  return state.AddQueue(plain).value();
}

void QueueObjects::OnQueue(k8s::EventType type, const json& object, ClusterState& state,
                           std::vector<ObjectEvent>* problems) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  k8s::QueueInfo info;
  info.meta = *meta;
  if (type != k8s::EventType::kDeleted) {
    auto parsed = k8s::ParseQueue(object);
    if (!parsed.ok()) {
      problems->push_back({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid,
                           "Warning", "InvalidQueue",
                           Bounded(parsed.status().message(), kMaxMessage)});
      return;
    }
    info = std::move(parsed).value();
    if (!info.deserved.FitsInNamed(info.capability)) {
      problems->push_back(
          {"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid, "Warning",
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
  QueueId id = QueueFor(meta->name, /*from_workload=*/false, state);
  Status st = state.UpdateQueue(id, info.weight, info.guarantee, info.capability);
  if (!st.ok()) {
    problems->push_back({"scheduling.volcano.sh/v1beta1", "Queue", "", meta->name, meta->uid,
                         "Warning", "InvalidQueue", st.message()});
  }
  if (type == k8s::EventType::kDeleted) {
    // What is left is a plain top-level queue for the jobs that still name it.
    (void)state.SetQueueTree(id, kNone, "", true, {});
    state.SetQueueUsageHalfLife(id, 0);
    state.SetQueueMovable(id, false);
    problems_said_.erase(meta->name);
  }
  Relink(state, problems);
}

void QueueObjects::Relink(ClusterState& state, std::vector<ObjectEvent>* problems) {
  for (const auto& [name, info] : queues_) {
    const QueueId id = state.FindQueue(name);
    if (id == kNone) continue;
    QueueId parent = kNone;
    std::string missing;
    if (!info.parent.empty()) {
      parent = queues_.count(info.parent) ? state.FindQueue(info.parent) : kNone;
      if (parent == kNone && info.parent != "root") missing = info.parent;
    }
    // A deserved amount that does not fit the capability the queue has now (its update was
    // refused, and reported, by UpdateQueue) is left out.
    if (!state.SetQueueTree(id, parent, missing, info.reclaimable, info.deserved).ok()) {
      (void)state.SetQueueTree(id, parent, missing, info.reclaimable, {});
    }
    state.SetQueueUsageHalfLife(id, info.usage_half_life_s);
    state.SetQueueMovable(id, info.movable);
  }
  const QueueTree tree = BuildQueueTree(state.queues());
  for (const auto& [name, info] : queues_) {
    const QueueId id = state.FindQueue(name);
    if (id == kNone) continue;
    std::string& reported = problems_said_[name];
    if (reported == tree.problem[id]) continue;
    reported = tree.problem[id];
    if (!reported.empty()) {
      problems->push_back({"scheduling.volcano.sh/v1beta1", "Queue", "", name, info.meta.uid,
                           "Warning", "InvalidQueue", Bounded(reported, kMaxMessage)});
    }
  }
}

bool QueueObjects::SetNamespaceDefault(const std::string& namespace_, const std::string& queue) {
  auto it = namespace_defaults_.find(namespace_);
  if (queue.empty()) {
    if (it == namespace_defaults_.end()) return false;
    namespace_defaults_.erase(it);
    return true;
  }
  if (it != namespace_defaults_.end() && it->second == queue) return false;
  namespace_defaults_[namespace_] = queue;
  return true;
}

const std::string* QueueObjects::NamespaceDefault(const std::string& namespace_) const {
  auto it = namespace_defaults_.find(namespace_);
  return it == namespace_defaults_.end() ? nullptr : &it->second;
}

}  // namespace gantry
