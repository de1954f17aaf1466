// NUMA alignment: the model's rule (which NUMA node each unit goes to), ClusterState's
// bookkeeping of what the zones hold, the numa plugin in sessions (filter, devices,
// pipelining after an eviction), and reading NodeResourceTopology objects and pods' QoS.
#include "model/numa.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "k8s/numa_objects.h"
#include "model/cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using nlohmann::json;

constexpr Milli kCpus = kMilliPerUnit;

// A node of `zones` NUMA nodes of `cpus_each` CPUs (and `gpus_each` GPUs) each.
Node NumaNode(const std::string& name, int zones, int64_t cpus_each, int gpus_each = 0,
              NumaPolicy policy = NumaPolicy::kSingleNumaNode, NumaScope scope = NumaScope::kPod) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, zones * cpus_each * kCpus}};
  node.numa.policy = policy;
  node.numa.scope = scope;
  for (int z = 0; z < zones; ++z) {
    NumaZone zone;
    zone.id = z;
    zone.allocatable = ResourceVector{{kCpu, cpus_each * kCpus}};
    if (gpus_each > 0) zone.allocatable.Set(kGpu, gpus_each * kMilliPerUnit);
    node.numa.zones.push_back(zone);
  }
  node.gpus.resize(static_cast<size_t>(zones * gpus_each));
  return node;
}

TaskSpec Guaranteed(int64_t cpus, int32_t gpus = 0) {
  TaskSpec spec;
  spec.requests = ResourceVector{{kCpu, cpus * kCpus}};
  spec.gpu.count = gpus;
  spec.numa.guaranteed = true;
  return spec;
}

// A cluster with one queue and a job per call to AddTask.
struct Cluster {
  ClusterState c;
  QueueId queue = Must(c.AddQueue(NamedQueue()));
  static Queue NamedQueue() {
    Queue q;
    q.name = "q";
    return q;
  }
  TaskId AddTask(const std::string& name, TaskSpec spec, int32_t priority = 0) {
    Job job;
    job.name = name;
    job.queue = queue;
    job.priority = priority;
    spec.priority = priority;
    const JobId id = Must(c.AddJob(job));
    return Must(c.AddTask(id, c.AddSpec(std::move(spec)), name + "-0"));
  }
  std::vector<Milli> ZoneCpus(NodeId node) const {
    std::vector<Milli> out;
    for (const NumaZone& z : c.node(node).numa.zones) out.push_back(z.used.Get(kCpu));
    return out;
  }
};

TEST(NumaModel, UnitsGoToTheLowestNumaNodeThatHoldsThem) {
  Node node = NumaNode("n", 2, 16);
  std::vector<int32_t> device_zones;
  ASSERT_TRUE(PrepareNodeNuma(node.name, 0, &node.numa, &device_zones).ok());
  const ResourceVector ten{{kCpu, 10 * kCpus}}, eight{{kCpu, 8 * kCpus}};
  const NumaUnit units[] = {{&ten, 0, true}, {&ten, 0, true}, {&eight, 0, true}};
  ZoneRoom room = {node.numa.zones[0].allocatable, node.numa.zones[1].allocatable};
  std::vector<int32_t> zones;
  // 10 -> 0 (6 left), 10 -> 1 (6 left), 8 -> none.
  EXPECT_FALSE(FitZones(node.numa, units, /*guaranteed=*/true, &room, &zones));
  EXPECT_EQ(zones, (std::vector<int32_t>{0, 1, -1}));
  EXPECT_EQ(room[0].Get(kCpu), 6 * kCpus);
  // A unit that does not hold its room (an init container) takes none.
  const NumaUnit init[] = {{&ten, 0, false}, {&ten, 0, true}};
  room = {node.numa.zones[0].allocatable, node.numa.zones[1].allocatable};
  EXPECT_TRUE(FitZones(node.numa, init, true, &room, &zones));
  EXPECT_EQ(zones, (std::vector<int32_t>{0, 0}));
}

