// Time-driven replay: jobs arrive at their submit times, run for their durations once
// placed, and leave; a scheduling session runs every `period` seconds of simulated time
// (skipping idle stretches), driving the same engine the daemon runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "model/cluster.h"
#include "sim/dataset_cache.h"
#include "sim/dra_gpus.h"
#include "sim/gang_spans.h"
#include "sim/workload.h"

namespace gantry {

// The longest scheduling period: a year of simulated time.
inline constexpr int64_t kMaxReplayPeriodS = int64_t{365} * 86400;

struct ReplayOptions {
  int64_t period_s = 10;    // between scheduling sessions: 1 to kMaxReplayPeriodS
  int64_t max_rows = 2000;  // time-series rows kept (evenly thinned): 2 to kMaxReplayRows
  // ---- Dataset locality (issue 13): the cache model's bandwidth and capacity.
  DatasetCacheOptions datasets = {};
  // ---- Defragmentation: jobs made movable beyond those that say so (SimJob::movable).
  MovableSelection movable = {};
  // ---- How pods ask for GPUs (--gpu-api): with kDra the GPUs are DRA devices and each GPU
  // pod has a claim (sim/replay_devices.h), allocated with CEL's verdicts from
  // `dra_verdicts` (required then; it outlives the run).
  GpuApi gpu_api = GpuApi::kDevicePlugin;
  const dra::SelectorVerdicts* dra_verdicts = nullptr;
};
inline constexpr int64_t kMaxReplayRows = 1'000'000;

// The options' ranges. Errors name the option and quote the value.
Status CheckReplayOptions(const ReplayOptions& options);
// A job's pods in [1, kMaxTasksPerJob], min_member in [1, pods], submit and duration in
// [0, kMaxTraceSeconds], GPUs per pod in [0, kMaxGpusPerNode] and a share below 1000.
// Errors name the job.
Status CheckSimJob(const SimJob& job);

struct Distribution {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
  int64_t count = 0;
};

// Queues whose shares each time-series row keeps (a run with more keeps none per row).
inline constexpr size_t kMaxQueuesPerRow = 64;
// Evictions whose records a result keeps (all are counted).
inline constexpr size_t kMaxEvictionRecords = 100'000;

struct ReplayRow {
  int64_t t = 0;
  double gpu_alloc_pct = 0;  // allocated GPU share of capacity
  int64_t queue_len = 0;     // pending tasks
  int64_t running_tasks = 0;
  // Per queue id (empty past kMaxQueuesPerRow queues): its GPUs, and the GPUs it deserves
  // (Decisions::deserved of the last session), in percent of the cluster's GPUs.
  std::vector<double> queue_share_pct = {};
  std::vector<double> queue_deserved_pct = {};
  // Jain's index over the leaf queues that deserve GPUs, of share / deserved: 1 when each
  // holds the same fraction of what it deserves. 1 when no queue deserves any.
  double jain = 1;
};

// One eviction: the victim task's job, the job it made room for (empty when the engine
// did not name one) and their queues, at the session's time.
struct EvictionRecord {
  int64_t t = 0;
  std::string victim_job, victim_queue;
  std::string preemptor_job, preemptor_queue;
};

// Per queue over a run. Shares are time-weighted means in percent of the cluster's GPUs.
struct QueueReport {
  std::string name;
  std::string parent;  // "" at the top level
  bool leaf = true;
  double share_pct = 0;     // over the whole run
  double deserved_pct = 0;  // over the whole run
  // Over the steady state: the second half of the arrivals, [mid, last arrival), when the
  // workload keeps the cluster contended. 0 when that span is empty.
  double steady_share_pct = 0;
  double steady_deserved_pct = 0;
  Distribution wait_s;      // per task: its time pending, evictions' re-waits included
  Distribution jct_s;       // per job that finished
  int64_t evicted = 0;      // tasks of this queue evicted
  int64_t evicted_for = 0;  // tasks evicted to make room for this queue's jobs
};

struct ReplayResult {
  int64_t pods = 0;
  int64_t failed_tasks = 0;     // never placed by the end (they fit nowhere, ever)
  int64_t preempted_tasks = 0;  // evicted by the engine (a task evicted twice counts twice)
  int64_t pipelined_tasks = 0;  // placed onto room being released, bound the next session
  int64_t sessions = 0;
  // Evictions that closed a loop (EvictionLoopDetector): 0 is the invariant.
  int64_t eviction_loops = 0;
  int64_t last_arrival_t = 0;
  int64_t last_eviction_t = -1;  // -1: no eviction
  // The last session at which two or more queues had tasks pending (-1: never). Reclaim
  // needs a queue short of its share with work pending against one above it, so once one
  // queue alone has a backlog evictions end; see docs/engine.md, "Preempt and reclaim".
  int64_t last_contended_t = -1;
  // Reservations against starvation: jobs that got one, those of them placed since, and
  // over those placed, the latest start after the time when the tasks running on the held
  // nodes at the first reservation were due to end (0 when none was late; only jobs whose
  // held nodes ran tasks of known duration count).
  int64_t reserved_jobs = 0;
  int64_t reserved_jobs_placed = 0;
  int64_t reservation_late_max_s = 0;
  std::vector<EvictionRecord> evictions;  // the first kMaxEvictionRecords
  std::vector<QueueReport> queues;        // by queue id
  double jain_mean = 1;                   // time-weighted over the run
  double jain_steady = 1;                 // time-weighted over the steady state
  Distribution wait_s;                    // placement time - submit time, per task
  Distribution jct_s;                     // last task's end - submit, per job that finished
  double gpu_alloc_mean_pct = 0;          // time-weighted
  std::vector<ReplayRow> rows;
  std::vector<double> jct_samples;  // for the report's CDF (thinned)
  std::vector<std::pair<std::string, double>> queue_gpu_share_pct;  // time-weighted, per queue
  // Per topology level that some node has: the domains each gang spanned as it started.
  std::vector<GangSpan> gang_spans;
  // ---- Dataset locality (issue 13): reads of datasets and the warm-up they cost
  // (sim/dataset_cache.h); and, where the caller ran the same replay again without the
  // datalocality plugin (`gantry sim` does when the jobs read datasets), that run's.
  DatasetStats datasets = {};
  bool has_datasets_without_locality = false;
  DatasetStats datasets_without_locality = {};

