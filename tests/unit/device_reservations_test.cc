// Dynamic Resource Allocation in a session (engine/device_reservations.h, asked by the
// predicates plugin): each pod's claims allocated on its node, devices never given twice in
// a session, a rolled-back gang giving its devices back, a shared claim allocated once, an
// allocated claim pinning its pods, the devices of every claim's allocation taken, a
// victim's devices free for the preemptor once it is gone, and kube-scheduler's words.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/device_reservations.h"
#include "sim/policies.h"
#include "tests/unit/engine_dra_world.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using dra::Allocation;
using dra::AllocationResult;
using dra::ResourceClaim;
using engine_dra::Devices;
using engine_dra::kClassSelector;
using engine_dra::kDriver;
using engine_dra::RunWithDevices;

TaskSpec Claiming(std::vector<std::string> claims, Milli cpu = 1000) {
  TaskSpec spec = CpuSpec(cpu);
  spec.namespace_ = "ml";
  spec.resource_claims = std::move(claims);
  return spec;
}

// A job of one task using `claims`.
JobId AddClaimJob(ClusterState& c, QueueId q, const std::string& name,
                  std::vector<std::string> claims, int32_t priority = 0, Milli cpu = 1000) {
  TaskSpec spec = Claiming(std::move(claims), cpu);
  spec.priority = priority;
  return AddJob(c, name, q, spec, 1, 1, priority);
}

// "task@node[device,...]" for each bind; "=" for a claim allocated before.
std::string BindsWithDevices(const ClusterState& c, const Decisions& d) {
  std::string out;
  for (const BindDecision& b : d.binds) {
    out += (out.empty() ? "" : " ") + c.task(b.task).name + "@" + c.node(b.node).name + "[";
    for (size_t i = 0; i < b.devices.size(); ++i) {
      if (i > 0) out += ";";
      if (!b.devices[i]) {
        out += "=";
        continue;
      }
      for (size_t r = 0; r < b.devices[i]->results.size(); ++r) {
        out += (r > 0 ? "," : "") + b.devices[i]->results[r].device;
      }
    }
    out += "]";
  }
  return out;
}

TEST(DeviceReservations, EachPodsClaimGetsDevicesNoOtherPodHas) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 2);
  AddClaimJob(c, q, "a", {devices.AddClaim("a")});
  AddClaimJob(c, q, "b", {devices.AddClaim("b")});
  const JobId third = AddClaimJob(c, q, "c", {devices.AddClaim("c")});
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(BindsWithDevices(c, d), "a-0@n0[gpu-0] b-0@n0[gpu-1]");
  EXPECT_NE(PendingReasonOf(d, third).find("cannot allocate all claims"), std::string::npos)
      << PendingReasonOf(d, third);
  // The allocation is for the node it was made on, as upstream writes it.
  ASSERT_EQ(d.binds.size(), 2u);
  const Allocation& first = *d.binds[0].devices[0];
  ASSERT_TRUE(first.node_selector.has_value());
  EXPECT_TRUE(SelectorTermsMatch(*first.node_selector, {}, "n0"));
  EXPECT_FALSE(SelectorTermsMatch(*first.node_selector, {}, "n1"));
}

TEST(DeviceReservations, OnlyNodesWithTheDevicesAreFeasible) {
  ClusterState c;
  AddCpuNode(c, "cpu-only", 64000);
  AddCpuNode(c, "gpu-node", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("gpu-node", 4);
  AddClaimJob(c, q, "two", {devices.AddClaim("two", 2)});
  AddClaimJob(c, q, "plain", {});
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(BindsWithDevices(c, d).find("two-0@gpu-node[gpu-0,gpu-1]"), 0u)
      << BindsWithDevices(c, d);
}

// A gang whose members cannot all get devices takes none: the statement's rollback gives
// back the devices of the members placed before, and a later job gets them.
TEST(DeviceReservations, ARolledBackGangGivesItsDevicesBack) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 2);
  const JobId gang = AddEmptyJob(c, "gang", q, /*min_member=*/3, 0, /*creation=*/1);
  for (int i = 0; i < 3; ++i) {
    const std::string name = "gang-" + std::to_string(i);
    Must(c.AddTask(gang, c.AddSpec(Claiming({devices.AddClaim(name)})), name));
  }
  const JobId solo = AddEmptyJob(c, "solo", q, 1, 0, /*creation=*/2);
  Must(c.AddTask(solo, c.AddSpec(Claiming({devices.AddClaim("solo", 2)})), "solo-0"));
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(BindsWithDevices(c, d), "solo-0@n0[gpu-0,gpu-1]");
}

