// Devices that work best together (engine/dra/alignment.h): where the node's devices
// publish a NUMA node or a PCIe root, a claim that does not require alignment still gets
// devices that share them, best fit, instead of upstream's first devices that fit. Each
// case also runs without the attributes configured, to show that upstream's order gives
// other devices there (so the case tells the two apart).
#include "engine/dra/alignment.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/engine_dra_world.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using engine_dra::Devices;
using engine_dra::RunWithDevices;

constexpr const char* kNuma = "resource.kubernetes.io/numaNode";
constexpr const char* kPcieRoot = "resource.kubernetes.io/pcieRoot";

// One node "n0" with a GPU per entry of `numa` (and of `roots`, when given), the GPUs of
// `held` taken by claims allocated before, and a pod whose claim asks for `wanted` GPUs.
// Returns the devices the pod's claim gets ("gpu-2,gpu-3"), or "" when it is not placed.
std::string DevicesGiven(const std::vector<int64_t>& numa, const std::vector<std::string>& roots,
                         const std::vector<int>& held, int64_t wanted,
                         std::vector<dra::QualifiedName> align_by) {
  ClusterState c;
  AddCpuNode(c, "n0", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.align_by = std::move(align_by);
  devices.AddNodeGpus("n0", static_cast<int>(numa.size()));
  for (size_t i = 0; i < numa.size(); ++i) {
    dra::Device& device = devices.slices.back().devices[i];
    device.attributes[kNuma] = numa[i];
    if (!roots.empty()) device.attributes[kPcieRoot] = roots[i];
  }
  for (int gpu : held) {
    const std::string name = "held-" + std::to_string(gpu);
    const std::string key = devices.AddClaim(name);
    devices.Allocate(key, "n0", "gpu-" + std::to_string(gpu));
    TaskSpec spec = CpuSpec(100);
    spec.namespace_ = "ml";
    spec.resource_claims = {key};
    const JobId job = AddJob(c, name, q, spec, 1);
    EXPECT_TRUE(c.Place(c.job(job).tasks[0], c.FindNode("n0"), {}).ok());
  }
  TaskSpec spec = CpuSpec(1000);
  spec.namespace_ = "ml";
  spec.resource_claims = {devices.AddClaim("wants", wanted)};
  AddJob(c, "wants", q, spec, 1);
  const Decisions d = RunWithDevices(c, devices);
  if (d.binds.size() != 1 || d.binds[0].devices.size() != 1 || !d.binds[0].devices[0]) return "";
  std::string out;
  for (const dra::AllocationResult& result : d.binds[0].devices[0]->results) {
    out += (out.empty() ? "" : ",") + result.device;
  }
  return out;
}

const std::vector<dra::QualifiedName> kStandard = {kNuma, kPcieRoot};

// gpu-0 taken; NUMA nodes {0, 0, 1, 1}. Two GPUs: upstream spans both NUMA nodes (gpu-1
// and gpu-2); aligned, both come from NUMA node 1, the one group that holds them.
TEST(DeviceAlignment, AClaimsDevicesShareANumaNode) {
  EXPECT_EQ(DevicesGiven({0, 0, 1, 1}, {}, {0}, 2, kStandard), "gpu-2,gpu-3");
  EXPECT_EQ(DevicesGiven({0, 0, 1, 1}, {}, {0}, 2, {}), "gpu-1,gpu-2");
}

// gpu-2 taken. One GPU: best fit takes NUMA node 1's last GPU and keeps NUMA node 0 whole
// for a two-GPU claim; upstream takes gpu-0.
TEST(DeviceAlignment, OneDeviceGoesWhereItLeavesTheLargestGroupsWhole) {
  EXPECT_EQ(DevicesGiven({0, 0, 1, 1}, {}, {2}, 1, kStandard), "gpu-3");
  EXPECT_EQ(DevicesGiven({0, 0, 1, 1}, {}, {2}, 1, {}), "gpu-0");
}

// Eight GPUs, NUMA nodes {0 x4, 1 x4}, PCIe roots {a, a, b, b, c, c, d, d}; gpu-0 and
// gpu-4..6 taken. Two GPUs: NUMA node 0 (three free) holds them and node 1 (one free) does
// not; within it root b (two free) holds them and root a (one free) does not.
TEST(DeviceAlignment, InnerAttributesChooseWithinTheOuterGroup) {
  const std::vector<int64_t> numa = {0, 0, 0, 0, 1, 1, 1, 1};
  const std::vector<std::string> roots = {"a", "a", "b", "b", "c", "c", "d", "d"};
  EXPECT_EQ(DevicesGiven(numa, roots, {0, 4, 5, 6}, 2, kStandard), "gpu-2,gpu-3");
  EXPECT_EQ(DevicesGiven(numa, roots, {0, 4, 5, 6}, 2, {}), "gpu-1,gpu-2");
  // With the PCIe root alone, root b is still the best fit.
  EXPECT_EQ(DevicesGiven(numa, roots, {0, 4, 5, 6}, 2, {kPcieRoot}), "gpu-2,gpu-3");
}

// No group holds all of them: the fullest groups first, so that the claim spans as few as
// it can. gpu-0 taken; NUMA nodes {0, 0, 0, 1, 1, 1, 1}: four GPUs come from node 1, none
// from node 0 (upstream: gpu-1, gpu-2, gpu-3, gpu-4).
TEST(DeviceAlignment, AClaimNoGroupHoldsSpansTheFewestGroups) {
  EXPECT_EQ(DevicesGiven({0, 0, 0, 1, 1, 1, 1}, {}, {0}, 5, kStandard),
            "gpu-3,gpu-4,gpu-5,gpu-6,gpu-1");
  EXPECT_EQ(DevicesGiven({0, 0, 0, 1, 1, 1, 1}, {}, {0}, 4, kStandard), "gpu-3,gpu-4,gpu-5,gpu-6");
  EXPECT_EQ(DevicesGiven({0, 0, 0, 1, 1, 1, 1}, {}, {0}, 4, {}), "gpu-1,gpu-2,gpu-3,gpu-4");
}

// The preference ranks; the search still decides: a node whose devices cannot serve the
// claim is not made feasible, and one that can still is.
TEST(DeviceAlignment, ThePreferenceNeverChangesWhetherAClaimFits) {
  EXPECT_EQ(DevicesGiven({0, 0, 1, 1}, {}, {0, 1}, 3, kStandard), "");
  EXPECT_EQ(DevicesGiven({0, 0, 1, 1}, {}, {0}, 3, kStandard), "gpu-2,gpu-3,gpu-1");
}

// Devices without the attribute come after those with it, whatever their order.
TEST(DeviceAlignment, DevicesWithoutTheAttributeComeLast) {
  dra::ResourceSlice slice;
  slice.name = "n0-gpus";
  slice.driver = engine_dra::kDriver;
  slice.pool = {"n0", 1, 1};
  slice.node_selection = dra::NodeSelection{};
  slice.node_selection->node_name = "n0";
  slice.devices.resize(3);
  slice.devices[0].name = "plain";
  slice.devices[1].name = "numa-0";
  slice.devices[1].attributes[kNuma] = int64_t{0};
  slice.devices[2].name = "other-node";
  slice.devices[2].attributes[kNuma] = int64_t{0};
  dra::ResourceSlice elsewhere = slice;
  elsewhere.name = "n1-gpus";
  elsewhere.pool = {"n1", 1, 1};
  elsewhere.node_selection->node_name = "n1";
  const dra::Inventory inventory({slice, elsewhere}, {});
  const std::vector<dra::QualifiedName> attributes = {kNuma};
  const dra::AlignmentPreference preference(attributes, inventory, dra::AllocatedState{}, "n0", 1);
  const dra::ResourceSlice& n0 = inventory.slices()[0];
  EXPECT_LT(preference.Rank(n0, n0.devices[1]), preference.Rank(n0, n0.devices[0]));
  // A device of another node's slice is none of this node's: ranked last of all.
  const dra::ResourceSlice& n1 = inventory.slices()[1];
  EXPECT_LT(preference.Rank(n0, n0.devices[0]), preference.Rank(n1, n1.devices[1]));
}

// The preference is built for a node only where one of its own devices has a configured
// attribute: a node whose driver publishes none is allocated in upstream's order without it.
TEST(DeviceAlignment, AppliesOnlyWhereTheNodesDevicesHaveTheAttributes) {
  auto slice_of = [](const std::string& node, bool numa) {
    dra::ResourceSlice slice;
    slice.name = node + "-gpus";
    slice.driver = engine_dra::kDriver;
    slice.pool = {node, 1, 1};
    slice.node_selection = dra::NodeSelection{};
    slice.node_selection->node_name = node;
    slice.devices.resize(2);
    slice.devices[0].name = "gpu-0";
    slice.devices[1].name = "gpu-1";
    if (numa) slice.devices[1].attributes[kPcieRoot] = std::string("pci0000:00");
    return slice;
  };
  const dra::Inventory inventory({slice_of("plain", false), slice_of("aligned", true)}, {});
  EXPECT_TRUE(dra::AlignmentPreference::AppliesTo(kStandard, inventory, "aligned"));
  EXPECT_FALSE(dra::AlignmentPreference::AppliesTo(kStandard, inventory, "plain"));
  EXPECT_FALSE(dra::AlignmentPreference::AppliesTo(kStandard, inventory, "no-slices"));
  const std::vector<dra::QualifiedName> numa_only = {kNuma};
  EXPECT_FALSE(dra::AlignmentPreference::AppliesTo(numa_only, inventory, "aligned"));
  EXPECT_FALSE(dra::AlignmentPreference::AppliesTo({}, inventory, "aligned"));
}

TEST(DeviceAlignment, WantedCountsExactCountsAndFirstAvailablesFirstChoice) {
  dra::ResourceClaim claim;
  dra::DeviceRequest exact;
  exact.exactly = dra::DeviceRequestSpec{};
  exact.exactly->count = 2;
  dra::DeviceRequest all;
  all.exactly = dra::DeviceRequestSpec{};
  all.exactly->allocation_mode = dra::AllocationMode::kAll;
  dra::DeviceRequest first;
  first.first_available.resize(2);
  first.first_available[0].spec.count = 3;
  first.first_available[1].spec.count = 1;
  claim.spec.requests = {exact, all, first};
  const dra::ResourceClaim* claims[] = {&claim, nullptr};
  EXPECT_EQ(dra::AlignmentPreference::WantedBy(claims), 5);
}

}  // namespace
}  // namespace gantry
