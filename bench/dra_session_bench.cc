// One scheduling session placing pods with DRA claims, in the shape of kube-scheduler's
// scheduler_perf workload SchedulingWithResourceClaimTemplate (test/integration/
// scheduler_perf/dra): N nodes, each publishing its devices in one ResourceSlice of a
// driver whose DeviceClass selects them by CEL, and P pending pods with one claim each,
// made from a template (so each pod has a claim of its own, and a spec of its own), for
// one device. kube-scheduler's threshold for 500 nodes / 5,000 pods is 120 pods/s; its
// runs reach about 450 on 6 cores.
//
// CEL is upstream's (src/dra/), its verdicts cached per (expression, device) across the
// sessions of a run as the daemon caches them; the first session pays for them.
//
// The third argument is the daemon's device alignment (deviceAlignmentAttributes): 0 off;
// 1 on, as by default, with devices that publish no NUMA node (what most drivers publish
// today); 2 on, with devices on two NUMA nodes (resource.kubernetes.io/numaNode).
//   dra_session_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "dra/selector_cache.h"
#include "engine/dra/alignment.h"
#include "engine/session.h"
#include "session_loop.h"

namespace gantry {
namespace {

constexpr const char* kDriver = "gpu.example.com";
constexpr const char* kClassSelector = R"(device.driver == "gpu.example.com")";
constexpr int kDevicesPerNode = 10;  // room for every pod: 10 x 500 = 5,000

enum Alignment { kAlignmentOff = 0, kAlignmentOnNoAttributes = 1, kAlignmentOnNumaNodes = 2 };

struct Workload {
  ClusterState cluster;
  std::vector<dra::ResourceSlice> slices;
  dra::ClaimTable claims;
  dra::Inventory inventory;
  dra::SelectorCache cache;
  std::unique_ptr<dra::CelVerdicts> verdicts;
  std::vector<dra::QualifiedName> align_by;
  DeviceInputs inputs;
};

std::unique_ptr<Workload> MakeWorkload(int nodes, int pods, Alignment alignment) {
  auto w = std::make_unique<Workload>();
  ClusterState& c = w->cluster;
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.allocatable = {
        {kCpu, 32'000}, {kMemory, Milli{128} * 1024 * 1024 * 1024 * 1000}, {kPods, 110'000}};
    n.labels.Set("kubernetes.io/hostname", n.name);
    dra::ResourceSlice slice;
    slice.name = n.name + "-" + kDriver;
    slice.driver = kDriver;
    slice.pool = {n.name, 1, 1};
    slice.node_selection = dra::NodeSelection{};
    slice.node_selection->node_name = n.name;
    for (int d = 0; d < kDevicesPerNode; ++d) {
      dra::Device device;
      device.name = "gpu-" + std::to_string(d);
      device.attributes[std::string(kDriver) + "/index"] = int64_t{d};
      if (alignment == kAlignmentOnNumaNodes) {
        device.attributes[std::string(dra::kNumaNodeAttribute)] = int64_t{d % 2};
      }
      slice.devices.push_back(std::move(device));
    }
    w->slices.push_back(std::move(slice));
    c.AddNode(std::move(n)).value();
  }
  Queue queue;
  queue.name = "default";
  const QueueId q = c.AddQueue(std::move(queue)).value();
  for (int p = 0; p < pods; ++p) {
    const std::string name = "pod-" + std::to_string(p);
    dra::ResourceClaim claim;
    claim.name_space = "default";
    claim.name = name + "-gpu";
    claim.uid = "uid-" + claim.name;
    dra::DeviceRequest request;
    request.name = "gpu";
    request.exactly = dra::DeviceRequestSpec{};
    request.exactly->device_class_name = "gpu";
    claim.spec.requests.push_back(std::move(request));
    TaskSpec spec;
    spec.role = "worker";
    spec.namespace_ = "default";
    spec.requests = {{kCpu, 100}, {kMemory, Milli{256} * 1024 * 1024 * 1000}};
    spec.resource_claims = {dra::ClaimKey(claim.name_space, claim.name)};
    w->claims[spec.resource_claims[0]] = std::move(claim);
    Job job;
    job.name = name;
    job.queue = q;
    job.creation = p;
    const JobId id = c.AddJob(std::move(job)).value();
    c.AddTask(id, c.AddSpec(std::move(spec)), name).value();
  }
  w->inventory = dra::Inventory(w->slices, {dra::DeviceClass{"gpu", {kClassSelector}, {}, {}}});
  w->verdicts = std::make_unique<dra::CelVerdicts>(w->cache);
  w->inputs = DeviceInputs{&w->inventory, &w->claims, w->verdicts.get(), nullptr};
  if (alignment != kAlignmentOff) {
    w->align_by = {std::string(dra::kNumaNodeAttribute), std::string(dra::kPcieRootAttribute)};
    w->inputs.align_by = &w->align_by;
  }
  return w;
}

void BM_SchedulingWithResourceClaimTemplate(benchmark::State& state) {
  static std::map<std::tuple<int, int, int>, std::unique_ptr<Workload>> workloads;
  const int nodes = static_cast<int>(state.range(0));
  const int pods = static_cast<int>(state.range(1));
  const auto alignment = static_cast<Alignment>(state.range(2));
  auto& w = workloads[{nodes, pods, alignment}];
  if (!w) w = MakeWorkload(nodes, pods, alignment);
  const Policy policy = Policy::Compile(SchedulerConfig::Default()).value();
  Snapshot snapshot(w->cluster);
  snapshot.set_devices(w->inputs);
  const size_t placed = bench::RunSessions(state, snapshot, policy).binds.size();
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["pods/s"] = benchmark::Counter(static_cast<double>(placed) * state.iterations(),
                                                benchmark::Counter::kIsRate);
  state.counters["cel_evaluations"] = static_cast<double>(w->cache.evaluations());
}
BENCHMARK(BM_SchedulingWithResourceClaimTemplate)
    ->ArgNames({"nodes", "pods", "align"})
    ->Args({500, 5000, kAlignmentOff})
    ->Args({500, 5000, kAlignmentOnNoAttributes})
    ->Args({500, 5000, kAlignmentOnNumaNodes})
    ->Args({5000, 5000, kAlignmentOff})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gantry

BENCHMARK_MAIN();