TEST(NumaModel, OnlyDevicesAlignForPodsThatAreNotGuaranteed) {
  EXPECT_TRUE(NumaAligns(kCpu, true));
  EXPECT_FALSE(NumaAligns(kCpu, false));
  EXPECT_FALSE(NumaAligns(kMemory, false));
  EXPECT_FALSE(NumaAligns(InternResource("hugepages-1Gi"), false));
  EXPECT_TRUE(NumaAligns(InternResource("example.com/nic"), false));
  Node node = NumaNode("n", 2, 16, 2);
  std::vector<int32_t> device_zones;
  ASSERT_TRUE(PrepareNodeNuma(node.name, 4, &node.numa, &device_zones).ok());
  EXPECT_EQ(device_zones, (std::vector<int32_t>{0, 0, 1, 1}));
  const ResourceVector cpus{{kCpu, 24 * kCpus}};
  const NumaUnit burstable_cpu[] = {{&cpus, 0, true}};
  EXPECT_FALSE(NeedsAlignment(node.numa, burstable_cpu, /*guaranteed=*/false));
  EXPECT_TRUE(NeedsAlignment(node.numa, burstable_cpu, /*guaranteed=*/true));
  const NumaUnit burstable_gpus[] = {{&cpus, 3 * kMilliPerUnit, true}};
  EXPECT_TRUE(NeedsAlignment(node.numa, burstable_gpus, false));
  ZoneRoom room = {node.numa.zones[0].allocatable, node.numa.zones[1].allocatable};
  std::vector<int32_t> zones;
  EXPECT_FALSE(FitZones(node.numa, burstable_gpus, false, &room, &zones));
}

TEST(NumaModel, BadDescriptionsNameTheNodeAndTheNumaNode) {
  Node twice = NumaNode("n", 2, 8);
  twice.numa.zones[1].id = 0;
  std::vector<int32_t> device_zones;
  EXPECT_TRUE(Contains(PrepareNodeNuma("n", 0, &twice.numa, &device_zones).message(),
                       "node \"n\": NUMA node 0 is listed twice"));
  Node gpus = NumaNode("g", 2, 8, 2);
  EXPECT_TRUE(Contains(
      PrepareNodeNuma("g", 8, &gpus.numa, &device_zones).message(),
      "node \"g\": NUMA: its NUMA nodes hold 4 GPUs (nvidia.com/gpu), but the node has 8"));
  EXPECT_FALSE(ParseNumaPolicy("SingleNUMANode").ok());
  EXPECT_EQ(Must(ParseNumaPolicy("best-effort")), NumaPolicy::kBestEffort);
  EXPECT_FALSE(ParseNumaScope("node").ok());
}

TEST(NumaCluster, ZonesAreChargedOnPlaceAndGivenBackOnRelease) {
  Cluster k;
  const NodeId n = Must(k.c.AddNode(NumaNode("n", 2, 16)));
  EXPECT_EQ(k.c.numa_node_count(), 1u);
  const TaskId a = k.AddTask("a", Guaranteed(10));
  const TaskId b = k.AddTask("b", Guaranteed(10));
  ASSERT_TRUE(k.c.Place(a, n, {}).ok());
  ASSERT_TRUE(k.c.Place(b, n, {}).ok());
  EXPECT_EQ(k.c.task(a).numa_zones, std::vector<int32_t>{0});
  EXPECT_EQ(k.c.task(b).numa_zones, std::vector<int32_t>{1});
  EXPECT_EQ(k.ZoneCpus(n), (std::vector<Milli>{10 * kCpus, 10 * kCpus}));
  k.c.Release(a);
  EXPECT_EQ(k.ZoneCpus(n), (std::vector<Milli>{0, 10 * kCpus}));
  // A Burstable pod takes its CPUs from the shared pool: no zone is charged.
  TaskSpec burstable = Guaranteed(4);
  burstable.numa.guaranteed = false;
  const TaskId c = k.AddTask("c", burstable);
  ASSERT_TRUE(k.c.Place(c, n, {}).ok());
  EXPECT_TRUE(k.c.task(c).numa_zones.empty());
  EXPECT_EQ(k.ZoneCpus(n), (std::vector<Milli>{0, 10 * kCpus}));
}

