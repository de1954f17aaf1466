#include "daemon/gpu_usage.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "engine/fragmentation.h"

namespace gantry {

GpuDeviceCounts CountGpuDevices(const ClusterState& cluster) {
  GpuDeviceCounts counts;
  for (const Node& node : cluster.nodes()) {
    if (node.removed) continue;
    const bool mig_devices = node.mig.strategy == MigStrategy::kSingle;
    for (const GpuDevice& g : node.gpus) {
      if (mig_devices) {
        (g.used_milli > 0 ? counts.mig_used : counts.mig_free)++;
      } else if (g.used_milli >= kGpuMilliWhole) {
        counts.full++;
      } else if (g.used_milli > 0) {
        counts.partial++;
      } else {
        counts.free++;
      }
    }
    for (const MigDevice& d : node.mig.devices) {
      (d.holder != kNoMigHolder ? counts.mig_used : counts.mig_free)++;
    }
  }
  return counts;
}

WorkloadProfile ProfileOfTasks(const ClusterState& cluster) {
  std::unordered_map<TaskShape, size_t, TaskShapeHash> index;
  WorkloadProfile profile;
  for (const Task& task : cluster.tasks()) {
    if (task.state == TaskState::kDone) continue;
    const TaskSpec& spec = cluster.spec(task.spec);
    auto [it, inserted] = index.try_emplace(TaskShape::Of(spec), profile.types.size());
    if (inserted) profile.types.push_back(TaskType{spec.requests, spec.gpu, 0});
    profile.types[it->second].count++;
    profile.total++;
  }
  std::stable_sort(profile.types.begin(), profile.types.end(),
                   [](const TaskType& a, const TaskType& b) { return a.count > b.count; });
  return profile;
}

double FragmentedGpus(const ClusterState& cluster, const WorkloadProfile& profile,
                      double coverage) {
  if (profile.types.empty()) return 0;
  const FragmentationMeasure measure(profile, coverage);
  double milli = 0;
  std::vector<int32_t> free;
  for (const Node& node : cluster.nodes()) {
    if (node.removed || node.gpus.empty()) continue;
    free.clear();
    for (const GpuDevice& g : node.gpus) free.push_back(g.free_milli());
    milli += measure.CachedNodeFragmentation(node.allocatable.Get(kCpu) - node.used.Get(kCpu),
                                             node.gpus[0].model, free);
  }
  return milli / kGpuMilliWhole;
}

}  // namespace gantry
