// Tasks already terminating (a pod with a deletionTimestamp): they hold their room, a
// session sees it as being released, and nothing evicts them again.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

SchedulerConfig PreemptOnly() {
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = {"preempt"};
  return config;
}

struct Fixture {
  ClusterState c;
  NodeId node = kNone;
  JobId low = kNone;
  JobId high = kNone;
  Fixture() {
    node = AddGpuNode(c, "n0", 4);
    const QueueId q = AddQueue(c, "q");
    low = AddJob(c, "low", q, GpuSpec(4), 1, 1, /*priority=*/1);
    const std::vector<int32_t> devices = {0, 1, 2, 3};
    Status st = c.Place(c.job(low).tasks[0], node, devices);
    EXPECT_TRUE(st.ok()) << st.message();
    high = AddJob(c, "high", q, GpuSpec(4), 1, 1, /*priority=*/100);
  }
};

TEST(ReleasingTest, APreemptorWaitsForRoomAlreadyBeingReleasedAndEvictsNothing) {
  Fixture f;
  f.c.SetReleasing(f.c.job(f.low).tasks[0], true);
  const Decisions d = RunSession(f.c, PreemptOnly());
  EXPECT_TRUE(d.evictions.empty());
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].job, f.high);
  EXPECT_EQ(d.pipelined[0].node, f.node);
  EXPECT_TRUE(d.binds.empty());  // the room is not free yet
}

TEST(ReleasingTest, WithoutTheMarkTheSameTaskIsEvicted) {
  Fixture f;
  const Decisions d = RunSession(f.c, PreemptOnly());
  ASSERT_EQ(d.evictions.size(), 1u);
  EXPECT_EQ(d.evictions[0].task, f.c.job(f.low).tasks[0]);
}

TEST(ReleasingTest, AllocateDoesNotUseRoomThatIsStillHeld) {
  Fixture f;
  f.c.SetReleasing(f.c.job(f.low).tasks[0], true);
  const Decisions d = RunSession(f.c, SchedulerConfig::Default());
  EXPECT_TRUE(d.binds.empty());
}

TEST(ReleasingTest, TheMarkGoesWithTheTaskAndOnlyRunningTasksTakeIt) {
  Fixture f;
  const TaskId low = f.c.job(f.low).tasks[0];
  f.c.SetReleasing(f.c.job(f.high).tasks[0], true);  // pending: left as it is
  EXPECT_TRUE(f.c.releasing_tasks().empty());
  f.c.SetReleasing(low, true);
  EXPECT_EQ(f.c.releasing_tasks().size(), 1u);
  f.c.Release(low);
  EXPECT_TRUE(f.c.releasing_tasks().empty());
  EXPECT_FALSE(f.c.task(low).releasing);
}

}  // namespace
}  // namespace gantry
