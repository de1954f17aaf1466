// Preempt, reclaim and defragment in the daemon's cluster cache: PodDisruptionBudgets into the
// model, the evictions and nominated nodes a session decided (the EvictionTracker remembers
// what is in flight and what was written), and what the API server answered.
#include <set>

#include "daemon/cluster_cache.h"
#include "engine/eviction_memory.h"
#include "k8s/json_fields.h"
#include "k8s/pod_rules.h"

namespace gantry {

void ClusterCache::OnDisruptionBudget(k8s::EventType type, const nlohmann::json& object) {
  auto meta = k8s::NamedMeta(object, "poddisruptionbudget");
  if (!meta.ok()) return;
  const std::string key = meta->Key();
  if (type == k8s::EventType::kDeleted) {
    budgets_.erase(key);
  } else {
    DisruptionBudget budget;
    budget.name = key;
    budget.namespace_ = meta->namespace_;
    const nlohmann::json& spec = k8s::Field(object, "spec");
    Status read = k8s::ParseLabelSelector(spec, "selector", "poddisruptionbudget " + key + ": spec",
                                          &budget.selector);
    if (!read.ok()) {
      // Which pods it covers is unknown: covering all of its namespace is the safe reading
      // (the Eviction API has the last word anyway).
      budget.selector = LabelSelector{};
      Problem({"policy/v1", "PodDisruptionBudget", meta->namespace_, meta->name, meta->uid,
               "Warning", "UnreadableSelector",
               Bounded(read.message(), kMaxMessage) +
                   "; gantry evicts no pod of its namespace while it is so"});
    }
    const nlohmann::json& status = k8s::Field(object, "status");
    const nlohmann::json& metadata = k8s::Field(object, "metadata");
    const nlohmann::json& allowed = k8s::Field(status, "disruptionsAllowed");
    const nlohmann::json& observed = k8s::Field(status, "observedGeneration");
    const nlohmann::json& generation = k8s::Field(metadata, "generation");
    const bool current =
        !generation.is_number_integer() ||
        (observed.is_number_integer() && observed.get<int64_t>() >= generation.get<int64_t>());
    if (current && allowed.is_number_integer()) {
      budget.disruptions_allowed =
          static_cast<int32_t>(std::clamp<int64_t>(allowed.get<int64_t>(), 0, INT32_MAX));
    }
    if (!read.ok()) budget.disruptions_allowed = 0;
    budgets_[key] = std::move(budget);
  }
  std::vector<DisruptionBudget> all;
  all.reserve(budgets_.size());
  for (const auto& [k, b] : budgets_) all.push_back(b);
  state_.SetDisruptionBudgets(std::move(all));
}

std::vector<EvictRequest> ClusterCache::TakeEvictions(const Decisions& decisions, int64_t now) {
  std::vector<EvictRequest> out;
  std::set<std::string> groups_told;  // native PodGroups whose first eviction says so
  for (const EvictDecision& e : decisions.evictions) {
    if (e.task >= pod_of_task_.size()) continue;
    auto it = pods_.find(pod_of_task_[e.task]);
    if (it == pods_.end()) continue;
    const PodRecord& pod = it->second;
    if (pod.evicted || pod.info.meta.deleting || !evictions_.Start(it->first)) continue;
    // Remembered from the decision on, refused or not (pod_of_task_ names the pod whose task
    // it is: the task is the decision's).
    RememberEviction(state_, e, now);
    out.push_back({pod.info.meta.namespace_, pod.info.meta.name, pod.info.meta.uid,
                   Bounded(e.reason, kMaxMessage), e.cause, ""});
    if (std::string group = PodGroups::NativeKeyOf(pod.info);
        !group.empty() && groups_told.insert(group).second) {
      out.back().native_group = pod.info.group;
    }
  }
  return out;
}

bool ClusterCache::EvictionDone(const EvictRequest& request, bool evicted) {
  auto it = pods_.find(request.namespace_ + "/" + request.name);
  if (it == pods_.end() || it->second.info.meta.uid != request.uid) return false;
  PodRecord& pod = it->second;
  const bool first_refusal = evictions_.Done(it->first, evicted);
  if (evicted) {
    pod.evicted = true;
    if (pod.task != kNone) state_.SetReleasing(pod.task, true);
  }
  return first_refusal;
}

std::vector<NominatedNode> ClusterCache::Nominations(const Decisions& decisions) {
  std::vector<NominatedNode> out;
  for (const PipelineDecision& p : decisions.pipelined) {
    if (p.task >= pod_of_task_.size() || p.node >= state_.nodes().size()) continue;
    auto it = pods_.find(pod_of_task_[p.task]);
    if (it == pods_.end()) continue;
    const PodRecord& pod = it->second;
    const std::string& node = state_.node(p.node).name;
    if (!evictions_.Nominate(it->first, node)) continue;
    out.push_back({pod.info.meta.namespace_, pod.info.meta.name, node});
  }
  return out;
}

}  // namespace gantry
