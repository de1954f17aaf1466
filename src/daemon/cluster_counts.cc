#include "daemon/cluster_counts.h"

namespace gantry {

int64_t CountPendingPods(const ClusterState& cluster) {
  int64_t n = 0;
  for (JobId id : cluster.jobs_with_pending()) n += cluster.job(id).pending;
  return n;
}

std::map<std::string, int64_t> PendingPodsByQueue(const ClusterState& cluster) {
  std::map<std::string, int64_t> out;
  for (const Queue& q : cluster.queues()) {
    if (q.name != kOtherSchedulersQueue) out[q.name] = 0;
  }
  for (JobId id : cluster.jobs_with_pending()) {
    const Job& job = cluster.job(id);
    out[cluster.queue(job.queue).name] += job.pending;
  }
  return out;
}

NodeCounts CountNodes(const ClusterState& cluster) {
  NodeCounts counts;
  for (const Node& n : cluster.nodes()) {
    if (n.removed) continue;
    counts.nodes++;
    counts.gpus_allocated += n.used.Get(kGpu);
  }
  counts.gpus_capacity = cluster.capacity().Get(kGpu);
  return counts;
}

}  // namespace gantry
