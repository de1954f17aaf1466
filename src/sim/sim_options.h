// `gantry sim`'s options as the command line gives them (text), and their parsing and
// range checks into what the simulator runs: one place that says what each option
// accepts, so that no value (NaN, a negative count, 1e12 x capacity) reaches the runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/status.h"
#include "sim/dataset_workload.h"
#include "sim/dra_gpus.h"
#include "sim/workload.h"

namespace gantry {

// Empty: not given (each number's default is in SimSettings).
struct SimOptions {
  std::string cluster;
  std::string workload;
  std::string generate;
  std::string protocol;
  std::string arrival_scale;
  std::string gpu_api;  // device-plugin (the default) or dra
  std::string policies = "gantry";
  std::string seeds = "42";
  std::string out = "out/sim";
  std::string period;
  std::string nodes_to_score;
  std::string jobs;
  std::string queues;            // a queue file (ParseQueueFile)
  std::string actions;           // comma-separated, replacing the configuration's
  std::string preemption_grace;  // seconds: the configuration's preemptionGraceSeconds
  std::string starvation;        // seconds: the configuration's starvationSeconds
  // ---- Dataset locality (issue 13): datasets for a replay's jobs (ParseDatasetWorkload).
  std::string datasets;
  // ---- Defragmentation.
  std::string movable;            // all, shared, or a percent of jobs (ParseMovable)
  std::string defragment_budget;  // the configuration's defragmentEvictionsPerHour
  std::string time_scale;         // replays: arrivals this many times as dense
  // ---- What-if on a live cluster: a `gantry snapshot` file, the cluster and workload both.
  std::string snapshot;
};

// Runs at once, and seeds in one `gantry sim`.
inline constexpr int64_t kMaxSimJobs = 256;
inline constexpr int64_t kMaxSimSeeds = 10'000;

struct SimSettings {
  bool protocol = false;  // --protocol fgd-atc23; else a time-driven replay
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  double arrival_scale = 1.3;    // protocol only: [kMinArrivalScale, kMaxArrivalScale]
  // --gpu-api: how pods ask for GPUs (sim/dra_gpus.h); dra with the protocol only.
  GpuApi gpu_api = GpuApi::kDevicePlugin;
  int64_t period_s = 10;         // replay only: [1, kMaxReplayPeriodS]
  int32_t nodes_to_score = 100;  // replay only: [0, kMaxNodes], 0 scores every node
  int32_t jobs = 2;              // [1, kMaxSimJobs]
  // --generate: the cluster (its nodes) when there is no --cluster, the workload when there
  // is no --workload.
  std::optional<GeneratorOptions> generator;
  bool generate_cluster = false;
  bool generate_workload = false;
  // --actions (checked against the known actions when the configurations are made);
  // empty: the queue file's, else the default.
  std::vector<std::string> actions;
  // --preemption-grace and --starvation; unset: the queue file's, else the default.
  std::optional<int64_t> preemption_grace_s;
  std::optional<int64_t> starvation_s;
  // The terminal table adds per-run fairness figures: --queues, --actions or queues=.
  bool fairness = false;
  // ---- Dataset locality (issue 13): --datasets (replays only).
  std::optional<DatasetWorkloadOptions> datasets;
  // ---- Defragmentation: --movable (replays), --defragment-budget (unset: the default).
  MovableSelection movable = {};
  std::optional<int32_t> defragment_budget = {};
  // --time-scale (replays): submit times divided by it, durations kept, so that a sparse
  // trace (openb's pods over 149 days) loads a cluster; 1 to kMaxTimeScale.
  int64_t time_scale = 1;
};
inline constexpr int64_t kMaxTimeScale = 1'000'000;

// Every error names the option, quotes the value and says what is allowed. Refused too:
// an option that would be ignored (--arrival-scale without --protocol; --period or
// --nodes-to-score with it; --generate nodes= with --cluster; --generate workload keys
// with --workload), a key given twice, a seed or policy given twice.
Result<SimSettings> ParseSimOptions(const SimOptions& options);

// --movable: "all", "shared" (jobs whose pods ask for a share of one GPU) or a percent of
// the jobs, 0 to 100 ("30", chosen per run seed).
Result<MovableSelection> ParseMovable(const std::string& text);
// "42", "42-51", "1,5,9": at most kMaxSimSeeds distinct seeds.
Result<std::vector<uint64_t>> ParseSeeds(const std::string& text);
// "nodes=1000,pods=100000,rate=10,duration=3600,seed=42,mix=60/25/5/10"; `given` gets
// the keys that were given.
Result<GeneratorOptions> ParseGenerate(const std::string& text, std::vector<std::string>* given);

}  // namespace gantry
