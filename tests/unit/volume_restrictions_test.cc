// kube-scheduler's VolumeRestrictions for inline disks (isVolumeConflict), in the
// predicates plugin: a pod may not go where a pod on the node uses the same GCE PD, AWS
// EBS volume, iSCSI disk or RBD image, unless both only read it (never for EBS); members
// of one gang see each other, and a releasing pod keeps its disk until it has ended.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

TaskSpec WithDisks(std::vector<InlineDisk> disks) {
  TaskSpec spec = CpuSpec(1000);
  spec.inline_disks = std::move(disks);
  return spec;
}

TEST(VolumeRestrictionsTest, ReadersShareADiskAWriterHasItAlone) {
  ClusterState c;
  NodeId a = AddCpuNode(c, "a", 64000);
  AddCpuNode(c, "b", 64000);
  QueueId q = AddQueue(c, "q");
  JobId reader = AddJob(c, "reader", q, WithDisks({{"gce-pd/pd-1", true}}), 1);
  ASSERT_TRUE(c.Place(c.job(reader).tasks[0], a, {}).ok());
  AddJob(c, "reader-2", q, WithDisks({{"gce-pd/pd-1", true}}), 1, 1, 0, 1);
  AddJob(c, "writer", q, WithDisks({{"gce-pd/pd-1", false}}), 1, 1, 0, 2);
  JobId third = AddJob(c, "writer-2", q, WithDisks({{"gce-pd/pd-1", false}}), 1, 1, 0, 3);
  Decisions d = RunSession(c);
  // The second reader joins the first (binpack); the writer can only go to b, and the
  // second writer conflicts with the readers on a and the writer on b.
  EXPECT_EQ(BindsOf(c, d), "reader-2-0@a writer-0@b");
  EXPECT_TRUE(Contains(PendingReasonOf(d, third), "2 node(s) had no available disk"))
      << PendingReasonOf(d, third);
}

TEST(VolumeRestrictionsTest, MembersOfOneGangSeeEachOther) {
  ClusterState c;
  AddCpuNode(c, "a", 64000);
  AddCpuNode(c, "b", 64000);
  QueueId q = AddQueue(c, "q");
  // EBS volumes conflict even when read-only (the reader keeps read_only false).
  AddJob(c, "gang", q, WithDisks({{"aws-ebs/vol-1", false}}), 2, /*min_member=*/2);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "gang-0@a gang-1@b");
}

TEST(VolumeRestrictionsTest, AReleasingPodKeepsItsDiskUntilItHasEnded) {
  ClusterState c;
  NodeId n = AddCpuNode(c, "n", 64000);
  QueueId q = AddQueue(c, "q");
  JobId victim = AddJob(c, "victim", q, WithDisks({{"iscsi/iqn.x", false}}), 1);
  const TaskId victim_task = c.job(victim).tasks[0];
  ASSERT_TRUE(c.Place(victim_task, n, {}).ok());
  const TaskId next =
      c.job(AddJob(c, "next", q, WithDisks({{"iscsi/iqn.x", false}}), 1, 1, 0, 1)).tasks[0];
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  const std::vector<NodeId> only{n};
  auto fits = [&](bool future) {
    Placement p;
    std::string why;
    return s.FindPlacement(next, SearchScope{&only, future}, &p, &why);
  };
  EXPECT_FALSE(fits(false));
  EXPECT_FALSE(fits(true));
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim_task, "test").ok());
  EXPECT_FALSE(fits(false)) << "a releasing pod still uses its disk";
  EXPECT_TRUE(fits(true)) << "once it has ended the disk is free";
  st.Rollback(0);
  EXPECT_FALSE(fits(true));
}

}  // namespace
}  // namespace gantry