// A claim shared by two pods is allocated once, by the first; the second uses it as it is,
// on a node the allocation reaches.
TEST(DeviceReservations, ASharedClaimIsAllocatedOnceAndPinsItsPods) {
  ClusterState c;
  AddCpuNode(c, "n0", 1500);  // room for one pod each
  AddCpuNode(c, "n1", 1500);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n1", 1);
  const std::string shared = devices.AddClaim("shared");
  AddClaimJob(c, q, "first", {shared});
  const JobId second = AddClaimJob(c, q, "second", {shared});
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(BindsWithDevices(c, d), "first-0@n1[gpu-0]");
  // n1 is full, and the claim's allocation reaches n1 alone.
  EXPECT_NE(PendingReasonOf(d, second).find("resourceclaim not available on the node"),
            std::string::npos)
      << PendingReasonOf(d, second);

  // With room on n1, both run there, the claim allocated once.
  ClusterState roomy;
  AddCpuNode(roomy, "n0", 64000);
  AddCpuNode(roomy, "n1", 64000);
  const QueueId rq = AddQueue(roomy, "q");
  AddClaimJob(roomy, rq, "first", {shared});
  AddClaimJob(roomy, rq, "second", {shared});
  EXPECT_EQ(BindsWithDevices(roomy, RunWithDevices(roomy, devices)),
            "first-0@n1[gpu-0] second-0@n1[=]");
}

TEST(DeviceReservations, AnAllocatedClaimPinsItsPodToTheAllocationsNodes) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  AddCpuNode(c, "n1", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 1);
  devices.AddNodeGpus("n1", 1);
  const std::string claim = devices.AddClaim("pinned");
  devices.Allocate(claim, "n1", "gpu-0", /*reserved=*/0);
  AddClaimJob(c, q, "p", {claim});
  EXPECT_EQ(BindsWithDevices(c, RunWithDevices(c, devices)), "p-0@n1[=]");
}

// GatherAllocatedState: a device in any claim's allocation is taken, whoever made it and
// whether or not a pod of this cluster uses the claim.
TEST(DeviceReservations, DevicesOfEveryClaimsAllocationAreTaken) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 2);
  devices.Allocate(devices.AddClaim("elsewhere"), "n0", "gpu-0");
  AddClaimJob(c, q, "a", {devices.AddClaim("a")});
  const JobId b = AddClaimJob(c, q, "b", {devices.AddClaim("b")});
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(BindsWithDevices(c, d), "a-0@n0[gpu-1]");
  EXPECT_NE(PendingReasonOf(d, b).find("cannot allocate all claims"), std::string::npos);
}

TEST(DeviceReservations, KubeSchedulersWordsForClaimsThatCannotBeUsed) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 1);
  const JobId missing = AddClaimJob(c, q, "missing", {"ml/not-made-yet"});
  const std::string deleting = devices.AddClaim("deleting");
  devices.claims.at(deleting).deleting = true;
  const JobId gone = AddClaimJob(c, q, "gone", {deleting});
  const JobId error = AddClaimJob(c, q, "error", {devices.AddClaim("bad", 1, {"device.x"})});
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_TRUE(d.binds.empty());
  EXPECT_NE(PendingReasonOf(d, missing)
                .find("waiting for dynamic resource controller to create the resourceclaim "
                      "\"not-made-yet\""),
            std::string::npos)
      << PendingReasonOf(d, missing);
  EXPECT_NE(PendingReasonOf(d, gone).find("resourceclaim \"deleting\" is being deleted"),
            std::string::npos)
      << PendingReasonOf(d, gone);
  EXPECT_NE(PendingReasonOf(d, error).find("error allocating the claims' devices"),
            std::string::npos)
      << PendingReasonOf(d, error);
  // The error itself, as upstream's Filter reports it.
  EXPECT_NE(PendingReasonOf(d, error).find("no such key: device.x"), std::string::npos)
      << PendingReasonOf(d, error);
}

