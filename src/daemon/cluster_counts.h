// What the scheduler's gauges count in the cluster: pods of ours waiting to be placed (in
// all, and by queue), and the nodes in the cluster with their GPUs. Read from the
// ClusterState the cache keeps; nothing is remembered between calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/cluster.h"

namespace gantry {

// The queue the cache files the pods of other schedulers under: their resources count,
// without taking part in fair sharing (nor in the pending counts).
inline constexpr const char* kOtherSchedulersQueue = "(other schedulers)";

// Pods of ours not yet placed.
int64_t CountPendingPods(const ClusterState& cluster);
// The same by queue; every queue is there, at 0 when none waits in it.
std::map<std::string, int64_t> PendingPodsByQueue(const ClusterState& cluster);

// Nodes in the cluster (removed ones left out) and their GPUs, in milli-GPUs.
struct NodeCounts {
  int64_t nodes = 0;
  Milli gpus_capacity = 0;
  Milli gpus_allocated = 0;
};
NodeCounts CountNodes(const ClusterState& cluster);

}  // namespace gantry
