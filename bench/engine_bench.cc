// One scheduling session on a large synthetic GPU cluster (issue 2's benchmark):
// N nodes x 8 GPUs with 40% of the GPUs already in use, and 4 pending tasks per node:
// 70% single 1-GPU tasks, 20% shared-GPU tasks, 10% in 8-pod gangs of 8 GPUs each.
// Reports placed tasks per second of session time (build of the working state included).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engine/session.h"
#include "node_labels.h"
#include "session_loop.h"

namespace gantry {
namespace {

struct Workload {
  ClusterState cluster;
  size_t pending_tasks = 0;
};

// Deterministic: a fixed seed, std::mt19937_64 (its output is specified by the standard).
std::unique_ptr<Workload> MakeWorkload(int nodes) {
  auto w = std::make_unique<Workload>();
  ClusterState& c = w->cluster;
  std::mt19937_64 rng(42);
  GpuModelId a100 = GpuModels().Intern("A100-80GB");
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.allocatable = {
        {kCpu, 128'000}, {kMemory, Milli{1024} * 1024 * 1024 * 1024 * 1000}, {kPods, 110'000}};
    n.labels = Labels(bench::RealisticNodeLabels(i, n.name));
    n.labels.Set("topology.gantry.dev/rack", "rack-" + std::to_string(i / 32));
    for (int g = 0; g < 8; ++g) n.gpus.push_back(GpuDevice{a100, 81920, g / 4, g / 4, 0, 0});
    c.AddNode(std::move(n)).value();
  }
  for (int q = 0; q < 4; ++q) {
    Queue queue;
    queue.name = "team-" + std::to_string(q);
    queue.weight = q + 1;
    c.AddQueue(std::move(queue)).value();
  }
  auto spec_with = [&](int gpus, int milli) {
    TaskSpec s;
    s.role = "worker";
    s.requests = {{kCpu, 4000}, {kMemory, Milli{32} * 1024 * 1024 * 1024 * 1000}};
    s.gpu.count = gpus;
    s.gpu.milli = milli;
    return c.AddSpec(std::move(s));
  };
  const SpecId one_gpu = spec_with(1, 0);
  const SpecId eight_gpu = spec_with(8, 0);
  const SpecId quarter = spec_with(0, 250);
  const SpecId half = spec_with(0, 500);

  // 40% of the GPUs in use: each GPU is busy with probability 0.4, one 1-GPU task each.
  int64_t job_index = 0;
  std::bernoulli_distribution busy(0.4);
  for (NodeId n = 0; n < static_cast<NodeId>(nodes); ++n) {
    for (int32_t g = 0; g < 8; ++g) {
      if (!busy(rng)) continue;
      Job job;
      job.name = "running-" + std::to_string(job_index);
      job.queue = static_cast<QueueId>(job_index % 4);
      job.creation = job_index++;
      JobId id = c.AddJob(std::move(job)).value();
      TaskId t = c.AddTask(id, one_gpu, c.job(id).name + "-0").value();
      int32_t device[] = {g};
      c.Place(t, n, device).ok();
    }
  }
  // Pending: 4 tasks per node; by task count 70% single 1-GPU, 20% shared (a quarter or
  // a half of a GPU), 10% in gangs of 8 tasks x 8 GPUs. Job kinds are shuffled.
  const size_t total = static_cast<size_t>(nodes) * 4;
  enum Kind { kSingle, kQuarter, kHalf, kGang };
  std::vector<Kind> kinds;
  for (size_t i = 0; i < total * 7 / 10; ++i) kinds.push_back(kSingle);
  for (size_t i = 0; i < total / 10; ++i) kinds.push_back(kQuarter);
  for (size_t i = 0; i < total / 10; ++i) kinds.push_back(kHalf);
  for (size_t i = 0; i < total / 80; ++i) kinds.push_back(kGang);
  std::shuffle(kinds.begin(), kinds.end(), rng);
  std::uniform_int_distribution<int> pick(0, 99);
  size_t made = 0;
  for (Kind kind : kinds) {
    Job job;
    job.name = "job-" + std::to_string(job_index);
    job.queue = static_cast<QueueId>(job_index % 4);
    job.creation = job_index++;
    job.priority = pick(rng) < 10 ? 100 : 0;
    if (kind == kGang) {
      job.min_member = 8;
      JobId id = c.AddJob(std::move(job)).value();
      for (int k = 0; k < 8; ++k)
        c.AddTask(id, eight_gpu, c.job(id).name + "-" + std::to_string(k)).value();
      made += 8;
    } else {
      JobId id = c.AddJob(std::move(job)).value();
      SpecId spec = kind == kSingle ? one_gpu : (kind == kQuarter ? quarter : half);
      c.AddTask(id, spec, c.job(id).name + "-0").value();
      made += 1;
    }
  }
  w->pending_tasks = made;
  return w;
}

void BM_Session(benchmark::State& state) {
  static std::map<int, std::unique_ptr<Workload>> cache;
  const int nodes = static_cast<int>(state.range(0));
  auto& w = cache[nodes];
  if (!w) w = MakeWorkload(nodes);
  SchedulerConfig config = SchedulerConfig::Default();
  config.nodes_to_score = static_cast<int32_t>(state.range(1));
  const Policy policy = Policy::Compile(config).value();
  Snapshot snapshot(w->cluster);
  const size_t placed = bench::RunSessions(state, snapshot, policy).binds.size();
  // Classes of nodes alike in every static respect: the engine's static verdicts are
  // computed once per (spec, class), so this many times per spec.
  std::set<uint32_t> classes;
  for (const Node& node : w->cluster.nodes()) classes.insert(node.shape_class);
  state.counters["shape_classes"] = static_cast<double>(classes.size());
  state.counters["pending"] = static_cast<double>(w->pending_tasks);
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["placed_per_s"] = benchmark::Counter(
      static_cast<double>(placed), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Session)
    ->ArgNames({"nodes", "nodesToScore"})
    ->Args({1000, 100})
    ->Args({5000, 100})
    ->Args({5000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
