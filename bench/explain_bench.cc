// Issue 14: what explaining pending jobs costs (engine/explain.h), beside the session it
// follows. 5,000 nodes x 8 GPUs, each running a 2-GPU task; `jobs` pending jobs that fit
// nowhere, gangs of 8 pods of 8 GPUs, of 4 pod shapes (the explanations are cached per
// shape). Reports one session alone, and the session then ExplainPending of every pending
// job (the daemon explains at most 500, at most once a second).
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "engine/explain.h"
#include "engine/session.h"

namespace gantry {
namespace {

constexpr int kNodes = 5000;

std::unique_ptr<ClusterState> MakeCluster(int jobs) {
  auto c = std::make_unique<ClusterState>();
  const GpuModelId h100 = GpuModels().Intern("H100-80GB");
  for (int i = 0; i < kNodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.allocatable = {
        {kCpu, 128'000}, {kMemory, Milli{1024} * 1024 * 1024 * 1024 * 1000}, {kPods, 110'000}};
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
    const TaskId t = c->AddTask(load_id, busy, "load-" + std::to_string(i)).value();
    const int32_t devices[] = {0, 1};
    c->Place(t, static_cast<NodeId>(i), devices).ok();
  }
  std::vector<SpecId> shapes;
  for (int s = 0; s < 4; ++s) {
    TaskSpec eight;
    eight.role = "worker";
    eight.requests = {{kCpu, 16'000 + 1000 * s}};
    eight.gpu.count = 8;
    shapes.push_back(c->AddSpec(std::move(eight)));
  }
  for (int j = 0; j < jobs; ++j) {
    const std::string name = "train-" + std::to_string(j);
    Job gang;
    gang.name = name;
    gang.min_member = 8;
    const JobId id = c->AddJob(std::move(gang)).value();
    for (int k = 0; k < 8; ++k) {
      c->AddTask(id, shapes[static_cast<size_t>(j) % shapes.size()], name + "-" + std::to_string(k))
          .value();
    }
  }
  return c;
}

void Run(benchmark::State& state, bool explain) {
  static std::map<int, std::unique_ptr<ClusterState>> cache;
  const int jobs = static_cast<int>(state.range(0));
  auto& cluster = cache[jobs];
  if (!cluster) cluster = MakeCluster(jobs);
  const Policy policy = Policy::Compile(SchedulerConfig::Default()).value();
  Snapshot snapshot(*cluster);
  size_t explained = 0;
  for (auto _ : state) {
    Session session(snapshot, policy);
    Decisions d = session.Run();
    if (explain) {
      std::vector<PendingExplanation> e = ExplainPending(session, d, d.pending.size());
      explained = e.size();
      benchmark::DoNotOptimize(e);
    }
    benchmark::DoNotOptimize(d);
  }
  if (explain && explained != static_cast<size_t>(jobs)) {
    state.SkipWithError("not every pending job was explained");
  }
}

void BM_Session(benchmark::State& state) {
  Run(state, false);
}
void BM_SessionAndExplain(benchmark::State& state) {
  Run(state, true);
}

BENCHMARK(BM_Session)->ArgName("jobs")->Arg(100)->Arg(500)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionAndExplain)->ArgName("jobs")->Arg(100)->Arg(500)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
