// Delayed volume binding in the engine (kube-scheduler's VolumeBinding FindPodVolumes per
// node): the smallest reachable volume, a pre-bound one, a selected node, provisioning
// where the class's allowedTopologies allow; one volume to one claim in a session, and
// back when a statement rolls back; the choice in the bind decision.
#include <gtest/gtest.h>

#include <string>

#include "engine/volume_binding.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using Op = SelectorRequirement::Op;

Labels Host(const std::string& host, const std::string& zone = "") {
  Labels labels;
  labels.Set("kubernetes.io/hostname", host);
  if (!zone.empty()) labels.Set(std::string(kZoneLabel), zone);
  return labels;
}

NodeAffinity OnHost(const std::string& host) {
  return NodeAffinity{{{SelectorRequirement{"kubernetes.io/hostname", Op::kIn, {host}}}}, {}};
}

CandidateVolume Local(const std::string& name, Milli capacity, const std::string& host) {
  return CandidateVolume{name, capacity, OnHost(host)};
}

Node NodeOf(const std::string& name, const std::string& zone = "") {
  Node n;
  n.name = name;
  n.labels = Host(name, zone);
  return n;
}

TaskSpec WithClaims(std::vector<DelayedClaim> claims) {
  TaskSpec spec = CpuSpec(1000);
  spec.namespace_ = "ml";
  spec.delayed_claims = std::move(claims);
  return spec;
}

std::string Choose(const TaskSpec& spec, const Node& node, const VolumeReservations& r = {}) {
  std::vector<std::string> choices;
  const FilterResult result = ChooseClaimVolumes(spec, node, r, &choices);
  if (!result.ok()) return "conflict";
  std::string out;
  for (const std::string& c : choices) out += (out.empty() ? "" : ",") + (c.empty() ? "+" : c);
  return out;
}

std::string Binds(const ClusterState& c, const Decisions& d) {
  std::string out;
  for (const BindDecision& b : d.binds) {
    out += (out.empty() ? "" : " ") + c.task(b.task).name + "@" + c.node(b.node).name;
    for (const std::string& v : b.volumes) out += ":" + (v.empty() ? "+" : v);
  }
  return out;
}

TEST(VolumeBinding, TheSmallestVolumeReachableFromTheNode) {
  DelayedClaim claim{"data", {}, {}, {}, false, {}, false, {}};
  // Smallest first, as the daemon sorts them.
  claim.volumes = {Local("small-n1", 1000, "n1"), Local("mid-n0", 2000, "n0"),
                   CandidateVolume{"big-anywhere", 3000, std::nullopt}};
  const TaskSpec spec = WithClaims({claim});
  EXPECT_EQ(Choose(spec, NodeOf("n0")), "mid-n0");
  EXPECT_EQ(Choose(spec, NodeOf("n1")), "small-n1");
  EXPECT_EQ(Choose(spec, NodeOf("n2")), "big-anywhere");
}

TEST(VolumeBinding, TwoClaimsOfOnePodNeverShareAVolume) {
  DelayedClaim a{"a",   {}, {},    {Local("pv-1", 1000, "n0"), Local("pv-2", 1000, "n0")},
                 false, {}, false, {}};
  DelayedClaim b{"b", {}, {}, {Local("pv-1", 1000, "n0")}, false, {}, false, {}};
  EXPECT_EQ(Choose(WithClaims({a, a}), NodeOf("n0")), "pv-1,pv-2");
  EXPECT_EQ(Choose(WithClaims({a, b}), NodeOf("n0")), "conflict");
  EXPECT_EQ(Choose(WithClaims({b, a}), NodeOf("n0")), "pv-1,pv-2");
}

// FindMatchingVolume: a volume pre-bound to the claim is its volume, or, where it cannot
// be reached, the claim is provisioned (if its class can).
TEST(VolumeBinding, APreBoundVolumeOrProvisioning) {
  DelayedClaim claim{"data", {}, Local("mine", 1000, "n1"), {}, false, {}, false, {}};
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n1")), "mine");
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n0")), "conflict");
  claim.provisionable = true;
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n0")), "+");
}

TEST(VolumeBinding, ProvisioningWhereTheClassAllows) {
  DelayedClaim claim{"data", {}, {}, {}, true, {}, false, {}};
  claim.allowed_topologies.terms = {
      {SelectorRequirement{std::string(kZoneLabel), Op::kIn, {"zone-a", "zone-b"}}}};
  const TaskSpec spec = WithClaims({claim});
  EXPECT_EQ(Choose(spec, NodeOf("n0", "zone-a")), "+");
  EXPECT_EQ(Choose(spec, NodeOf("n1", "zone-c")), "conflict");
  EXPECT_EQ(Choose(spec, NodeOf("n2")), "conflict");  // no zone label
  // kubernetes.io/no-provisioner: no volume, no node.
  claim.provisionable = false;
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n0", "zone-a")), "conflict");
}