// Filter remembers its answers per node and claim spec (engine/device_filter_memo.h): a
// device taken in a pool that every node sees changes every node's answer, and claims of
// another spec are asked anew.
TEST(DeviceReservations, RememberedAnswersFollowTheDevicesTakenAndTheClaimsSpec) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  AddCpuNode(c, "n1", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  dra::ResourceSlice fabric;
  fabric.name = "fabric";
  fabric.driver = kDriver;
  fabric.pool = {"fabric", 1, 1};
  fabric.node_selection = dra::NodeSelection{};
  fabric.node_selection->all_nodes = true;
  dra::Device device;
  device.name = "link-0";
  fabric.devices.push_back(device);
  devices.slices.push_back(fabric);
  AddClaimJob(c, q, "a", {devices.AddClaim("a")});
  const JobId b = AddClaimJob(c, q, "b", {devices.AddClaim("b")});
  const Decisions d = RunWithDevices(c, devices);
  ASSERT_EQ(d.binds.size(), 1u) << BindsWithDevices(c, d);
  EXPECT_NE(PendingReasonOf(d, b).find("cannot allocate all claims"), std::string::npos)
      << PendingReasonOf(d, b);

  ClusterState one_node;
  AddCpuNode(one_node, "n0", 64000);
  const QueueId oq = AddQueue(one_node, "q");
  Devices gpus;
  gpus.AddNodeGpus("n0", 2);
  AddClaimJob(one_node, oq, "one", {gpus.AddClaim("one")});
  const JobId three = AddClaimJob(one_node, oq, "three", {gpus.AddClaim("three", 3)});
  AddClaimJob(one_node, oq, "another", {gpus.AddClaim("another")});
  const Decisions shapes = RunWithDevices(one_node, gpus);
  EXPECT_EQ(BindsWithDevices(one_node, shapes), "one-0@n0[gpu-0] another-0@n0[gpu-1]");
  EXPECT_NE(PendingReasonOf(shapes, three).find("cannot allocate all claims"), std::string::npos)
      << PendingReasonOf(shapes, three);
}

// Random clusters (devices of each node, devices every node sees, gangs): pods whose claims
// share a spec, between which the memo shares answers, are placed with the same devices as
// pods whose claims each have a spec of their own (a request name of their own), and never
// without devices or on a device given twice.
TEST(DeviceReservations, RememberedAnswersDecideAsAnswersAskedAnew) {
  for (int seed = 1; seed <= 40; ++seed) {
    auto run = [seed](bool own_specs) {
      std::mt19937 rng(static_cast<uint32_t>(seed));
      auto below = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
      ClusterState c;
      Devices devices;
      const int nodes = 2 + below(4);
      for (int n = 0; n < nodes; ++n) {
        const std::string name = "n" + std::to_string(n);
        AddCpuNode(c, name, 64000);
        devices.AddNodeGpus(name, below(4));
      }
      dra::ResourceSlice fabric;
      fabric.name = "fabric";
      fabric.driver = kDriver;
      fabric.pool = {"fabric", 1, 1};
      fabric.node_selection = dra::NodeSelection{};
      fabric.node_selection->all_nodes = true;
      for (int d = below(4); d > 0; --d) {
        dra::Device link;
        link.name = "link-" + std::to_string(d);
        fabric.devices.push_back(link);
      }
      devices.slices.push_back(fabric);
      const QueueId q = AddQueue(c, "q");
      const int jobs = 4 + below(12);
      for (int j = 0; j < jobs; ++j) {
        const int tasks = 1 + below(2);
        const JobId job = AddEmptyJob(c, "j" + std::to_string(j), q, tasks, 0, j);
        for (int t = 0; t < tasks; ++t) {
          const std::string name = "j" + std::to_string(j) + "-" + std::to_string(t);
          const std::string claim = devices.AddClaim(name, 1 + below(2));
          if (own_specs) devices.claims.at(claim).spec.requests[0].name = "gpu-" + name;
          Must(c.AddTask(job, c.AddSpec(Claiming({claim})), name));
        }
      }
      return BindsWithDevices(c, RunWithDevices(c, devices));
    };
    const std::string shared = run(false);
    EXPECT_EQ(shared, run(true)) << "seed " << seed;
    EXPECT_EQ(shared.find("[]"), std::string::npos) << "seed " << seed << ": " << shared;
    // "task@node[device,...]": a node's own devices by node, the fabric's alone.
    std::set<std::string> taken;
    std::istringstream binds(shared);
    for (std::string bind; binds >> bind;) {
      const size_t at = bind.find('@');
      const size_t open = bind.find('[');
      const std::string node = bind.substr(at + 1, open - at - 1);
      std::istringstream list(bind.substr(open + 1, bind.size() - open - 2));
      for (std::string device; std::getline(list, device, ',');) {
        const std::string where = device.rfind("link-", 0) == 0 ? device : node + "/" + device;
        EXPECT_TRUE(taken.insert(where).second)
            << "seed " << seed << ": " << where << " twice in " << shared;
      }
    }
  }
}