TEST(NumaCluster, ANodeUpdatePlacesTheRunningTasksAgainAndItsNumaCountFollows) {
  Cluster k;
  const NodeId n = Must(k.c.AddNode(NumaNode("n", 2, 16)));
  const TaskId a = k.AddTask("a", Guaranteed(10));
  const TaskId b = k.AddTask("b", Guaranteed(10));
  ASSERT_TRUE(k.c.Place(a, n, {}).ok());
  ASSERT_TRUE(k.c.Place(b, n, {}).ok());
  // Now one NUMA node of 32: both tasks fit it, in task order.
  ASSERT_TRUE(k.c.UpdateNode(n, NumaNode("n", 1, 32)).ok());
  EXPECT_EQ(k.c.task(a).numa_zones, std::vector<int32_t>{0});
  EXPECT_EQ(k.c.task(b).numa_zones, std::vector<int32_t>{0});
  EXPECT_EQ(k.ZoneCpus(n), std::vector<Milli>{20 * kCpus});
  // No NUMA description any more: the node aligns nothing.
  Node plain = NumaNode("n", 1, 32);
  plain.numa = NodeNuma{};
  ASSERT_TRUE(k.c.UpdateNode(n, plain).ok());
  EXPECT_EQ(k.c.numa_node_count(), 0u);
  EXPECT_TRUE(k.c.task(a).numa_zones.empty());
}

TEST(NumaSession, TheFilterRefusesAndTheReasonSaysSoUnlessThePluginIsLeftOut) {
  Cluster k;
  Must(k.c.AddNode(NumaNode("n", 2, 16)));
  k.AddTask("wide", Guaranteed(20));
  const Decisions d = RunSession(k.c);
  ASSERT_EQ(d.binds.size(), 0u);
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_TRUE(Contains(d.pending[0].reason,
                       "0/1 nodes are available: 1 node(s) cannot fit the pod in one NUMA node "
                       "(topology manager policy single-numa-node)"));
  // Without the plugin the node's total decides (as kube-scheduler would place it).
  EXPECT_EQ(RunSession(k.c, DefaultWithout("numa")).binds.size(), 1u);
}

TEST(NumaSession, TwoTasksOfOneSessionDoNotShareANumaNodesRoom) {
  Cluster k;
  const NodeId n = Must(k.c.AddNode(NumaNode("n", 2, 16, 2)));
  for (const char* name : {"a", "b", "c"}) k.AddTask(name, Guaranteed(10, 1));
  const Decisions d = RunSession(k.c);
  // 10 CPUs and a GPU on NUMA node 0, then on node 1; the third fits neither.
  ASSERT_EQ(d.binds.size(), 2u);
  EXPECT_EQ(d.binds[0].gpus, std::vector<int32_t>{0});
  EXPECT_EQ(d.binds[1].gpus, std::vector<int32_t>{2});
  ClusterState after = k.c;
  for (const BindDecision& b : d.binds) ASSERT_TRUE(after.Place(b.task, n, b.gpus).ok());
  EXPECT_EQ(after.task(d.binds[1].task).numa_zones, std::vector<int32_t>{1});
}

TEST(NumaSession, PreemptionPipelinesOntoTheNumaNodeAVictimFrees) {
  Cluster k;
  const NodeId n = Must(k.c.AddNode(NumaNode("n", 2, 16)));
  const TaskId low0 = k.AddTask("low0", Guaranteed(14), 0);
  const TaskId low1 = k.AddTask("low1", Guaranteed(14), 0);
  ASSERT_TRUE(k.c.Place(low0, n, {}).ok());
  ASSERT_TRUE(k.c.Place(low1, n, {}).ok());
  k.AddTask("high", Guaranteed(12), 100);
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = {"enqueue", "allocate", "preempt"};
  const Decisions d = RunSession(k.c, config);
  // The node has 4 CPUs free, 2 on each NUMA node: one victim frees a NUMA node.
  EXPECT_EQ(d.evictions.size(), 1u);
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].node, n);
}