// Storage capacity tracking (hasEnoughCapacity): provisioning also needs a
// CSIStorageCapacity of the class with room for the claim whose nodeTopology selects the
// node; the reason is then not enough storage, not a bind conflict.
TEST(VolumeBinding, ProvisioningWhereStorageCapacityHasRoom) {
  DelayedClaim claim{"data", {}, {}, {}, true, {}, false, {}};
  claim.capacity_tracked = true;
  LabelSelector zone_a;
  zone_a.match_labels.Set(std::string(kZoneLabel), "zone-a");
  claim.capacity_topologies = {zone_a};
  const TaskSpec spec = WithClaims({claim});
  EXPECT_EQ(Choose(spec, NodeOf("n0", "zone-a")), "+");
  EXPECT_EQ(ChooseClaimVolumes(spec, NodeOf("n1", "zone-b"), {}, nullptr),
            FilterResult::Fail(FilterCode::kNotEnoughStorage));
  // A static volume that matches needs no capacity.
  DelayedClaim with_volume = claim;
  with_volume.volumes = {Local("pv-1", 1000, "n1")};
  EXPECT_EQ(Choose(WithClaims({with_volume}), NodeOf("n1", "zone-b")), "pv-1");
  // Tracked, and no capacity object has room: no node.
  claim.capacity_topologies.clear();
  EXPECT_EQ(ChooseClaimVolumes(WithClaims({claim}), NodeOf("n0", "zone-a"), {}, nullptr),
            FilterResult::Fail(FilterCode::kNotEnoughStorage));
  // Not tracked (the driver has no storageCapacity): the class's topology alone decides.
  claim.capacity_tracked = false;
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n1", "zone-b")), "+");
  // allowedTopologies is checked first: outside them it is a bind conflict.
  claim.capacity_tracked = true;
  claim.capacity_topologies = {zone_a};
  claim.allowed_topologies.terms = {
      {SelectorRequirement{std::string(kZoneLabel), Op::kIn, {"zone-b"}}}};
  EXPECT_EQ(ChooseClaimVolumes(WithClaims({claim}), NodeOf("n0", "zone-a"), {}, nullptr),
            FilterResult::Fail(FilterCode::kVolumeBindConflict));
}

// A claim with a node selected (by an earlier try): that node only, provisioned there.
TEST(VolumeBinding, ASelectedNodeOnly) {
  DelayedClaim claim{"data", "n1", {}, {}, true, {}, false, {}};
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n1")), "+");
  EXPECT_EQ(Choose(WithClaims({claim}), NodeOf("n0")), "conflict");
}

// The session's choices: a volume given to one claim is taken for the others; a claim
// decided by one pod is decided for a pod that shares it.
TEST(VolumeBinding, ReservationsOfTheSession) {
  DelayedClaim data{"data", {}, {}, {Local("pv", 1000, "n0")}, true, {}, false, {}};
  DelayedClaim logs{"logs", {}, {}, {Local("pv", 1000, "n0")}, false, {}, false, {}};
  VolumeReservations r;
  r.Apply(WithClaims({data}), "n0", {"pv"}, +1);
  EXPECT_EQ(Choose(WithClaims({logs}), NodeOf("n0"), r), "conflict");
  EXPECT_EQ(Choose(WithClaims({data}), NodeOf("n0"), r), "pv");  // the same claim
  r.Apply(WithClaims({data}), "n0", {"pv"}, -1);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(Choose(WithClaims({logs}), NodeOf("n0"), r), "pv");
  // Provisioned on n1 by one pod: the claim's next pod goes to n1.
  r.Apply(WithClaims({data}), "n1", {""}, +1);
  EXPECT_EQ(Choose(WithClaims({data}), NodeOf("n1"), r), "+");
  EXPECT_EQ(Choose(WithClaims({data}), NodeOf("n0"), r), "conflict");
}

// In a session: two pods, two claims, one volume: one is placed, on the volume's node,
// with the volume in its decision; the other waits in kube-scheduler's words.
TEST(VolumeBinding, OneVolumeForOnePodOfTheSession) {
  ClusterState c;
  for (const char* n : {"n0", "n1", "n2"}) AddCpuNode(c, n, 8000, Host(n));
  QueueId q = AddQueue(c, "q");
  DelayedClaim first{"first", {}, {}, {Local("pv", 1000, "n1")}, false, {}, false, {}};
  DelayedClaim second{"second", {}, {}, {Local("pv", 1000, "n1")}, false, {}, false, {}};
  AddJob(c, "a", q, WithClaims({first}), 1, 1, 0, /*creation=*/1);
  AddJob(c, "b", q, WithClaims({second}), 1, 1, 0, /*creation=*/2);
  const Decisions d = RunSession(c);
  EXPECT_EQ(Binds(c, d), "a-0@n1:pv");
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].reason,
            "0/3 nodes are available: 3 node(s) didn't find available persistent "
            "volumes to bind.");
}

// A gang whose second member does not fit rolls back: the volume its first member took
// is free again for the next job, and the choice of a provisioned claim is "".
TEST(VolumeBinding, ARolledBackPlacementGivesTheVolumeBack) {
  ClusterState c;
  AddCpuNode(c, "n0", 8000, Host("n0"));
  QueueId q = AddQueue(c, "q");
  DelayedClaim one{"one", {}, {}, {Local("pv", 1000, "n0")}, false, {}, false, {}};
  TaskSpec big = WithClaims({one});
  big.requests.Set(kCpu, 5000);  // one member fits the node, not two
  AddJob(c, "gang", q, big, 2, /*min_member=*/2, 0, /*creation=*/1);
  DelayedClaim solo{"solo", {}, {}, {Local("pv", 1000, "n0")}, false, {}, false, {}};
  DelayedClaim scratch{"scratch", {}, {}, {}, true, {}, false, {}};
  AddJob(c, "solo", q, WithClaims({solo, scratch}), 1, 1, 0, /*creation=*/2);
  const Decisions d = RunSession(c);
  EXPECT_EQ(Binds(c, d), "solo-0@n0:pv:+");
}

// A pod without delayed claims is not asked about them: the predicate's fast path.
TEST(VolumeBinding, NoDelayedClaimsNoChoices) {
  ClusterState c;
  AddCpuNode(c, "n0", 8000, Host("n0"));
  QueueId q = AddQueue(c, "q");
  AddJob(c, "plain", q, CpuSpec(1000), 1);
  const Decisions d = RunSession(c);
  EXPECT_EQ(Binds(c, d), "plain-0@n0");
}

}  // namespace
}  // namespace gantry