// Without DRA's inputs (a cluster without slices), a pod with claims fits nowhere.
TEST(DeviceReservations, NoInputsNoNode) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  const JobId job = AddClaimJob(c, q, "p", {"ml/claim"});
  const Decisions d = RunSession(c);
  EXPECT_TRUE(d.binds.empty());
  EXPECT_NE(PendingReasonOf(d, job).find("resourceclaim"), std::string::npos);
}

// The preemptor gets the victim's device once the victim is gone: its claim, reserved for
// it alone, is deallocated with it; so the preemptor is pipelined onto it.
TEST(DeviceReservations, AVictimsDevicesAreFreeOnceItIsGone) {
  ClusterState c;
  const NodeId n0 = AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 1);
  const std::string held = devices.AddClaim("held");
  devices.Allocate(held, "n0", "gpu-0");
  const JobId low = AddClaimJob(c, q, "low", {held}, /*priority=*/1);
  ASSERT_TRUE(c.Place(c.job(low).tasks[0], n0, {}).ok());
  const JobId high = AddClaimJob(c, q, "high", {devices.AddClaim("wants")}, /*priority=*/100);
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = {"preempt"};
  const Decisions d = RunWithDevices(c, devices, config);
  ASSERT_EQ(d.evictions.size(), 1u);
  EXPECT_EQ(d.evictions[0].job, low);
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].job, high);

  // A victim whose claim another pod shares frees nothing: no eviction helps.
  devices.Allocate(held, "n0", "gpu-0", /*reserved=*/2);
  const Decisions shared = RunWithDevices(c, devices, config);
  EXPECT_TRUE(shared.evictions.empty());
  EXPECT_TRUE(shared.pipelined.empty());
}

