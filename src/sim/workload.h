// Workloads for the simulator: jobs with arrival times and durations, made from trace
// rows or generated, and how they become tasks in a ClusterState.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "sim/trace_csv.h"

namespace gantry {

struct SimJob {
  std::string name;
  int64_t submit = 0;    // seconds from the start of the replay
  int64_t duration = 0;  // seconds each pod runs once placed; 0: until the end
  int32_t pods = 1;
  int32_t min_member = 1;
  std::string queue = "default";
  int32_t priority = 0;
  TaskSpec spec;  // what each pod asks for
};

// A pod's resource shape as a task spec: cpu milli, memory MiB, GPUs (whole, or one
// shared GPU when gpu_milli < 1000), allowed models.
TaskSpec SpecOfPod(const TracePod& pod);
TaskSpec SpecOfJob(const TraceJob& job);

// One single-pod job per trace pod. With times, submit is creation_time relative to the
// earliest and duration is deletion - creation (0 when the pod never ended).
std::vector<SimJob> JobsFromPods(const std::vector<TracePod>& pods);
std::vector<SimJob> JobsFromTraceJobs(const std::vector<TraceJob>& jobs);

struct GeneratorOptions {
  int32_t nodes = 1000;        // of 8 GPUs each (used by the caller to make the cluster)
  int64_t pods = 100000;
  double arrivals_per_s = 10;  // mean rate of a Poisson arrival process
  int64_t mean_duration_s = 3600;
  // Mix by pod count, in percent: whole single GPU, shared GPU, 8-GPU gang pods, CPU-only.
  int32_t pct_single = 60;
  int32_t pct_shared = 25;
  int32_t pct_gang = 5;
  int32_t pct_cpu = 10;
  uint64_t seed = 42;
};
// A synthetic workload for scale tests: deterministic for a seed.
Result<std::vector<SimJob>> GenerateWorkload(const GeneratorOptions& options);
// A homogeneous cluster of 8-GPU nodes for generated workloads.
std::vector<TraceNode> GenerateNodes(int32_t count);

// The workload's task types and how often each occurs: the "target workload" that the
// fragmentation measure is taken against.
WorkloadProfile ProfileOf(const std::vector<SimJob>& jobs);

}  // namespace gantry
