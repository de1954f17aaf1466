// The simulator's speed (issue 3): one seed of the FGD paper's protocol on the shipped
// default trace (about 10,800 pods on 1,213 nodes) per policy, and a synthetic replay
// with arrivals and departures. Figures, not pass/fail: compare policies within one run.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/cluster_file.h"
#include "sim/policies.h"
#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/trace_csv.h"
#include "sim/workload.h"

namespace gantry {
namespace {

const std::string kTrace = std::string(GANTRY_SOURCE_DIR) + "/data/alibaba-gpu-v2023/";

struct Trace {
  ClusterState cluster;
  std::vector<TracePod> pods;
};

const Trace& DefaultTrace() {
  static const Trace* trace = [] {
    auto* t = new Trace();
    t->cluster = LoadClusterFile(kTrace + "openb_node_list_gpu_node.csv").value();
    t->pods = ReadPodCsv(kTrace + "openb_pod_list_default.csv").value();
    return t;
  }();
  return *trace;
}

void BM_Protocol(benchmark::State& state, const char* policy) {
  const Trace& trace = DefaultTrace();
  const SchedulerConfig config = PolicyConfig(policy).value();
  int64_t pods = 0;
  double alloc = 0;
  for (auto _ : state) {
    auto result = RunFgdProtocol(trace.cluster, trace.pods, config, 42, ProtocolOptions{});
    pods = result->pods;
    alloc = result->alloc_pct.back();
    benchmark::DoNotOptimize(result);
  }
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["alloc_pct_130"] = alloc;
  state.counters["pods_per_s"] =
      benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Protocol, random, "random")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Protocol, bestfit, "bestfit")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Protocol, fgd, "fgd")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Protocol, gantry, "gantry")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SyntheticReplay(benchmark::State& state) {
  GeneratorOptions g;
  g.nodes = static_cast<int32_t>(state.range(0));
  g.pods = state.range(1);
  // Arrivals that keep the cluster busy but not swamped: about 60% of GPUs in use.
  g.arrivals_per_s = static_cast<double>(g.nodes) * 8 * 0.6 / 3600.0;
  g.mean_duration_s = 3600;
  g.seed = 7;
  const std::vector<SimJob> jobs = GenerateWorkload(g).value();
  ClusterState cluster;
  AddTraceNodes(GenerateNodes(g.nodes).value(), &cluster).ok();
  SchedulerConfig config = SchedulerConfig::Default();
  config.tie_break = SchedulerConfig::TieBreak::kShuffled;
  ReplayOptions options;
  options.period_s = 10;
  int64_t sessions = 0;
  for (auto _ : state) {
    auto result = RunReplay(cluster, jobs, config, 1, options);
    sessions = result->sessions;
    benchmark::DoNotOptimize(result);
  }
  state.counters["sessions"] = static_cast<double>(sessions);
  state.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(g.pods),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SyntheticReplay)
    ->ArgNames({"nodes", "pods"})
    ->Args({1000, 20000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