  // ---- Defragmentation. Time-weighted over the arrivals (from the first session to the
  // last arrival; 0 when that is no time): the GPUs idle, and of them those idle while a
  // job needing whole GPUs waited that their total would hold (IdleGpus). And the latter
  // over the whole run, in GPU-hours.
  double idle_gpus_mean = 0;
  double idle_unusable_gpus_mean = 0;
  double idle_unusable_gpu_hours = 0;
  int64_t movable_tasks = 0;         // tasks that were movable
  int64_t defragment_evictions = 0;  // by the defragment action (also in preempted_tasks)
  // GPU-seconds of runs cut short by evictions (of every cause): an evicted task starts
  // over when it is placed again.
  double work_lost_gpu_s = 0;
};

// Evictions: the engine's evicted tasks leave their nodes at once (ClusterState has no
// terminating state) and are pending again, their end cancelled; a pipelined task binds
// onto its room at the start of the next session, before the engine runs. A job's JCT
// runs to the end of its last task's last run.
// REQUIRES: `nodes` holds nodes and queues only (no jobs); jobs naming a queue it does not
// have get a top-level queue of weight 1. Refuses invalid options, an invalid config,
// jobs that CheckSimJob refuses and more than kMaxTasks tasks. Errors name what is wrong.
Result<ReplayResult> RunReplay(const ClusterState& nodes, const std::vector<SimJob>& jobs,
                               const SchedulerConfig& config, uint64_t seed,
                               const ReplayOptions& options);

Distribution Summarize(std::vector<double> values);

}  // namespace gantry
