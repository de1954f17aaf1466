// Sessions that evict: preempt and reclaim on a full cluster of N nodes x 8 GPUs, every
// GPU busy with a 1-GPU task. Reports the session's time and evictions per second of it.
//   preempt      one queue of priority-0 work; N/8 high-priority jobs wait (3 of 4 ask for
//                one GPU, 1 of 4 for two), each evicting in its own queue;
//   capability   the same queue capped at what it holds: each high-priority job must evict
//                as much as it needs for its queue too (the trial's queue check);
//   reclaim      four queues of weight 1; queue 0 holds the cluster, the others each have
//                N/8 1-GPU jobs waiting and take back their deserved shares.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "engine/session.h"
#include "session_loop.h"

namespace gantry {
namespace {

enum class Case { kPreempt = 0, kCapability = 1, kReclaim = 2 };

std::unique_ptr<ClusterState> MakeCluster(int nodes, Case which) {
  auto c = std::make_unique<ClusterState>();
  const GpuModelId a100 = GpuModels().Intern("A100-80GB");
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.allocatable = {
        {kCpu, 128'000}, {kMemory, Milli{1024} * 1024 * 1024 * 1024 * 1000}, {kPods, 110'000}};
    for (int g = 0; g < 8; ++g) n.gpus.push_back(GpuDevice{a100, 81920, g / 4, g / 4, 0, 0});
    c->AddNode(std::move(n)).value();
  }
  const int queues = which == Case::kReclaim ? 4 : 1;
  for (int q = 0; q < queues; ++q) {
    Queue queue;
    queue.name = "team-" + std::to_string(q);
    queue.weight = 1;
    if (which == Case::kCapability) {
      queue.capability.Set(kGpu, Milli{8} * nodes * kMilliPerUnit);
    }
    c->AddQueue(std::move(queue)).value();
  }
  auto spec_with = [&](int gpus) {
    TaskSpec s;
    s.role = "worker";
    s.requests = {{kCpu, 4000}, {kMemory, Milli{32} * 1024 * 1024 * 1024 * 1000}};
    s.gpu.count = gpus;
    return c->AddSpec(std::move(s));
  };
  const SpecId one_gpu = spec_with(1);
  const SpecId two_gpus = spec_with(2);
  int64_t index = 0;
  auto add_job = [&](QueueId queue, int32_t priority, SpecId spec) {
    Job job;
    job.name = "job-" + std::to_string(index);
    job.queue = queue;
    job.priority = priority;
    job.creation = index++;
    const JobId id = c->AddJob(std::move(job)).value();
    return c->AddTask(id, spec, c->job(id).name + "-0").value();
  };
  for (NodeId n = 0; n < static_cast<NodeId>(nodes); ++n) {
    for (int32_t g = 0; g < 8; ++g) {
      const TaskId t = add_job(0, 0, one_gpu);
      const int32_t device[] = {g};
      c->Place(t, n, device).ok();
    }
  }
  for (int i = 0; i < nodes / 8; ++i) {
    if (which == Case::kReclaim) {
      for (QueueId q = 1; q < 4; ++q) add_job(q, 0, one_gpu);
    } else {
      add_job(0, 100, i % 4 == 3 ? two_gpus : one_gpu);
    }
  }
  return c;
}

void BM_EvictingSession(benchmark::State& state) {
  static std::map<std::pair<int, int>, std::unique_ptr<ClusterState>> cache;
  const int nodes = static_cast<int>(state.range(0));
  const auto which = static_cast<Case>(state.range(1));
  auto& cluster = cache[{nodes, static_cast<int>(which)}];
  if (!cluster) cluster = MakeCluster(nodes, which);
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = {"enqueue", "allocate", which == Case::kReclaim ? "reclaim" : "preempt"};
  const Policy policy = Policy::Compile(config).value();
  Snapshot snapshot(*cluster);
  const size_t evicted = bench::RunSessions(state, snapshot, policy).evictions.size();
  state.counters["evicted"] = static_cast<double>(evicted);
  state.counters["evicted_per_s"] = benchmark::Counter(
      static_cast<double>(evicted), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_EvictingSession)
    ->ArgNames({"nodes", "case"})
    ->Args({500, static_cast<int>(Case::kPreempt)})
    ->Args({500, static_cast<int>(Case::kCapability)})
    ->Args({500, static_cast<int>(Case::kReclaim)})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