TEST(NodeResourceTopology, AttributesZonesAndTheDeprecatedPolicies) {
  json nrt = {
      {"metadata", {{"name", "n1"}, {"uid", "u1"}}},
      {"attributes",
       {{{"name", "topologyManagerPolicy"}, {"value", "single-numa-node"}},
        {{"name", "topologyManagerScope"}, {"value", "pod"}}}},
      {"zones",
       {{{"name", "node-1"},
         {"type", "Node"},
         {"resources",
          {{{"name", "cpu"}, {"capacity", "16"}, {"allocatable", "15"}, {"available", "3"}},
           {{"name", "nvidia.com/gpu"}, {"capacity", 4}, {"allocatable", 4}, {"available", 1}}}}},
        {{"name", "node-0"},
         {"type", "Node"},
         {"resources", {{{"name", "cpu"}, {"capacity", "16"}, {"allocatable", "15"}}}}},
        {{"name", "core-7"}, {"type", "Core"}}}}};
  const k8s::NodeResourceTopologyInfo info = Must(k8s::ParseNodeResourceTopology(nrt));
  EXPECT_EQ(info.numa.policy, NumaPolicy::kSingleNumaNode);
  EXPECT_EQ(info.numa.scope, NumaScope::kPod);
  ASSERT_EQ(info.numa.zones.size(), 2u);  // the Core zone is left out
  EXPECT_EQ(info.numa.zones[0].id, 1);
  EXPECT_EQ(info.numa.zones[0].allocatable.Get(kCpu), 15 * kCpus);  // allocatable, not available
  EXPECT_EQ(info.numa.zones[0].allocatable.Get(kGpu), 4 * kMilliPerUnit);

  json old = {{"metadata", {{"name", "n2"}}},
              {"topologyPolicies", {"SingleNUMANodePodLevel"}},
              {"zones", json::array()}};
  const k8s::NodeResourceTopologyInfo deprecated = Must(k8s::ParseNodeResourceTopology(old));
  EXPECT_EQ(deprecated.numa.policy, NumaPolicy::kSingleNumaNode);
  EXPECT_EQ(deprecated.numa.scope, NumaScope::kPod);

  for (const auto& [bad, part] : std::vector<std::pair<json, std::string>>{
           {{{"metadata", {{"name", "b"}}},
             {"attributes", {{{"name", "topologyManagerPolicy"}, {"value", "strict"}}}},
             {"zones", json::array()}},
            "noderesourcetopology b: attributes.topologyManagerPolicy: unknown topology manager "
            "policy \"strict\""},
           {{{"metadata", {{"name", "b"}}}, {"zones", {{{"name", "numa0"}, {"type", "Node"}}}}},
            "noderesourcetopology b: zones[0].name: \"numa0\" is not a NUMA node's name"},
           {{{"metadata", {{"name", "b"}}},
             {"zones",
              {{{"name", "node-0"},
                {"type", "Node"},
                {"resources", {{{"name", "cpu"}, {"allocatable", "lots"}}}}}}}},
            "noderesourcetopology b: zones[0].resources[0].cpu"},
           {{{"metadata", {{"name", "b"}}}, {"zones", "none"}}, "zones: expected a list"}}) {
    auto r = k8s::ParseNodeResourceTopology(bad);
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_TRUE(Contains(r.status().message(), part));
  }
}

json Container(json requests, json limits) {
  return {{"name", "c"}, {"resources", {{"requests", requests}, {"limits", limits}}}};
}

