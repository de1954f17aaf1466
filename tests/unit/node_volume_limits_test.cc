// kube-scheduler's NodeVolumeLimits (the nodevolumelimits plugin): per CSI driver, no more
// distinct attached volumes on a node than its CSINode allows, counting the tasks there,
// the session's placements and the node's VolumeAttachments; and a driver that must be
// installed on the node (preventPodSchedulingIfMissing). Cases after csi_test.go.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr const char* kEbs = "ebs.csi.aws.com";

AttachableVolume Ebs(const std::string& handle) {
  return AttachableVolume{kEbs, handle};
}

// A node with a CSINode that lets `driver` attach `limit` volumes.
NodeId AddCsiNode(ClusterState& c, const std::string& name, std::optional<int32_t> limit,
                  std::vector<AttachableVolume> attached = {}, const char* driver = kEbs) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 64 * kGi}};
  node.csi.has_csi_node = true;
  node.csi.drivers = {NodeCsiDriver{driver, limit}};
  node.csi.attached = std::move(attached);
  return Must(c.AddNode(std::move(node)));
}

TaskSpec WithVolumes(std::vector<AttachableVolume> volumes) {
  TaskSpec spec = CpuSpec(1000);
  spec.attachable_volumes = std::move(volumes);
  return spec;
}

TEST(NodeVolumeLimitsTest, NoMoreVolumesThanTheDriverAllowsPerNode) {
  ClusterState c;
  AddCsiNode(c, "a", 2);
  AddCsiNode(c, "b", 2);
  QueueId q = AddQueue(c, "q");
  for (int i = 0; i < 4; ++i) {
    AddJob(c, "j" + std::to_string(i), q, WithVolumes({Ebs("vol-" + std::to_string(i))}), 1, 1, 0,
           i);
  }
  JobId fifth = AddJob(c, "j4", q, WithVolumes({Ebs("vol-4")}), 1, 1, 0, 4);
  Decisions d = RunSession(c);
  // binpack would stack all of them on "a"; the limit takes two per node.
  EXPECT_EQ(BindsOf(c, d), "j0-0@a j1-0@a j2-0@b j3-0@b");
  EXPECT_TRUE(Contains(PendingReasonOf(d, fifth), "2 node(s) exceed max volume count"))
      << PendingReasonOf(d, fifth);
}

TEST(NodeVolumeLimitsTest, AVolumeSharedWithATaskOnTheNodeCountsOnce) {
  ClusterState c;
  NodeId a = AddCsiNode(c, "a", 1);
  QueueId q = AddQueue(c, "q");
  JobId running = AddJob(c, "running", q, WithVolumes({Ebs("vol-1")}), 1);
  ASSERT_TRUE(c.Place(c.job(running).tasks[0], a, {}).ok());
  AddJob(c, "same", q, WithVolumes({Ebs("vol-1")}), 1, 1, 0, 1);
  JobId other = AddJob(c, "other", q, WithVolumes({Ebs("vol-2")}), 1, 1, 0, 2);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "same-0@a");
  EXPECT_TRUE(Contains(PendingReasonOf(d, other), "exceed max volume count"));
}

// getNodeVolumeAttachmentInfo: attachments no pod uses count too; and a new volume that
// only an attachment names counts as new as well (CSILimits subtracts only the pods').
TEST(NodeVolumeLimitsTest, AttachmentsCountAndOneNoPodUsesIsStillNew) {
  for (int32_t limit : {2, 3}) {
    ClusterState c;
    AddCsiNode(c, "a", limit, {Ebs("vol-1"), Ebs("vol-2")});
    QueueId q = AddQueue(c, "q");
    AddJob(c, "uses-attached", q, WithVolumes({Ebs("vol-1")}), 1);
    Decisions d = RunSession(c);
    EXPECT_EQ(BindsOf(c, d), limit == 3 ? "uses-attached-0@a" : "") << "limit " << limit;
  }
}

TEST(NodeVolumeLimitsTest, OnlyDriversWithALimitOnTheNodeCount) {
  ClusterState c;
  AddCsiNode(c, "a", std::nullopt);  // the driver is there, without a limit
  Node plain;
  plain.name = "b";  // no CSINode at all
  plain.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 64 * kGi}};
  Must(c.AddNode(std::move(plain)));
  QueueId q = AddQueue(c, "q");
  TaskSpec many =
      WithVolumes({Ebs("v1"), Ebs("v2"), Ebs("v3"), AttachableVolume{"other.csi.io", "x"}});
  AddJob(c, "many", q, many, 2, 2);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "many-0@a many-1@a");
}

