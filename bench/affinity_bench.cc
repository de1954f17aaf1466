// kube-scheduler's scheduler_perf affinity workloads at 5,000 nodes
// (test/integration/scheduler_perf/affinity/performance-config.yaml and its templates),
// one engine session for the measured pods. Nodes as node-default.yaml: 4 CPUs, 32Gi,
// 110 pods, a kubernetes.io/hostname label, and topology.kubernetes.io/zone=zone1 where
// the workload labels them (labelNodePrepareStrategy). Pods as the templates: 100m CPU,
// 500Mi, each its own job, one queue. The init pods are placed first, a session per
// createPods operation, and bound; then the measured pods are pending, and each
// iteration runs one session that places them.
//
// Reports measured pods placed per second of session time, next to kube-scheduler's
// threshold for the workload (pods/s, scheduler_perf's `threshold`).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/session.h"

namespace gantry {
namespace {

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";

// The templates the workloads use.
enum class PodTemplate {
  kDefault,                // pod-default.yaml
  kPodAntiAffinity,        // pod-with-pod-anti-affinity.yaml: color=green, hostname
  kPodAffinity,            // pod-with-pod-affinity.yaml: color=blue, zone
  kPreferredAffinity,      // pod-with-preferred-pod-affinity.yaml: color=red, hostname, 1
  kPreferredAntiAffinity,  // pod-with-preferred-pod-anti-affinity.yaml: color=yellow, 1
  kNodeAffinity,           // pod-with-node-affinity.yaml: zone In [zone1, zone2]
};

struct CreatePods {
  PodTemplate pod;
  int count;
  std::string namespace_;
};

struct Workload {
  const char* name;
  bool zone_label;
  std::vector<CreatePods> init;
  CreatePods measured;
  int threshold;  // kube-scheduler's, pods/s
};

// The 5000Nodes workloads with thresholds.
const std::vector<Workload>& Workloads() {
  static const auto* workloads = new std::vector<Workload>{
      {"SchedulingPodAntiAffinity/5000Nodes_2000Pods",
       false,
       {{PodTemplate::kPodAntiAffinity, 1000, "sched-0"}},
       {PodTemplate::kPodAntiAffinity, 2000, "sched-1"},
       60},
      {"SchedulingPodAffinity/5000Nodes_5000Pods",
       true,
       {{PodTemplate::kPodAffinity, 5000, "sched-0"}},
       {PodTemplate::kPodAffinity, 5000, "sched-1"},
       35},
      {"SchedulingPreferredPodAffinity/5000Nodes_5000Pods",
       false,
       {{PodTemplate::kPreferredAffinity, 5000, "sched-0"}},
       {PodTemplate::kPreferredAffinity, 5000, "sched-1"},
       90},
      // performance-config.yaml gives this workload the preferred-affinity template; its
      // name and threshold are for preferred anti-affinity, which is what is measured here.
      {"SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods",
       false,
       {{PodTemplate::kPreferredAntiAffinity, 5000, "sched-0"}},
       {PodTemplate::kPreferredAntiAffinity, 5000, "sched-1"},
       90},
      {"SchedulingNodeAffinity/5000Nodes_10000Pods",
       true,
       {{PodTemplate::kNodeAffinity, 5000, "default"}},
       {PodTemplate::kNodeAffinity, 10000, "default"},
       220},
      {"MixedSchedulingBasePod/5000Nodes_5000Pods",
       true,
       {{PodTemplate::kDefault, 2000, "sched-0"},
        {PodTemplate::kPodAffinity, 2000, "sched-0"},
        {PodTemplate::kPodAntiAffinity, 2000, "sched-0"},
        {PodTemplate::kPreferredAffinity, 2000, "sched-0"},
        {PodTemplate::kPreferredAntiAffinity, 2000, "sched-0"}},
       {PodTemplate::kDefault, 5000, "default"},
       140},
  };
  return *workloads;
}

PodAffinityTerm ColorTerm(const std::string& color, const std::string& topology, int weight) {
  PodAffinityTerm t;
  t.selector = LabelSelector{};
  t.selector->match_labels.Set("color", color);
  t.namespaces = {"sched-1", "sched-0"};
  t.topology_key = topology;
  t.weight = weight;
  return t;
}

TaskSpec PodOf(PodTemplate kind, const std::string& ns) {
  TaskSpec s;
  s.role = "pause";
  s.requests = {{kCpu, 100}, {kMemory, Milli{500} * 1024 * 1024 * 1000}, {kPods, 1000}};
  s.namespace_ = ns;
  switch (kind) {
    case PodTemplate::kDefault:
      break;
    case PodTemplate::kPodAntiAffinity:
      s.labels.Set("color", "green");
      s.pod_affinity.required_anti_affinity = {ColorTerm("green", kHostname, 0)};
      break;
    case PodTemplate::kPodAffinity:
      s.labels.Set("color", "blue");
      s.pod_affinity.required_affinity = {ColorTerm("blue", kZone, 0)};
      break;
    case PodTemplate::kPreferredAffinity:
      s.labels.Set("color", "red");
      s.pod_affinity.preferred_affinity = {ColorTerm("red", kHostname, 1)};
      break;
    case PodTemplate::kPreferredAntiAffinity:
      s.labels.Set("color", "yellow");
      s.pod_affinity.preferred_anti_affinity = {ColorTerm("yellow", kHostname, 1)};
      break;
    case PodTemplate::kNodeAffinity:
      s.affinity.terms = {{{kZone, SelectorRequirement::Op::kIn, {"zone1", "zone2"}}}};
      break;
  }
  return s;
}

struct Built {
  ClusterState cluster;
  size_t measured = 0;
  size_t init_placed = 0;
};

// Adds `op`'s pods as pending jobs of their own.
void AddPods(ClusterState& c, const CreatePods& op, int64_t* creation) {
  const SpecId spec = c.AddSpec(PodOf(op.pod, op.namespace_));
  for (int i = 0; i < op.count; ++i) {
    Job job;
    job.name = op.namespace_ + "-pod-" + std::to_string(*creation);
    job.creation = (*creation)++;
    const JobId id = c.AddJob(std::move(job)).value();
    c.AddTask(id, spec, c.job(id).name).value();
  }
}

std::unique_ptr<Built> Build(const Workload& w, const Policy& policy) {
  auto b = std::make_unique<Built>();
  ClusterState& c = b->cluster;
  for (int i = 0; i < 5000; ++i) {
    Node n;
    n.name = "scheduler-perf-" + std::to_string(i);
    n.allocatable = {
        {kCpu, 4000}, {kMemory, Milli{32} * 1024 * 1024 * 1024 * 1000}, {kPods, 110'000}};
    n.labels.Set(kHostname, n.name);
    if (w.zone_label) n.labels.Set(kZone, "zone1");
    c.AddNode(std::move(n)).value();
  }
  Queue q;
  q.name = "default";
  c.AddQueue(std::move(q)).value();
  int64_t creation = 0;
  for (const CreatePods& op : w.init) {
    AddPods(c, op, &creation);
    Snapshot snapshot(c);
    Decisions d = Session(snapshot, policy).Run();
    for (const BindDecision& bind : d.binds) c.Place(bind.task, bind.node, bind.gpus).ok();
    b->init_placed += d.binds.size();
  }
  AddPods(c, w.measured, &creation);
  b->measured = static_cast<size_t>(w.measured.count);
  return b;
}

// Argument `plugin` 0: the measured session runs without interpodaffinity (on the same
// cluster, built with it), to show what the plugin costs pods that have no terms.
void BM_Affinity(benchmark::State& state) {
  static std::map<int64_t, std::unique_ptr<Built>> cache;
  const Workload& w = Workloads()[static_cast<size_t>(state.range(0))];
  state.SetLabel(w.name);
  const Policy policy = Policy::Compile(SchedulerConfig::Default()).value();
  auto& built = cache[state.range(0)];
  if (!built) built = Build(w, policy);
  SchedulerConfig measured_config = SchedulerConfig::Default();
  if (state.range(1) == 0) {
    std::erase_if(measured_config.plugins,
                  [](const PluginConfig& p) { return p.name == "interpodaffinity"; });
  }
  const Policy measured_policy = Policy::Compile(measured_config).value();
  Snapshot snapshot(built->cluster);
  size_t placed = 0;
  std::set<NodeId> nodes_used;
  for (auto _ : state) {
    Session session(snapshot, measured_policy);
    Decisions d = session.Run();
    placed = d.binds.size();
    state.PauseTiming();
    nodes_used.clear();
    for (const BindDecision& bind : d.binds) nodes_used.insert(bind.node);
    state.ResumeTiming();
    benchmark::DoNotOptimize(d);
  }
  state.counters["init_placed"] = static_cast<double>(built->init_placed);
  state.counters["measured"] = static_cast<double>(built->measured);
  state.counters["placed"] = static_cast<double>(placed);
  // Where they went: one node each under anti-affinity, few under preferred affinity.
  state.counters["nodes_used"] = static_cast<double>(nodes_used.size());
  state.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(placed),
                                                    benchmark::Counter::kIsIterationInvariantRate);
  state.counters["kube_threshold"] = w.threshold;
}

BENCHMARK(BM_Affinity)
    ->ArgNames({"workload", "plugin"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1}})
    ->Args({5, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