// Queues count DRA devices as the resource they stand for (TaskSpec::device_requests, and
// Node::device_capacity in the cluster's capacity): a queue capped at one GPU runs one pod
// with a one-GPU claim, though the node has room for two.
TEST(DeviceReservations, QueuesCountDevicesAsTheResourceTheyStandFor) {
  ClusterState c;
  Node node;
  node.name = "n0";
  node.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 64 * kGi}};
  node.device_capacity = ResourceVector{{kGpu, 2 * kGpuMilliWhole}};
  Must(c.AddNode(std::move(node)));
  EXPECT_EQ(c.capacity().Get(kGpu), 2 * kGpuMilliWhole);
  const QueueId capped = AddQueue(c, "capped", 1, {}, ResourceVector{{kGpu, kGpuMilliWhole}});
  Devices devices;
  devices.AddNodeGpus("n0", 2);
  for (const char* name : {"a", "b"}) {
    TaskSpec spec = Claiming({devices.AddClaim(name)});
    spec.device_requests = ResourceVector{{kGpu, kGpuMilliWhole}};
    AddJob(c, name, capped, spec, 1);
  }
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(BindsWithDevices(c, d), "a-0@n0[gpu-0]");

  // Without the cap both run: the node's room for them is its device capacity.
  ClusterState open;
  Node twin;
  twin.name = "n0";
  twin.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 64 * kGi}};
  twin.device_capacity = ResourceVector{{kGpu, 2 * kGpuMilliWhole}};
  Must(open.AddNode(std::move(twin)));
  const QueueId q = AddQueue(open, "q");
  for (const char* name : {"a", "b"}) {
    TaskSpec spec = Claiming({dra::ClaimKey("ml", name)});
    spec.device_requests = ResourceVector{{kGpu, kGpuMilliWhole}};
    AddJob(open, name, q, spec, 1);
  }
  EXPECT_EQ(BindsWithDevices(open, RunWithDevices(open, devices)), "a-0@n0[gpu-0] b-0@n0[gpu-1]");
}

// Nodes n0 and n1 whose four GPUs are DRA devices: none in Node::gpus, four counted as
// nvidia.com/gpu in Node::device_capacity, published in `devices`.
void AddDraGpuNodes(ClusterState& c, Devices& devices, Milli memory = 64 * kGi) {
  for (const char* name : {"n0", "n1"}) {
    Node node;
    node.name = name;
    node.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, memory}};
    node.device_capacity = ResourceVector{{kGpu, 4 * kGpuMilliWhole}};
    Must(c.AddNode(std::move(node)));
    devices.AddNodeGpus(name, 4);
  }
}

// binpack and spread see the GPUs that DRA devices give a node (Node::device_capacity as
// nvidia.com/gpu) and what a task's claims count as: with n1 half full of GPUs and n0's
// CPU busier, binpack packs the one-GPU claim onto n1 and spread onto n0. (Before, their
// GPU term saw no GPUs on either node, and binpack followed the CPU to n0.)
TEST(DeviceReservations, BinpackAndSpreadWeighTheGpusOfDraNodes) {
  for (const bool pack : {true, false}) {
    ClusterState c;
    const QueueId q = AddQueue(c, "q");
    Devices devices;
    AddDraGpuNodes(c, devices);
    const JobId cpu = AddJob(c, "cpu", q, CpuSpec(8000), 1);
    ASSERT_TRUE(c.Place(c.job(cpu).tasks[0], c.FindNode("n0"), {}).ok());
    const std::string held_0 = devices.AddClaim("held-0");
    const std::string held_1 = devices.AddClaim("held-1");
    devices.Allocate(held_0, "n1", "gpu-0");
    devices.Allocate(held_1, "n1", "gpu-1");
    TaskSpec running = Claiming({held_0, held_1}, /*cpu=*/0);
    running.device_requests = ResourceVector{{kGpu, 2 * kGpuMilliWhole}};
    const JobId two = AddJob(c, "two", q, running, 1);
    ASSERT_TRUE(c.Place(c.job(two).tasks[0], c.FindNode("n1"), {}).ok());
    TaskSpec wants = Claiming({devices.AddClaim("wants")});
    wants.device_requests = ResourceVector{{kGpu, kGpuMilliWhole}};
    AddJob(c, "new", q, wants, 1);

    SchedulerConfig config = SchedulerConfig::Default();
    for (PluginConfig& plugin : config.plugins) {
      if (plugin.name == "binpack" && !pack) plugin.name = "spread";
    }
    const Decisions d = RunWithDevices(c, devices, config);
    EXPECT_EQ(BindsWithDevices(c, d), pack ? "new-0@n1[gpu-2]" : "new-0@n0[gpu-0]")
        << (pack ? "binpack" : "spread");
  }
}