TEST(PodQos, GuaranteedAsTheApiSaysAndContainersInAdmissionOrder) {
  const json cpu_mem = {{"cpu", "2"}, {"memory", "1Gi"}};
  // Limits alone: requests take them.
  EXPECT_TRUE(k8s::NumaDemandOf({{"containers", {Container(json::object(), cpu_mem)}}}).guaranteed);
  // Requests below limits, or a limit missing: Burstable.
  EXPECT_FALSE(
      k8s::NumaDemandOf({{"containers", {Container({{"cpu", "1"}, {"memory", "1Gi"}}, cpu_mem)}}})
          .guaranteed);
  EXPECT_FALSE(
      k8s::NumaDemandOf({{"containers", {Container(cpu_mem, {{"cpu", "2"}})}}}).guaranteed);
  // Nothing at all: BestEffort.
  EXPECT_FALSE(k8s::NumaDemandOf({{"containers", {{{"name", "c"}}}}}).guaranteed);
  // An init container without limits makes the pod Burstable.
  EXPECT_FALSE(k8s::NumaDemandOf({{"initContainers", {{{"name", "i"}}}},
                                  {"containers", {Container(json::object(), cpu_mem)}}})
                   .guaranteed);
  // Pod-level resources decide when set.
  EXPECT_TRUE(
      k8s::NumaDemandOf({{"resources", {{"limits", cpu_mem}}}, {"containers", {{{"name", "c"}}}}})
          .guaranteed);
  // Init containers come first; only sidecars keep their room.
  json init = Container(json::object(), cpu_mem);
  json sidecar = Container(json::object(), cpu_mem);
  sidecar["restartPolicy"] = "Always";
  const NumaDemand demand = k8s::NumaDemandOf(
      {{"initContainers", {init, sidecar}},
       {"containers", {Container(json::object(), {{"cpu", "4"}, {"memory", "1Gi"}})}}});
  EXPECT_TRUE(demand.guaranteed);
  ASSERT_EQ(demand.containers.size(), 3u);
  EXPECT_FALSE(demand.containers[0].holds);
  EXPECT_TRUE(demand.containers[1].holds);
  EXPECT_EQ(demand.containers[2].requests.Get(kCpu), 4 * kCpus);
}

json NodeObject(const std::string& name, int gpus) {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}}},
          {"status",
           {{"allocatable",
             {{"cpu", "32"}, {"memory", "64Gi"}, {"pods", "110"}, {"nvidia.com/gpu", gpus}}}}}};
}

json Nrt(const std::string& name, int gpus_each) {
  json zones = json::array();
  for (int z = 0; z < 2; ++z) {
    zones.push_back({{"name", "node-" + std::to_string(z)},
                     {"type", "Node"},
                     {"resources",
                      {{{"name", "cpu"}, {"allocatable", "16"}},
                       {{"name", "nvidia.com/gpu"}, {"allocatable", gpus_each}}}}});
  }
  return {{"metadata", {{"name", name}, {"uid", "nrt-" + name}}},
          {"attributes", {{{"name", "topologyManagerPolicy"}, {"value", "single-numa-node"}}}},
          {"zones", zones}};
}

TEST(ClusterCacheNuma, TheObjectReachesItsNodeInEitherOrderAndAMismatchIsSaid) {
  ClusterCache c("gantry");
  c.OnNodeResourceTopology(k8s::EventType::kAdded, Nrt("a", 2));
  c.OnNode(k8s::EventType::kAdded, NodeObject("a", 4));
  c.OnNode(k8s::EventType::kAdded, NodeObject("b", 4));
  c.OnNodeResourceTopology(k8s::EventType::kAdded, Nrt("b", 2));
  for (const char* name : {"a", "b"}) {
    const Node& node = c.state().node(c.state().FindNode(name));
    EXPECT_TRUE(node.numa.enforces()) << name;
    EXPECT_EQ(node.gpus[2].numa_node, 1) << name;
  }
  EXPECT_EQ(c.state().numa_node_count(), 2u);
  // 3 + 3 GPUs on a node of 4: not known, said once, and the node keeps scheduling.
  c.OnNodeResourceTopology(k8s::EventType::kModified, Nrt("a", 3));
  c.OnNodeResourceTopology(k8s::EventType::kModified, Nrt("a", 3));
  EXPECT_FALSE(c.state().node(c.state().FindNode("a")).numa.aligns());
  int said = 0;
  for (const ObjectEvent& e : c.TakeProblems()) {
    if (e.reason == "InvalidNodeResourceTopology") {
      ++said;
      EXPECT_TRUE(Contains(e.message, "its NUMA nodes hold 6 GPUs"));
    }
  }
  EXPECT_EQ(said, 1);
  c.OnNodeResourceTopology(k8s::EventType::kDeleted, Nrt("b", 2));
  EXPECT_FALSE(c.state().node(c.state().FindNode("b")).numa.aligns());
  EXPECT_EQ(c.state().numa_node_count(), 0u);
}

}  // namespace
}  // namespace gantry
