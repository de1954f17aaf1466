// The live page's cost to the scheduler thread (issue 14): building the ClusterView from
// a cluster of 5,000 nodes x 8 GPUs in 20 racks, about 22,000 running tasks (whole GPUs,
// halves and quarters), 50 queues and 1,000 pending jobs with reasons; the view is built
// about once a second while the page is enabled, and never when it is not. Rendering the
// JSON runs on the page server's threads, per request; measured here too.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "daemon/cluster_api.h"
#include "daemon/cluster_view.h"

namespace gantry {
namespace {

constexpr int kNodes = 5000;
constexpr int kQueues = 50;
constexpr int kPendingJobs = 1000;

struct Cluster {
  ClusterState state;
  Decisions decisions;
};

std::unique_ptr<Cluster> MakeCluster() {
  auto c = std::make_unique<Cluster>();
  ClusterState& s = c->state;
  s.SetTopologyKeys({"zone", "rack"});
  const GpuModelId h100 = GpuModels().Intern("H100-80GB");
  for (int i = 0; i < kNodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.allocatable = {{kCpu, 128'000}, {kMemory, Milli{1024} * 1024 * 1024 * 1024 * 1000}};
    n.labels.Set("zone", "zone-" + std::to_string(i % 4));
    n.labels.Set("rack", "rack-" + std::to_string(i % 20));
    for (int g = 0; g < 8; ++g) n.gpus.push_back(GpuDevice{h100, 81920, 0, g / 4, 0, 0});
    s.AddNode(std::move(n)).value();
  }
  for (int q = 0; q < kQueues; ++q) {
    Queue queue;
    queue.name = "team-" + std::to_string(q);
    s.AddQueue(std::move(queue)).value();
  }
  TaskSpec whole;
  whole.role = "whole";
  whole.requests = {{kCpu, 8000}};
  whole.gpu.count = 2;
  const SpecId two = s.AddSpec(whole);
  TaskSpec half;
  half.role = "half";
  half.gpu.milli = 500;
  const SpecId halves = s.AddSpec(half);
  half.gpu.milli = 250;
  const SpecId quarters = s.AddSpec(half);
  for (int i = 0; i < kNodes; ++i) {
    Job job;
    job.name = "vc|ns/job-" + std::to_string(i);
    job.queue = static_cast<QueueId>(i % kQueues);
    const JobId id = s.AddJob(std::move(job)).value();
    const auto node = static_cast<NodeId>(i);
    for (int k = 0; k < 2; ++k) {  // GPUs 0..3 whole
      const TaskId t =
          s.AddTask(id, two, "ns/w-" + std::to_string(i) + "-" + std::to_string(k)).value();
      const int32_t devices[] = {2 * k, 2 * k + 1};
      s.Place(t, node, devices).ok();
    }
    for (int k = 0; k < 2; ++k) {  // GPU 4 shared by two halves
      const TaskId t =
          s.AddTask(id, halves, "ns/h-" + std::to_string(i) + "-" + std::to_string(k)).value();
      const int32_t device[] = {4};
      s.Place(t, node, device).ok();
    }
    if (i % 2 == 0) {  // GPU 5 a quarter used: fragmented
      const TaskId t = s.AddTask(id, quarters, "ns/q-" + std::to_string(i)).value();
      const int32_t device[] = {5};
      s.Place(t, node, device).ok();
    }
  }
  for (int i = 0; i < kPendingJobs; ++i) {
    Job job;
    job.name = "pod|ns/pending-" + std::to_string(i);
    job.queue = static_cast<QueueId>(i % kQueues);
    job.submitted = 1000 + i;
    const JobId id = s.AddJob(std::move(job)).value();
    s.AddTask(id, two, "ns/pending-" + std::to_string(i)).value();
    c->decisions.pending.push_back(
        {id, 1, "0/5000 nodes are available: 5000 Insufficient free whole GPUs (nvidia.com/gpu)."});
  }
  c->decisions.deserved.assign(kQueues, ResourceVector{{kGpu, 800'000}, {kCpu, 12'800'000}});
  return c;
}

Cluster& Shared() {
  static Cluster* cluster = MakeCluster().release();
  return *cluster;
}

// Nothing changed since the last view (the nodes' views are all shared).
void BM_BuildClusterView(benchmark::State& state) {
  Cluster& c = Shared();
  ClusterViewBuilder builder;
  builder.NoteCycle(c.state, c.decisions, 0.01, 1000);
  double now = 1000;
  for (auto _ : state) {
    now += 1;
    benchmark::DoNotOptimize(builder.Build(c.state, now));
  }
}
BENCHMARK(BM_BuildClusterView)->Unit(benchmark::kMillisecond);

// As after a cycle that bound pods on 50 nodes: those nodes' views are built again.
void BM_BuildClusterViewAfterBindsOn50Nodes(benchmark::State& state) {
  Cluster& c = Shared();
  ClusterViewBuilder builder;
  builder.NoteCycle(c.state, c.decisions, 0.01, 1000);
  double now = 1000;
  builder.Build(c.state, now);
  const SpecId spec = c.state.task(c.state.tasks_on(0).front()).spec;
  const JobId job = c.state.FindJob("pod|ns/pending-0");
  std::vector<TaskId> extra;
  for (int i = 0; i < 50; ++i)
    extra.push_back(c.state.AddTask(job, spec, "ns/x-" + std::to_string(i)).value());
  int round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (int i = 0; i < 50; ++i) {
      const TaskId t = extra[static_cast<size_t>(i)];
      if (c.state.task(t).state == TaskState::kRunning) c.state.Unplace(t);
      const int32_t devices[] = {6, 7};
      c.state.Place(t, static_cast<NodeId>((round * 50 + i) % kNodes), devices).ok();
    }
    ++round;
    state.ResumeTiming();
    now += 1;
    benchmark::DoNotOptimize(builder.Build(c.state, now));
  }
}
BENCHMARK(BM_BuildClusterViewAfterBindsOn50Nodes)->Unit(benchmark::kMillisecond);

// The first view, or one after every node changed: each node's view is built.
void BM_BuildClusterViewFromScratch(benchmark::State& state) {
  Cluster& c = Shared();
  double now = 1000;
  for (auto _ : state) {
    ClusterViewBuilder builder;
    builder.NoteCycle(c.state, c.decisions, 0.01, 1000);
    benchmark::DoNotOptimize(builder.Build(c.state, now += 1));
  }
}
BENCHMARK(BM_BuildClusterViewFromScratch)->Unit(benchmark::kMillisecond);

void BM_NoteCycle(benchmark::State& state) {
  Cluster& c = Shared();
  ClusterViewBuilder builder;
  double now = 1000;
  for (auto _ : state) builder.NoteCycle(c.state, c.decisions, 0.01, now += 1);
}
BENCHMARK(BM_NoteCycle)->Unit(benchmark::kMillisecond);

void BM_ClusterJson(benchmark::State& state) {
  Cluster& c = Shared();
  ClusterViewBuilder builder;
  auto view = builder.Build(c.state, 1000);
  size_t bytes = 0;
  for (auto _ : state) bytes = ClusterJson(*view).dump().size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ClusterJson)->Unit(benchmark::kMillisecond);

void BM_QueuesJsonWithAnHourOfHistory(benchmark::State& state) {
  Cluster& c = Shared();
  ClusterViewBuilder builder;
  std::shared_ptr<const ClusterView> view;
  for (int s = 0; s <= 3600; s += 10) view = builder.Build(c.state, 1000 + s);
  size_t bytes = 0;
  for (auto _ : state) bytes = QueuesJson(*view).dump().size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_QueuesJsonWithAnHourOfHistory)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
