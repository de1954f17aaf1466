// Why the cache's waiting pods wait, in kinds, for gantry_pending_pods_by_reason.
#include "daemon/cluster_cache.h"

namespace gantry {

std::map<PendingKind, int64_t> ClusterCache::PendingPodsByKind(
    const std::unordered_map<JobId, PendingKind>& job_kinds) const {
  std::map<PendingKind, int64_t> out;
  for (const auto& [key, pod] : pods_) {
    const k8s::PodInfo& info = pod.info;
    // The pods CollectStatus writes a PodScheduled=False condition for.
    if (!Ours(info) || !info.node_name.empty() || pod.assumed || info.meta.deleting ||
        info.finished()) {
      continue;
    }
    PendingKind kind = PendingKind::kNotConsidered;
    const JobRecord* job = nullptr;
    if (auto it = jobs_.find(pod.job_key); it != jobs_.end()) job = &it->second;
    if (!info.scheduling_gates.empty()) {
      kind = PendingKind::kGated;
    } else if (!pod.problem.empty()) {
      kind = PendingKind::kInvalid;
    } else if (pod.held_until > 0) {
      kind = PendingKind::kBindBackoff;
    } else if (!pod.resolve_problem.empty()) {
      // kVolume, or kInvalid for a Service or controller default spreading cannot read.
      kind = pod.resolve_kind;
    } else if (job != nullptr && !HoldReason(*job).empty()) {
      kind = PendingKind::kGroupMissing;
    } else if (job != nullptr && job->id != kNone) {
      if (auto k = job_kinds.find(job->id); k != job_kinds.end()) kind = k->second;
    }
    out[kind]++;
  }
  return out;
}

}  // namespace gantry
