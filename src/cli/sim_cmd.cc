// `gantry sim`: replay a cluster and a workload through the engine, for several policies
// and seeds side by side, and write summary.json, timeseries.csv and report.html.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include "cli/commands.h"
#include "cli/device_objects.h"
#include "engine/registry.h"
#include "k8s/json_text.h"
#include "model/input_file.h"
#include "sim/cluster_file.h"
#include "sim/parallel.h"
#include "sim/policies.h"
#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/scenario_reader.h"
#include "sim/sim_options.h"
#include "sim/summary.h"
#include "sim/trace_csv.h"
#include "sim/workload.h"

namespace gantry {
namespace {

// A progress bar on stderr when it is a terminal.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}
  void Done(const SimRun& run) {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    if (!enabled_) return;
    const size_t width = 30, filled = done_ * width / total_;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s seed %llu   ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done_, total_, run.policy.c_str(),
                 static_cast<unsigned long long>(run.seed));
    if (done_ == total_) std::fprintf(stderr, "\n");
  }

 private:
  std::mutex mu_;
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
};

struct SimInputs {
  ClusterState cluster;        // nodes only
  std::vector<TracePod> pods;  // an openb pod list, for the protocol
  std::vector<SimJob> jobs;    // for replays
  QueueFileConfig queue_file;  // what the queue file sets of the configuration
};

// Read and checked before anything runs.
Result<SimInputs> LoadInputs(const SimOptions& o, const SimSettings& settings) {
  SimInputs in;
  if (settings.generate_workload) {
    auto generated = GenerateWorkload(*settings.generator);
    if (!generated.ok()) return generated.status();
    in.jobs = std::move(generated).value();
  }
  if (settings.generate_cluster) {
    auto nodes = GenerateNodes(settings.generator->nodes);
    if (!nodes.ok()) return nodes.status();
    GANTRY_RETURN_IF_ERROR(AddTraceNodes(*nodes, &in.cluster, "--generate"));
  }
  if (!o.snapshot.empty()) {
    const ApiDeviceObjectReader device_objects;
    auto snapshot = LoadScenario(o.snapshot, &device_objects);
    if (!snapshot.ok()) return snapshot.status();
    if (!snapshot->devices.empty()) {
      // A snapshot's own DRA objects are not replayed (--gpu-api dra publishes the
      // cluster's GPUs instead): pods with claims stay pending.
      std::fprintf(stderr,
                   "gantry sim: warning: %s: its DRA objects are read but not replayed; tasks "
                   "that name ResourceClaims stay pending\n",
                   o.snapshot.c_str());
    }
    in.cluster = std::move(snapshot->cluster);
    in.jobs = SnapshotArrivals(snapshot->snapshot);
  }
  if (!o.cluster.empty()) {
    auto loaded = LoadClusterFile(o.cluster);
    if (!loaded.ok()) return loaded.status();
    in.cluster = std::move(loaded).value();
  }
  if (!o.queues.empty()) {
    auto text = ReadInputFile(o.queues);
    if (!text.ok()) return text.status();
    GANTRY_RETURN_IF_ERROR(ParseQueueFile(*text, o.queues, &in.cluster, &in.queue_file));
  }
  if (settings.generate_workload)
    GANTRY_RETURN_IF_ERROR(AddGeneratedQueues(*settings.generator, &in.cluster));
  if (!o.workload.empty()) {
    auto read = ReadWorkloadCsv(o.workload);
    if (!read.ok()) return read.status();
    if (!read->pods.empty()) {
      in.pods = std::move(read->pods);
      in.jobs = JobsFromPods(in.pods);
    } else {
      in.jobs = JobsFromTraceJobs(read->jobs);
    }
  }
  if (settings.protocol && in.pods.empty())
    return Status::Invalid("--protocol fgd-atc23 needs an openb pod list as --workload");
  if (settings.datasets)
    GANTRY_RETURN_IF_ERROR(AssignDatasets(*settings.datasets, &in.jobs, &in.cluster));
  for (SimJob& job : in.jobs) job.submit /= settings.time_scale;  // durations are kept
  return in;
}

