#include "sim/idle_gpus.h"

#include <algorithm>
#include <vector>

namespace gantry {
namespace {

// The GPU share a task takes or will take, in milli-GPUs.
Milli GpuNeed(const ClusterState& c, TaskId task) {
  const GpuRequest& gpu = c.spec_of(task).gpu;
  if (gpu.count > 0) return Milli{gpu.count} * kGpuMilliWhole;
  return gpu.wants_gpu() ? c.EstimatedGpuShare(gpu) : 0;
}

}  // namespace

IdleGpus MeasureIdleGpus(const ClusterState& c, std::span<const PipelineDecision> nominated) {
  // Free GPUs, CPU and memory over the nodes that take tasks, less what pipelined tasks
  // were promised.
  Milli free = 0, cpu = 0, memory = 0;
  for (const Node& node : c.nodes()) {
    if (node.removed || node.unschedulable) continue;
    free += std::max<Milli>(0, node.allocatable.Get(kGpu) - node.used.Get(kGpu));
    cpu += std::max<Milli>(0, node.allocatable.Get(kCpu) - node.used.Get(kCpu));
    memory += std::max<Milli>(0, node.allocatable.Get(kMemory) - node.used.Get(kMemory));
  }
  std::vector<JobId> promised_jobs;
  for (const PipelineDecision& p : nominated) {
    if (c.task(p.task).state != TaskState::kPending) continue;
    free -= GpuNeed(c, p.task);
    cpu -= c.spec_of(p.task).requests.Get(kCpu);
    memory -= c.spec_of(p.task).requests.Get(kMemory);
    promised_jobs.push_back(p.job);
  }
  free = std::max<Milli>(0, free);
  std::sort(promised_jobs.begin(), promised_jobs.end());
  Milli wanted = 0;
  for (JobId j : c.jobs_with_pending()) {
    if (std::binary_search(promised_jobs.begin(), promised_jobs.end(), j)) continue;
    const Job& job = c.job(j);
    const int32_t count = std::max(1, job.min_member - job.running);
    Milli need = 0, need_cpu = 0, need_memory = 0;
    int32_t taken = 0;
    bool whole = false;
    for (TaskId t : job.tasks) {
      if (taken == count) break;
      if (c.task(t).state != TaskState::kPending) continue;
      const TaskSpec& spec = c.spec_of(t);
      whole = whole || spec.gpu.count > 0;
      need += GpuNeed(c, t);
      need_cpu += spec.requests.Get(kCpu);
      need_memory += spec.requests.Get(kMemory);
      ++taken;
    }
    // A job the free totals would not hold waits for room, not for fragments to gather.
    if (whole && need <= free && need_cpu <= cpu && need_memory <= memory) {
      wanted = std::min(free, wanted + need);
    }
  }
  IdleGpus out;
  out.idle = static_cast<double>(free) / kGpuMilliWhole;
  out.unusable = static_cast<double>(wanted) / kGpuMilliWhole;
  return out;
}

}  // namespace gantry
