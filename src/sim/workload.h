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
  TopologyRequest topology;  // the gang's domain (Job::topology)
  TaskSpec spec;             // what each pod asks for
  // ---- Defragmentation: its pods may be moved (Task::movable).
  bool movable = false;
};

// Which jobs of a replay are movable beyond those that say so (`gantry sim --movable`):
// none, all, those whose pods ask for a share of one GPU, or `pct` percent of the jobs,
// chosen per run seed.
struct MovableSelection {
  enum class Kind { kNone, kAll, kShared, kPercent };
  Kind kind = Kind::kNone;
  int32_t pct = 0;  // kPercent: 0 to 100
};

// Whether the selection makes the job movable; `index`: its place in the workload, `seed`:
// the run's (kPercent draws from them alone, so that runs with the same seed agree).
bool SelectsMovable(const MovableSelection& selection, const SimJob& job, size_t index,
                    uint64_t seed);

// A pod's resource shape as a task spec: cpu milli, memory MiB, GPUs (whole, or one
// shared GPU when gpu_milli < 1000), allowed models.
TaskSpec SpecOfPod(const TracePod& pod);
TaskSpec SpecOfJob(const TraceJob& job);

// One single-pod job per trace pod. With times, submit is creation_time relative to the
// earliest and duration is deletion - creation: 0 (runs to the end) when the pod was never
// deleted, and 1 s (the trace's resolution) when it was deleted as it was created, so that
// it leaves rather than runs forever.
std::vector<SimJob> JobsFromPods(const std::vector<TracePod>& pods);
std::vector<SimJob> JobsFromTraceJobs(const std::vector<TraceJob>& jobs);

// The generator's ranges: arrivals per second, and the mean duration in seconds.
inline constexpr double kMinArrivalRate = 1e-6;
inline constexpr double kMaxArrivalRate = 1e6;
inline constexpr int64_t kMaxMeanDurationS = 1'000'000'000;

struct GeneratorOptions {
  int32_t nodes = 1000;  // of 8 GPUs each (used by the caller to make the cluster)
  int64_t pods = 100000;
  double arrivals_per_s = 10;  // mean rate of a Poisson arrival process
  int64_t mean_duration_s = 3600;
  // Mix by pod count, in percent: whole single GPU, shared GPU, 8-GPU gang pods, CPU-only.
  int32_t pct_single = 60;
  int32_t pct_shared = 25;
  int32_t pct_gang = 5;
  int32_t pct_cpu = 10;
  uint64_t seed = 42;
  // Multi-tenant (`queues=`): when not empty, jobs go to these queues (name, weight) at
  // random, each a gang of 1, 2, 4 or 8 one-GPU pods (minMember = pods), one in five
  // elastic (minMember 1), priority 0 to 2; the mix above is not used.
  std::vector<std::pair<std::string, int64_t>> queues;
  // `gangtopology=required:LEVEL` or `preferred:LEVEL`: every gang (minMember > 1) asks
  // to stay inside one domain of the level.
  TopologyRequest gang_topology;
  // ---- Defragmentation: `movable=PCT`, the percent of jobs whose pods may be moved, chosen
  // from the seed apart from the draws above (the rest of the workload is the same).
  int32_t pct_movable = 0;
};
// Tenants a generator may name, and their largest weight.
inline constexpr size_t kMaxGeneratedQueues = 64;
inline constexpr int64_t kMaxGeneratedQueueWeight = 1'000'000;
// Nodes in [1, kMaxNodes], pods in [1, kMaxTasks], the rate in [kMinArrivalRate,
// kMaxArrivalRate], the mean duration in [1, kMaxMeanDurationS], the mix percentages
// non-negative adding up to 100. Errors name the option and quote the value.
Status CheckGeneratorOptions(const GeneratorOptions& options);
// A synthetic workload for scale tests: deterministic for a seed. It stops with the job
// that reaches `pods` (a gang may pass it by up to 3 pods, never past kMaxTasks).
Result<std::vector<SimJob>> GenerateWorkload(const GeneratorOptions& options);
// The generator's queues, flat, with their weights; a queue the cluster has already (from
// a --queues file) is left as it is.
Status AddGeneratedQueues(const GeneratorOptions& options, ClusterState* cluster);
// A homogeneous cluster of `count` (1 to kMaxNodes) 8-GPU nodes for generated workloads.
Result<std::vector<TraceNode>> GenerateNodes(int64_t count);

// The workload's task types and how often each occurs: the "target workload" that the
// fragmentation measure is taken against.
// With `waiting`, its pending tasks count first (a snapshot's pending pods).
WorkloadProfile ProfileOf(const std::vector<SimJob>& jobs, const ClusterState* waiting = nullptr);

}  // namespace gantry
