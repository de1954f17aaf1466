// What the daemon's cluster cache reports after a session: it walks the pods of the jobs
// that changed (and of the session's pending jobs) and hands the StatusReporter each waiting
// pod's reason and each PodGroup's counts; the reporter decides what is new to write.
#include "daemon/cluster_cache.h"

#include <unordered_map>

namespace gantry {
namespace {

// The PodScheduled=False reason for what holds a job (api_requests.h).
const char* ConditionReasonOf(PendingHold hold) {
  switch (hold) {
    case PendingHold::kQueueLimit:
      return kQueueLimitReason;
    case PendingHold::kGang:
      return kPodGroupNotReadyReason;
    case PendingHold::kNone:
      break;
  }
  return kUnschedulableReason;
}

}  // namespace

void ClusterCache::CollectStatus(const Decisions& decisions, std::vector<PodCondition>* conditions,
                                 std::vector<GroupStatus>* groups,
                                 std::vector<ObjectEvent>* events) {
  const StatusWrites out{conditions, groups, events};
  std::unordered_map<JobId, const PendingJob*> pending;
  for (const PendingJob& p : decisions.pending) {
    pending[p.job] = &p;
    if (p.job < job_of_id_.size() && !job_of_id_[p.job].empty()) {
      status_.MarkChanged(job_of_id_[p.job]);
    }
  }
  const std::string refused_note = RefusedNodesNote();
  const std::set<std::string> keys = status_.TakeChanged();
  for (const std::string& job_key : keys) {
    auto found = jobs_.find(job_key);
    if (found == jobs_.end()) continue;
    JobRecord& job = found->second;
    if (!job.ours) continue;
    PendingHold hold = PendingHold::kNone;
    std::string reason = HoldReason(job, &hold);
    if (reason.empty() && job.id != kNone) {
      auto p = pending.find(job.id);
      if (p != pending.end()) {
        reason = Bounded(p->second->reason, kMaxMessage) + refused_note;
        hold = p->second->hold;
      }
    }
    const char* held_reason = ConditionReasonOf(hold);
    GroupStatus counts;
    std::vector<int32_t> placed_per_leaf(job.tree.size(), 0);  // a CompositePodGroup's
    for (const std::string& key : job.pods) {
      pod_records_visited_++;
      auto it = pods_.find(key);
      if (it == pods_.end()) continue;
      const PodRecord& pod = it->second;
      const k8s::PodInfo& info = pod.info;
      if (info.phase == "Succeeded") counts.succeeded++;
      if (info.phase == "Failed") counts.failed++;
      if (!info.node_name.empty() && !info.finished()) counts.running++;
      if (!info.node_name.empty() || pod.assumed) {
        counts.placed++;
        if (auto leaf = job.leaf_of.find(info.group); leaf != job.leaf_of.end()) {
          placed_per_leaf[static_cast<size_t>(leaf->second)]++;
        }
      }
      bool waiting =
          info.node_name.empty() && !pod.assumed && !info.meta.deleting && !info.finished();
      // A gated pod says so, as kube-scheduler does. A pod that cannot be scheduled as
      // written says why, whatever its job's state.
      const bool gated = !info.scheduling_gates.empty();
      const bool own_problem = !pod.problem.empty() || !pod.resolve_problem.empty();
      const std::string& message = gated                  ? std::string(kSchedulingGatedMessage)
                                   : !pod.problem.empty() ? pod.problem
                                   : !pod.resolve_problem.empty() ? pod.resolve_problem
                                                                  : reason;
      if (!waiting || message.empty()) continue;
      status_.ReportPod(key, info, message,
                        gated         ? kSchedulingGatedReason
                        : own_problem ? kUnschedulableReason
                                      : held_reason,
                        out);
    }
    const k8s::PodGroupInfo* group = GroupOf(job);
    if (!group) continue;
    counts.api = job.api;
    counts.tree_ready = !job.tree.empty() && GroupTreeReady(job.tree, placed_per_leaf);
    counts.namespace_ = job.namespace_;
    counts.name = job.group;
    counts.scheduler_error = !groups_
                                  .Conflict(PodGroups::Key(job.api, job.namespace_, job.group),
                                            job.priorities, scheduler_name_)
                                  .empty();
    status_.ReportGroup(job_key, std::move(counts), *group, reason, out);
    // A tree's native PodGroups each get their own PodGroupInitiallyScheduled, as
    // kube-scheduler writes it per PodGroup: True once the child's own pods are placed.
    for (const auto& [child, leaf] : job.leaf_of) {
      const k8s::PodGroupInfo* info =
          groups_.Find(PodGroups::Key(k8s::GroupApi::kNative, job.namespace_, child));
      if (info == nullptr) continue;
      GroupStatus child_counts;
      child_counts.api = k8s::GroupApi::kNative;
      child_counts.namespace_ = job.namespace_;
      child_counts.name = child;
      child_counts.placed = placed_per_leaf[static_cast<size_t>(leaf)];
      status_.ReportChildGroup(job_key, std::move(child_counts), *info, reason, out);
    }
  }
}

}  // namespace gantry