// One run: the protocol or a replay, by the settings.
Status Simulate(const SimSettings& settings, const SimInputs& in, const SchedulerConfig& config,
                SimRun* run) {
  const auto start = std::chrono::steady_clock::now();
  if (settings.protocol) {
    ProtocolOptions po;
    po.arrival_scale = settings.arrival_scale;
    po.gpu_api = settings.gpu_api;
    std::optional<RunVerdicts> verdicts;  // this run's CEL (not thread-safe: one per run)
    if (settings.gpu_api == GpuApi::kDra) po.dra_verdicts = verdicts.emplace().get();
    auto r = RunFgdProtocol(in.cluster, in.pods, config, run->seed, po);
    if (!r.ok()) return r.status();
    run->protocol = std::move(r).value();
  } else {
    ReplayOptions ro;
    ro.period_s = settings.period_s;
    if (settings.datasets) ro.datasets = settings.datasets->cache;
    ro.movable = settings.movable;
    ro.gpu_api = settings.gpu_api;
    std::optional<RunVerdicts> verdicts;  // this run's CEL (not thread-safe: one per run)
    if (settings.gpu_api == GpuApi::kDra) ro.dra_verdicts = verdicts.emplace().get();
    auto r = RunReplay(in.cluster, in.jobs, config, run->seed, ro);
    if (!r.ok()) return r.status();
    run->replay = std::move(r).value();
    // Jobs that read datasets: the same run without datalocality, whose warm-up less this
    // run's is the time locality saved (its wall time counts in this run's).
    auto locality = std::find_if(config.plugins.begin(), config.plugins.end(),
                                 [](const PluginConfig& p) { return p.name == "datalocality"; });
    if (run->replay.datasets.reads > 0 && locality != config.plugins.end()) {
      SchedulerConfig without = config;
      without.plugins.erase(without.plugins.begin() + (locality - config.plugins.begin()));
      auto baseline = RunReplay(in.cluster, in.jobs, without, run->seed, ro);
      if (!baseline.ok()) return baseline.status();
      run->replay.has_datasets_without_locality = true;
      run->replay.datasets_without_locality = baseline->datasets;
    }
  }
  run->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

bool WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

int RunSim(const SimOptions& o) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "gantry sim: %s\n", message.c_str());
    return 2;
  };
  auto checked = ParseSimOptions(o);
  if (!checked.ok()) return fail(checked.status().message());
  const SimSettings& settings = *checked;
  auto inputs = LoadInputs(o, settings);
  if (!inputs.ok()) return fail(inputs.status().message());
  std::vector<SchedulerConfig> configs;  // by policy
  for (const std::string& p : settings.policies) {
    auto config =
        settings.protocol ? PolicyConfig(p) : ReplayPolicyConfig(p, settings.nodes_to_score);
    if (!config.ok()) return fail("--policy: " + config.status().message());
    // The options first, then the queue file, then the policy's own.
    const QueueFileConfig& file = inputs->queue_file;
    const std::vector<std::string>& actions =
        !settings.actions.empty() ? settings.actions : file.actions;
    if (!actions.empty()) {
      config->actions = actions;
      Status valid = ValidateSchedulerConfig(*config);
      if (!valid.ok()) return fail("--actions: " + valid.message());
    }
    config->preemption_grace_s = settings.preemption_grace_s.value_or(
        file.preemption_grace_s.value_or(config->preemption_grace_s));
    config->starvation_s =
        settings.starvation_s.value_or(file.starvation_s.value_or(config->starvation_s));
    config->defragment_evictions_per_hour =
        settings.defragment_budget.value_or(config->defragment_evictions_per_hour);
    configs.push_back(*config);
  }

  // Every policy with every seed, side by side on `--jobs` threads.
  std::vector<SimRun> runs;
  std::vector<size_t> config_of;
  for (size_t p = 0; p < settings.policies.size(); ++p) {
    for (uint64_t s : settings.seeds) {
      runs.push_back(SimRun{settings.policies[p], s, {}, {}, 0});
      config_of.push_back(p);
    }
  }
  std::vector<Status> statuses(runs.size());
  Progress progress(runs.size());
  ParallelFor(runs.size(), settings.jobs, [&](size_t i) {
    statuses[i] = Simulate(settings, *inputs, configs[config_of[i]], &runs[i]);
    progress.Done(runs[i]);
  });
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!statuses[i].ok()) {
      return fail(runs[i].policy + " seed " + std::to_string(runs[i].seed) + ": " +
                  statuses[i].message());
    }
  }

  const SimOutputs outputs = SummarizeSimRuns(o, settings, runs);
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) return fail(o.out + ": cannot create the directory: " + ec.message());
  const std::filesystem::path dir(o.out);
  if (!WriteFile(dir / "summary.json", k8s::JsonText(outputs.summary, 2) + "\n") ||
      !WriteFile(dir / "timeseries.csv", outputs.timeseries_csv) ||
      (!settings.protocol && (!WriteFile(dir / "queues.csv", outputs.queues_csv) ||
                              !WriteFile(dir / "evictions.csv", outputs.evictions_csv))) ||
      !WriteFile(dir / "report.html", RenderHtmlReport(outputs.summary, outputs.timeseries))) {
    return fail(o.out + ": cannot write the outputs");
  }
  std::fputs(outputs.table.c_str(), stdout);
  std::printf("\nreport: %s\n", (dir / "report.html").string().c_str());
  return 0;
}

}  // namespace gantry
