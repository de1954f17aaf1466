// Issue 13's gang benchmark: one gang of 64 pods x 8 GPUs with a required leaf, on 5,000
// nodes x 8 GPUs in 20 leaves (250 nodes each, 4 spines), placed or refused in one session.
// Every leaf has plenty of GPUs free in total, so none is pruned without a trial; in each,
// every other node is partly busy (2 of 8 GPUs), and whole free nodes are few: 60 per leaf
// (too few) except in `fits` leaves, which have 70. Reports the session's time.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "engine/session.h"
#include "session_loop.h"

namespace gantry {
namespace {

constexpr int kNodes = 5000;
constexpr int kLeaves = 20;
constexpr int kPerLeaf = kNodes / kLeaves;

std::unique_ptr<ClusterState> MakeCluster(int fitting_leaves) {
  auto c = std::make_unique<ClusterState>();
  c->SetTopologyKeys({"spine", "leaf"});
  const GpuModelId h100 = GpuModels().Intern("H100-80GB");
  for (int i = 0; i < kNodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.allocatable = {
        {kCpu, 128'000}, {kMemory, Milli{1024} * 1024 * 1024 * 1024 * 1000}, {kPods, 110'000}};
    const int leaf = i / kPerLeaf;
    n.labels.Set("spine", "spine-" + std::to_string(leaf / 5));
    n.labels.Set("leaf", "leaf-" + std::to_string(leaf));
    for (int g = 0; g < 8; ++g) n.gpus.push_back(GpuDevice{h100, 81920, 0, g / 4, 0, 0});
    c->AddNode(std::move(n)).value();
  }
  Queue queue;
  queue.name = "team";
  c->AddQueue(std::move(queue)).value();
  TaskSpec two;
  two.role = "busy";
  two.requests = {{kCpu, 8000}};
  two.gpu.count = 2;
  const SpecId busy = c->AddSpec(std::move(two));
  Job load;
  load.name = "load";
  const JobId load_id = c->AddJob(std::move(load)).value();
  for (int i = 0; i < kNodes; ++i) {
    const int leaf = i / kPerLeaf;
    const int whole_free = leaf >= kLeaves - fitting_leaves ? 70 : 60;
    if (i % kPerLeaf < whole_free) continue;
    const TaskId t = c->AddTask(load_id, busy, "load-" + std::to_string(i)).value();
    const int32_t devices[] = {0, 1};
    c->Place(t, static_cast<NodeId>(i), devices).ok();
  }
  TaskSpec eight;
  eight.role = "worker";
  eight.requests = {{kCpu, 32'000}};
  eight.gpu.count = 8;
  const SpecId worker = c->AddSpec(std::move(eight));
  Job gang;
  gang.name = "train";
  gang.min_member = 64;
  gang.topology = TopologyRequest{"leaf", /*required=*/true};
  const JobId gang_id = c->AddJob(std::move(gang)).value();
  for (int k = 0; k < 64; ++k) c->AddTask(gang_id, worker, "train-" + std::to_string(k)).value();
  return c;
}

void BM_TopologyGang(benchmark::State& state) {
  static std::map<int, std::unique_ptr<ClusterState>> cache;
  const int fitting = static_cast<int>(state.range(0));
  auto& cluster = cache[fitting];
  if (!cluster) cluster = MakeCluster(fitting);
  const Policy policy = Policy::Compile(SchedulerConfig::Default()).value();
  Snapshot snapshot(*cluster);
  const size_t placed = bench::RunSessions(state, snapshot, policy).binds.size();
  if (placed != (fitting > 0 ? 64u : 0u))
    state.SkipWithError("the gang was not placed as expected");
  state.counters["placed"] = static_cast<double>(placed);
}

// fits: the last leaf has room; refused: no leaf has.
BENCHMARK(BM_TopologyGang)
    ->ArgName("fits")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
