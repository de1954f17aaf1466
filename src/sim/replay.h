// Time-driven replay: jobs arrive at their submit times, run for their durations once
// placed, and leave; a scheduling session runs every `period` seconds of simulated time
// (skipping idle stretches), driving the same engine the daemon runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "model/cluster.h"
#include "sim/workload.h"

namespace gantry {

// The longest scheduling period: a year of simulated time.
inline constexpr int64_t kMaxReplayPeriodS = int64_t{365} * 86400;

struct ReplayOptions {
  int64_t period_s = 10;    // between scheduling sessions: 1 to kMaxReplayPeriodS
  int64_t max_rows = 2000;  // time-series rows kept (evenly thinned): 2 to kMaxReplayRows
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

struct ReplayRow {
  int64_t t = 0;
  double gpu_alloc_pct = 0;  // allocated GPU share of capacity
  int64_t queue_len = 0;     // pending tasks
  int64_t running_tasks = 0;
};

struct ReplayResult {
  int64_t pods = 0;
  int64_t failed_tasks = 0;     // never placed by the end (they fit nowhere, ever)
  int64_t preempted_tasks = 0;  // evicted by the engine
  int64_t sessions = 0;
  Distribution wait_s;            // placement time - submit time, per task
  Distribution jct_s;             // last task's end - submit, per job that finished
  double gpu_alloc_mean_pct = 0;  // time-weighted
  std::vector<ReplayRow> rows;
  std::vector<double> jct_samples;  // for the report's CDF (thinned)
  std::vector<std::pair<std::string, double>> queue_gpu_share_pct;  // time-weighted, per queue
};

// REQUIRES: `nodes` holds nodes only (no jobs). Refuses invalid options, an invalid config,
// jobs that CheckSimJob refuses and more than kMaxTasks tasks. Errors name what is wrong.
Result<ReplayResult> RunReplay(const ClusterState& nodes, const std::vector<SimJob>& jobs,
                               const SchedulerConfig& config, uint64_t seed,
                               const ReplayOptions& options);

Distribution Summarize(std::vector<double> values);

}  // namespace gantry
