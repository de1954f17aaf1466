// Topology spreading at kube-scheduler's scale: the engine on the workloads of Kubernetes'
// scheduler_perf topology_spreading cases (test/integration/scheduler_perf/
// topology_spreading/performance-config.yaml), 5,000 nodes each, one session placing
// every measured pod. kube-scheduler's thresholds for them (pods/s) are reported beside.
//   TopologySpreading          5000Nodes_5000Pods   threshold 460
//   PreferredTopologySpreading 5000Nodes_5000Pods   threshold 340
//   DefaultTopologySpreading   5000Nodes_50000Pods  threshold 160
// Nodes as node-default.yaml (4 CPU, 32Gi, 110 pods) with topology.kubernetes.io/zone
// moon-1..3 and, as real nodes have, a unique kubernetes.io/hostname (scheduler_perf's
// nodes have none, which leaves the default hostname constraint idle: this is the harder
// case). 5,000 pods of pod-default.yaml (100m CPU, 500Mi) already run, one per node; the
// measured pods are pod-with-topology-spreading.yaml (zone, maxSkew 5, DoNotSchedule,
// color=blue), pod-with-preferred-topology-spreading.yaml (the same, ScheduleAnyway), and
// pod-with-label.yaml (app=scheduler-perf, no requests) in namespace service-ns behind
// service.yaml, whose selector is what the daemon gives the engine as the pod's default
// spread selector. The engine runs its default configuration (podtopologyspread with
// the system default constraints, binpack, nodesToScore 100).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <string>

#include "engine/session.h"

namespace gantry {
namespace {

enum class Case { kTopologySpreading, kPreferredTopologySpreading, kDefaultTopologySpreading };

struct Workload {
  ClusterState cluster;
  size_t measured = 0;
};

constexpr Milli kMi = Milli{1024} * 1024 * kMilliPerUnit;

std::unique_ptr<Workload> MakeWorkload(Case kind, int nodes, int init_pods, int measured_pods) {
  auto w = std::make_unique<Workload>();
  ClusterState& c = w->cluster;
  static const char* const kZones[] = {"moon-1", "moon-2", "moon-3"};
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.name = "scheduler-perf-" + std::to_string(i);
    n.allocatable = {{kCpu, 4'000}, {kMemory, 32 * 1024 * kMi}, {kPods, 110'000}};
    n.labels.Set("kubernetes.io/hostname", n.name);
    n.labels.Set("topology.kubernetes.io/zone", kZones[i % 3]);
    c.AddNode(std::move(n)).value();
  }
  Queue queue;
  queue.name = "default";
  const QueueId q = c.AddQueue(std::move(queue)).value();

  TaskSpec plain;
  plain.role = "pod";
  plain.namespace_ = "namespace-1";
  plain.requests = {{kCpu, 100}, {kMemory, 500 * kMi}};
  const SpecId init = c.AddSpec(plain);

  TaskSpec measured;
  measured.role = "pod";
  if (kind == Case::kDefaultTopologySpreading) {
    measured.namespace_ = "service-ns";
    measured.labels.Set("app", "scheduler-perf");
    LabelSelector service;
    service.match_labels.Set("app", "scheduler-perf");
    measured.default_spread_selector = service;
  } else {
    measured.namespace_ = "namespace-2";
    measured.requests = plain.requests;
    measured.labels.Set("color", "blue");
    TopologySpreadConstraint zone;
    zone.max_skew = 5;
    zone.topology_key = "topology.kubernetes.io/zone";
    zone.when_unsatisfiable = kind == Case::kTopologySpreading
                                  ? TopologySpreadConstraint::WhenUnsatisfiable::kDoNotSchedule
                                  : TopologySpreadConstraint::WhenUnsatisfiable::kScheduleAnyway;
    zone.selector = LabelSelector{};
    zone.selector->match_labels.Set("color", "blue");
    measured.spread = {zone};
  }
  const SpecId spec = c.AddSpec(measured);

  int64_t creation = 0;
  auto add_pod = [&](SpecId s, const std::string& name) {
    Job job;
    job.name = name;
    job.queue = q;
    job.creation = creation++;
    const JobId id = c.AddJob(std::move(job)).value();
    return c.AddTask(id, s, name).value();
  };
  for (int i = 0; i < init_pods; ++i) {
    const TaskId t = add_pod(init, "pod-" + std::to_string(i));
    c.Place(t, static_cast<NodeId>(i % nodes), {}).ok();
  }
  for (int i = 0; i < measured_pods; ++i) add_pod(spec, "measured-" + std::to_string(i));
  w->measured = static_cast<size_t>(measured_pods);
  return w;
}

void BM_Spreading(benchmark::State& state, Case kind, int measured_pods, double threshold) {
  static std::map<std::pair<int, int>, std::unique_ptr<Workload>> cache;
  auto& w = cache[{static_cast<int>(kind), measured_pods}];
  if (!w) w = MakeWorkload(kind, 5000, 5000, measured_pods);
  const Policy policy = Policy::Compile(SchedulerConfig::Default()).value();
  Snapshot snapshot(w->cluster);
  size_t placed = 0;
  Decisions last;
  for (auto _ : state) {
    Session session(snapshot, policy);
    Decisions d = session.Run();
    placed = d.binds.size();
    benchmark::DoNotOptimize(d);
    last = std::move(d);
  }
  // How the measured pods spread: the largest difference between two zones' counts and
  // the most on one node (a check that the constraints held, not a speed).
  std::map<std::string, int> per_zone;
  std::map<NodeId, int> per_node;
  for (const BindDecision& b : last.binds) {
    ++per_zone[*w->cluster.node(b.node).labels.Find("topology.kubernetes.io/zone")];
    ++per_node[b.node];
  }
  int most = 0, fewest = INT32_MAX, on_one_node = 0;
  for (const auto& [zone, n] : per_zone) most = std::max(most, n), fewest = std::min(fewest, n);
  for (const auto& [node, n] : per_node) on_one_node = std::max(on_one_node, n);
  state.counters["zone_skew"] = per_zone.size() == 3 ? most - fewest : most;
  state.counters["most_on_a_node"] = on_one_node;
  state.counters["measured"] = static_cast<double>(w->measured);
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["kube_threshold_per_s"] = threshold;
  state.counters["placed_per_s"] = benchmark::Counter(
      static_cast<double>(placed), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(BM_Spreading, TopologySpreading_5000Nodes_5000Pods, Case::kTopologySpreading,
                  5000, 460)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Spreading, PreferredTopologySpreading_5000Nodes_5000Pods,
                  Case::kPreferredTopologySpreading, 5000, 340)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Spreading, DefaultTopologySpreading_5000Nodes_50000Pods,
                  Case::kDefaultTopologySpreading, 50000, 160)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