TEST(NodeVolumeLimitsTest, AMigratedVolumeCountsOnlyWhereTheNodeHasACsiNode) {
  ClusterState c;
  Node plain;
  plain.name = "no-csinode";
  plain.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 64 * kGi}};
  Must(c.AddNode(std::move(plain)));
  QueueId q = AddQueue(c, "q");
  AttachableVolume migrated = Ebs("vol-1");
  migrated.migrated = true;
  migrated.driver_required = true;  // not checked: the volume does not count there
  AddJob(c, "in-tree", q, WithVolumes({migrated}), 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "in-tree-0@no-csinode");
}

TEST(NodeVolumeLimitsTest, ADriverThatMustBeOnTheNode) {
  ClusterState c;
  AddCsiNode(c, "has-ebs", std::nullopt);
  AddCsiNode(c, "has-other", std::nullopt, {}, "other.csi.io");
  QueueId q = AddQueue(c, "q");
  AttachableVolume v = Ebs("vol-1");
  v.driver_required = true;
  AddJob(c, "needs-ebs", q, WithVolumes({v}), 1);
  AddJob(c, "also", q, WithVolumes({v, Ebs("vol-2")}), 1, 1, 0, 1);
  JobId stuck = AddJob(c, "stuck", q, WithVolumes({v}), 1, 1, 0, 2);
  ClusterState copy = c;
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "needs-ebs-0@has-ebs also-0@has-ebs stuck-0@has-ebs");
  // Without the node that has it, the words kube-scheduler gives.
  copy.RemoveNode(copy.FindNode("has-ebs"));
  Decisions none = RunSession(copy);
  EXPECT_TRUE(Contains(PendingReasonOf(none, stuck),
                       "1 ebs.csi.aws.com CSI driver is not installed on the node"))
      << PendingReasonOf(none, stuck);
}

TEST(NodeVolumeLimitsTest, MembersOfOneGangCountEachOthersVolumesAndAFailedGangGivesThemBack) {
  ClusterState c;
  AddCsiNode(c, "a", 2);
  QueueId q = AddQueue(c, "q");
  // Three members with a volume each on a node that takes two: all or none.
  JobId gang = AddEmptyJob(c, "gang", q, /*min_member=*/3);
  for (int i = 0; i < 3; ++i) {
    SpecId spec = c.AddSpec(WithVolumes({Ebs("g" + std::to_string(i))}));
    Must(c.AddTask(gang, spec, "gang-" + std::to_string(i)));
  }
  AddJob(c, "single", q, WithVolumes({Ebs("s"), Ebs("t")}), 1, 1, 0, 1);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "single-0@a");
  EXPECT_FALSE(PendingReasonOf(d, gang).empty());
}

// A releasing task keeps its volumes attached until it has ended; a pipelined task holds
// them once the releasing ones have.
TEST(NodeVolumeLimitsTest, VolumesFollowTheViewsOfTheWorkingState) {
  ClusterState c;
  NodeId n = AddCsiNode(c, "n", 1);
  QueueId q = AddQueue(c, "q");
  JobId victim = AddJob(c, "victim", q, WithVolumes({Ebs("old")}), 1);
  const TaskId victim_task = c.job(victim).tasks[0];
  ASSERT_TRUE(c.Place(victim_task, n, {}).ok());
  const TaskId next = c.job(AddJob(c, "next", q, WithVolumes({Ebs("new")}), 1, 1, 0, 1)).tasks[0];
  const TaskId later =
      c.job(AddJob(c, "later", q, WithVolumes({Ebs("later")}), 1, 1, 0, 2)).tasks[0];
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  const std::vector<NodeId> only{n};
  auto fits = [&](TaskId task, bool future) {
    Placement p;
    std::string why;
    return s.FindPlacement(task, SearchScope{&only, future}, &p, &why);
  };
  EXPECT_FALSE(fits(next, false));
  EXPECT_FALSE(fits(next, true));
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim_task, "test").ok());
  EXPECT_FALSE(fits(next, false)) << "a releasing task's volume is still attached";
  EXPECT_TRUE(fits(next, true)) << "once it has ended its volume is detached";
  Placement on_n;
  on_n.node = n;
  ASSERT_TRUE(st.Pipeline(next, on_n).ok());
  EXPECT_FALSE(fits(later, true)) << "the pipelined task's volume takes the room";
  st.Rollback(1);
  EXPECT_TRUE(fits(later, true));
  st.Rollback(0);
  EXPECT_FALSE(fits(later, true));
}

}  // namespace
}  // namespace gantry
