// What the cluster's GPUs are doing, for the dashboard's gauges: devices by state, MIG
// devices by state, and the GPU capacity that is fragmented for the workload (the
// measure of engine/fragmentation.h, which the fgd and gantry packing policies lower).
#pragma once

#include <cstdint>

#include "model/cluster.h"

namespace gantry {

struct GpuDeviceCounts {
  // GPUs that are not cut into MIG devices (Node::gpus of nodes without the single MIG
  // strategy), by use: all of it taken, part of it (fractions share it), none.
  int64_t full = 0;
  int64_t partial = 0;
  int64_t free = 0;
  // MIG devices (mixed strategy: NodeMig::devices; single: the node's devices), by use.
  int64_t mig_used = 0;
  int64_t mig_free = 0;
  bool operator==(const GpuDeviceCounts&) const = default;
};

// Over the nodes in the cluster now (removed ones left out).
GpuDeviceCounts CountGpuDevices(const ClusterState& cluster);

// The task types of the tasks in the cluster now, running and pending, whoever placed
// them: the workload to measure fragmentation against when nothing gave one
// (ClusterState::workload_profile() empty). Most frequent first, ties in task order.
WorkloadProfile ProfileOfTasks(const ClusterState& cluster);

// The free GPU capacity the profile's typical tasks (`coverage` of them, as the fgd
// policy's default, 0.95) cannot use, summed over the nodes in the cluster now, in GPUs.
// 0 for an empty profile.
double FragmentedGpus(const ClusterState& cluster, const WorkloadProfile& profile,
                      double coverage = 0.95);

}  // namespace gantry
