// The predicates plugin and a pod's volumes: a bound volume's node affinity (VolumeBinding)
// and topology labels (VolumeZone) as static predicates, per node shape class; and a
// ReadWriteOncePod claim taken by one placement of the session (VolumeRestrictions).
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using Op = SelectorRequirement::Op;

Labels NodeLabels(const std::string& host, const std::string& zone) {
  Labels labels;
  labels.Set("kubernetes.io/hostname", host);
  if (!zone.empty()) labels.Set(std::string(kZoneLabel), zone);
  return labels;
}

std::string PendingReason(const ClusterState& c, const Decisions& d, const std::string& job) {
  for (const PendingJob& p : d.pending) {
    if (c.job(p.job).name == job) return p.reason;
  }
  return "";
}

TEST(VolumePredicates, VolumeNodeAffinityKeepsThePodWhereItsVolumeIs) {
  ClusterState c;
  for (const char* n : {"n0", "n1", "n2"}) AddCpuNode(c, n, 8000, NodeLabels(n, ""));
  QueueId q = AddQueue(c, "q");
  TaskSpec local = CpuSpec(1000);
  local.volume_node_affinity.push_back(
      NodeAffinity{{{SelectorRequirement{"kubernetes.io/hostname", Op::kIn, {"n1"}}}}, {}});
  AddJob(c, "local", q, local, 1);
  TaskSpec nowhere = CpuSpec(1000);
  nowhere.volume_node_affinity.push_back(
      NodeAffinity{{{SelectorRequirement{"kubernetes.io/hostname", Op::kIn, {"n9"}}}}, {}});
  AddJob(c, "nowhere", q, nowhere, 1);
  const Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "local-0@n1");
  EXPECT_EQ(PendingReason(c, d, "nowhere"),
            "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's "
            "node affinity.");
}

// Nodes that differ only in their zone label: the zone must tell their classes apart.
TEST(VolumePredicates, VolumeZoneKeepsThePodInItsZone) {
  ClusterState c;
  AddCpuNode(c, "a", 8000, NodeLabels("", "us-east-1a"));
  AddCpuNode(c, "b", 8000, NodeLabels("", "us-east-1b"));
  QueueId q = AddQueue(c, "q");
  for (const char* zone : {"us-east-1b", "us-east-1a", "us-east-1c"}) {
    TaskSpec spec = CpuSpec(1000);
    spec.volume_zones.push_back(VolumeTopology{std::string(kZoneLabel), {zone}});
    AddJob(c, std::string("in-") + zone, q, spec, 1);
  }
  const Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "in-us-east-1b-0@b in-us-east-1a-0@a");
  EXPECT_EQ(PendingReason(c, d, "in-us-east-1c"),
            "0/2 nodes are available: 2 node(s) had no available volume "
            "zone.");
}

// One ReadWriteOncePod claim, wanted by three jobs: the first placed takes it; a claim of
// the same name in another namespace is another claim.
TEST(VolumePredicates, AReadWriteOncePodClaimGoesToOnePlacement) {
  ClusterState c;
  AddCpuNode(c, "n0", 8000);
  AddCpuNode(c, "n1", 8000);
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = CpuSpec(1000);
  spec.namespace_ = "ml";
  spec.rwop_claims = {"data"};
  AddJob(c, "first", q, spec, 1, 1, 0, /*creation=*/1);
  AddJob(c, "second", q, spec, 1, 1, 0, /*creation=*/2);
  TaskSpec elsewhere = spec;
  elsewhere.namespace_ = "other";
  AddJob(c, "elsewhere", q, elsewhere, 1, 1, 0, /*creation=*/3);
  const Decisions d = RunSession(c);
  EXPECT_TRUE(Contains(BindsOf(c, d), "first-0@"));
  EXPECT_TRUE(Contains(BindsOf(c, d), "elsewhere-0@"));
  EXPECT_FALSE(Contains(BindsOf(c, d), "second-0@"));
  EXPECT_EQ(PendingReason(c, d, "second"),
            "0/2 nodes are available: 2 node(s) unavailable due to "
            "PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another "
            "pod.");
}

// A gang that cannot be placed whole gives its claim back with its placements: the next
// job that wants the claim gets it.
TEST(VolumePredicates, ADiscardedPlacementGivesTheClaimBack) {
  ClusterState c;
  AddCpuNode(c, "n0", 8000);
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = CpuSpec(1000);
  spec.namespace_ = "ml";
  spec.rwop_claims = {"data"};
  // Two members, one claim: the second can never be placed beside the first.
  AddJob(c, "gang", q, spec, 2, /*min_member=*/2, 0, /*creation=*/1);
  AddJob(c, "solo", q, spec, 1, 1, 0, /*creation=*/2);
  const Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "solo-0@n0");
}

}  // namespace
}  // namespace gantry