// fgd and gantry measure the fragmentation of a node whose GPUs are DRA devices as they
// do that of the same node with device-plugin GPUs. With 4-GPU tasks the common kind, a
// 1-GPU task goes to n1, where one GPU is taken already (its other three are a fragment for
// 4-GPU tasks anyway), not to the idle n0, under both APIs. (Before, both policies saw no
// GPUs on DRA nodes, scored them alike and took the lowest: n0.)
TEST(DeviceReservations, FgdAndGantryMeasureDraNodesAsDevicePluginNodes) {
  const WorkloadProfile profile =
      TypesProfile({WholeGpuType(1000, 4, 9), WholeGpuType(1000, 1, 1)});
  for (const char* policy : {"fgd", "gantry"}) {
    SchedulerConfig config = Must(PolicyConfig(policy));
    config.tie_break = SchedulerConfig::TieBreak::kLowest;  // nodes alike: n0

    ClusterState plugin;
    const QueueId plugin_queue = AddQueue(plugin, "q");
    AddGpuNode(plugin, "n0", 4);
    const NodeId plugin_n1 = AddGpuNode(plugin, "n1", 4);
    const JobId plugin_held = AddJob(plugin, "held", plugin_queue, GpuSpec(1, 1000), 1);
    ASSERT_TRUE(
        plugin.Place(plugin.job(plugin_held).tasks[0], plugin_n1, std::vector<int32_t>{0}).ok());
    AddJob(plugin, "new", plugin_queue, GpuSpec(1, 1000), 1);
    plugin.SetWorkloadProfile(profile);
    const Decisions by_plugin = RunSession(plugin, config);
    ASSERT_EQ(by_plugin.binds.size(), 1u) << policy;
    EXPECT_EQ(plugin.node(by_plugin.binds[0].node).name, "n1") << policy;

    ClusterState dra;
    const QueueId dra_queue = AddQueue(dra, "q");
    Devices devices;
    AddDraGpuNodes(dra, devices, 512 * kGi);
    const std::string held = devices.AddClaim("held");
    devices.Allocate(held, "n1", "gpu-0");
    TaskSpec running = Claiming({held});
    running.device_requests = ResourceVector{{kGpu, kGpuMilliWhole}};
    const JobId dra_held = AddJob(dra, "held", dra_queue, running, 1);
    ASSERT_TRUE(dra.Place(dra.job(dra_held).tasks[0], dra.FindNode("n1"), {}).ok());
    TaskSpec wants = Claiming({devices.AddClaim("wants")});
    wants.device_requests = ResourceVector{{kGpu, kGpuMilliWhole}};
    AddJob(dra, "new", dra_queue, wants, 1);
    dra.SetWorkloadProfile(profile);
    EXPECT_EQ(BindsWithDevices(dra, RunWithDevices(dra, devices, config)), "new-0@n1[gpu-1]")
        << policy;
  }
}

// The workload profile sees a task whose GPUs are DRA claims as a GPU task: whole GPUs
// where its claims count as whole ones, a share where they count as less than one.
TEST(DeviceReservations, ATaskShapeHasTheGpusItsClaimsCountAs) {
  TaskSpec two = Claiming({"ml/two"}, 4000);
  two.device_requests = ResourceVector{{kGpu, 2 * kGpuMilliWhole}};
  EXPECT_EQ(TaskShape::Of(two).gpu.count, 2);
  EXPECT_EQ(TaskShape::Of(two).gpu.milli, 0);
  TaskSpec slice = Claiming({"ml/slice"});
  slice.device_requests = ResourceVector{{kGpu, 125}};
  EXPECT_EQ(TaskShape::Of(slice).gpu.count, 0);
  EXPECT_EQ(TaskShape::Of(slice).gpu.milli, 125);
  // A GPU request of its own is its shape's, whatever its claims count as.
  TaskSpec own = GpuSpec(1, 1000);
  own.device_requests = ResourceVector{{kGpu, 3 * kGpuMilliWhole}};
  EXPECT_EQ(TaskShape::Of(own).gpu.count, 1);
  EXPECT_FALSE(TaskShape::Of(Claiming({"ml/none"})).gpu.wants_gpu());
}

}  // namespace
}  // namespace gantry
