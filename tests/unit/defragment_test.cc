// The defragment action: movable tasks moved to free a node for a job that needs whole
// GPUs, only when they fit elsewhere at once, within the budget; Statement::Hold, the
// check's tool; and ClusterState's bounded memory of the action's evictions.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/statement.h"
#include "model/limits.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"
#include "tests/unit/working_state_text.h"

namespace gantry {
namespace {

SchedulerConfig Defragmenting(int32_t budget = 10) {
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions = {"enqueue", "allocate", "backfill", "defragment"};
  config.defragment_evictions_per_hour = budget;
  return config;
}

// Runs each of the job's tasks on `node`, `gpus_each` devices apiece from device `from`,
// and marks them movable or not.
void RunOn(ClusterState& c, JobId job, NodeId node, int32_t gpus_each, bool movable,
           int32_t from = 0) {
  for (TaskId t : c.job(job).tasks) {
    std::vector<int32_t> devices;
    for (int32_t i = 0; i < gpus_each; ++i) devices.push_back(from++);
    Status st = c.Place(t, node, devices);
    ASSERT_TRUE(st.ok()) << st.message();
    c.SetTaskMovable(t, movable);
  }
}

// The evicted tasks' names, sorted.
std::string EvictedOf(const ClusterState& c, const Decisions& d) {
  std::vector<std::string> names;
  for (const EvictDecision& e : d.evictions) names.push_back(c.task(e.task).name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// Two 8-GPU nodes, each with two 1-GPU tasks of job "small" (devices 0 and 1), and a
// pending 8-GPU job "train": 12 GPUs free in all, 6 on each node.
class DefragmentTest : public ::testing::Test {
 protected:
  DefragmentTest() {
    n0_ = AddGpuNode(c_, "n0", 8);
    n1_ = AddGpuNode(c_, "n1", 8);
    q_ = AddQueue(c_, "q");
  }
  void AddSmall(bool movable, int32_t priority = 0) {
    small_ = AddJob(c_, "small", q_, GpuSpec(1), 4, 1, priority);
    for (int i = 0; i < 4; ++i) {
      const int32_t device = i % 2;
      const TaskId t = c_.job(small_).tasks[static_cast<size_t>(i)];
      ASSERT_TRUE(c_.Place(t, i < 2 ? n0_ : n1_, std::span<const int32_t>(&device, 1)).ok());
      c_.SetTaskMovable(t, movable);
    }
    train_ = AddJob(c_, "train", q_, GpuSpec(8), 1, 1, /*priority=*/5);
  }

  ClusterState c_;
  NodeId n0_, n1_;
  QueueId q_;
  JobId small_ = kNone, train_ = kNone;
};

TEST_F(DefragmentTest, MovesMovableTasksAndPipelinesTheJobOntoTheNodeTheyFree) {
  AddSmall(/*movable=*/true);
  const Decisions d = RunSession(c_, Defragmenting());
  EXPECT_EQ(EvictedOf(c_, d), "small-0 small-1");
  ASSERT_EQ(d.evictions.size(), 2u);
  for (const EvictDecision& e : d.evictions) {
    EXPECT_EQ(e.cause, EvictionCause::kDefragment);
    EXPECT_EQ(e.for_job, train_);
    EXPECT_EQ(e.node, n0_);
    EXPECT_TRUE(Contains(e.reason, "defragment: moved to free node n0 for job train"));
  }
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].job, train_);
  EXPECT_EQ(d.pipelined[0].node, n0_);
  EXPECT_TRUE(d.binds.empty());
}

TEST_F(DefragmentTest, WithoutTheActionNothingMoves) {
  AddSmall(/*movable=*/true);
  SchedulerConfig config = Defragmenting();
  config.actions = {"enqueue", "allocate", "backfill"};
  const Decisions d = RunSession(c_, config);
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_FALSE(Contains(PendingReasonOf(d, train_), "defragment"));
}

TEST_F(DefragmentTest, NeverMovesATaskThatIsNotMovable) {
  AddSmall(/*movable=*/false);
  const Decisions d = RunSession(c_, Defragmenting());
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(d.pipelined.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(d, train_), "no movable task may be moved for it"));
}

TEST_F(DefragmentTest, AQueueMarkedMovableMakesItsTasksMovable) {
  AddSmall(/*movable=*/false);
  c_.SetQueueMovable(q_, true);
  EXPECT_TRUE(c_.Movable(c_.job(small_).tasks[0]));
  EXPECT_EQ(RunSession(c_, Defragmenting()).evictions.size(), 2u);
}

TEST_F(DefragmentTest, NeverMovesTasksOfAJobOfHigherPriority) {
  AddSmall(/*movable=*/true, /*priority=*/6);  // train has 5
  const Decisions d = RunSession(c_, Defragmenting());
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(d, train_), "no movable task may be moved for it"));
}

TEST_F(DefragmentTest, LeavesAJobTheFreeRoomInTotalWouldNotHold) {
  AddSmall(/*movable=*/true);
  AddJob(c_, "huge", q_, GpuSpec(8), 2, /*min_member=*/2, /*priority=*/9);  // 16 > 12 free
  const Decisions d = RunSession(c_, Defragmenting());
  const JobId huge = c_.FindJob("huge");
  EXPECT_FALSE(Contains(PendingReasonOf(d, huge), "defragment"));
  // train still gets its node, after huge in job order.
  EXPECT_EQ(d.evictions.size(), 2u);
}

TEST_F(DefragmentTest, NeverMovesTasksOfAJobThatEvictedIt) {
  AddSmall(/*movable=*/true);
  // small once evicted a task of train's: train may never evict small's (no loops).
  c_.NoteEviction(train_, small_);
  const Decisions d = RunSession(c_, Defragmenting());
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(d, train_), "no movable task may be moved for it"));
}

TEST_F(DefragmentTest, TheBudgetCountsTheLastHourOfTheClusterMemory) {
  AddSmall(/*movable=*/true);
  SessionOptions at;
  at.now = 10'000;
  // 2 evictions in the last hour (one exactly an hour ago does not count): 1 of 3 left,
  // and freeing a node takes 2.
  c_.NoteDefragmentEviction(at.now - 3600);
  c_.NoteDefragmentEviction(at.now - 3599);
  c_.NoteDefragmentEviction(at.now - 10);
  Decisions d = RunSession(c_, Defragmenting(3), at);
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(d, train_), "within the 1 eviction(s) its budget has left"));
  // An hour later the budget is whole again.
  at.now += 3600;
  d = RunSession(c_, Defragmenting(3), at);
  EXPECT_EQ(d.evictions.size(), 2u);
  // Spent outright: said, and nothing tried.
  d = RunSession(c_, Defragmenting(2), SessionOptions{10'000, 0});
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(
      Contains(PendingReasonOf(d, train_), "its budget of 2 eviction(s) per hour is spent"));
  // A budget of 0 moves nothing.
  EXPECT_TRUE(RunSession(c_, Defragmenting(0), at).evictions.empty());
}

TEST_F(DefragmentTest, LikeJobsThatFindNoPlanSayTheSameAndOneThatMovesClearsThat) {
  AddSmall(/*movable=*/false);
  const JobId twin = AddJob(c_, "twin", q_, GpuSpec(8), 1, 1, /*priority=*/5);
  Decisions d = RunSession(c_, Defragmenting());
  const std::string said = "no movable task may be moved for it";
  EXPECT_TRUE(Contains(PendingReasonOf(d, train_), said));
  EXPECT_TRUE(Contains(PendingReasonOf(d, twin), said));  // said again, not searched again
  // Movable: train moves n0's two; then the free room in total (6 GPUs, on n1) would not
  // hold twin, and defragment says nothing of it.
  for (TaskId t : c_.job(small_).tasks) c_.SetTaskMovable(t, true);
  d = RunSession(c_, Defragmenting());
  EXPECT_EQ(EvictedOf(c_, d), "small-0 small-1");
  EXPECT_FALSE(Contains(PendingReasonOf(d, twin), "defragment"));
}

TEST(DefragmentPlanTest, RefusesAPlanWhoseMovedTasksFitOneNodeAtATimeButNotTogether) {
  // A gang of two 8-GPU tasks; n0 and n1 each hold one movable 2-GPU task. n2 has 2 whole
  // GPUs free and half of each of its other 6 (shared tasks that stay): 17 GPUs free in
  // all. Each node's moved task alone fits n2's 2 whole GPUs; both together do not.
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 8), n1 = AddGpuNode(c, "n1", 8);
  const NodeId n2 = AddGpuNode(c, "n2", 8);
  const QueueId q = AddQueue(c, "q");
  RunOn(c, AddJob(c, "a", q, GpuSpec(2), 1), n0, 2, /*movable=*/true);
  RunOn(c, AddJob(c, "b", q, GpuSpec(2), 1), n1, 2, /*movable=*/true);
  const JobId shared = AddJob(c, "shared", q, SharedSpec(500), 6);
  for (int i = 0; i < 6; ++i) {
    const int32_t device = i + 2;
    ASSERT_TRUE(c.Place(c.job(shared).tasks[static_cast<size_t>(i)], n2,
                        std::span<const int32_t>(&device, 1))
                    .ok());
  }
  const JobId gang = AddJob(c, "gang", q, GpuSpec(8), 2, /*min_member=*/2);
  const Decisions d = RunSession(c, Defragmenting());
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(d.pipelined.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(d, gang),
                       "the tasks it would move would not all fit elsewhere: task"));
  // With 2 whole GPUs free on another node (n3), both fit elsewhere: the gang gets n0 and n1.
  RunOn(c, AddJob(c, "stays", q, GpuSpec(6), 1), AddGpuNode(c, "n3", 8), 6, /*movable=*/false);
  const Decisions moved = RunSession(c, Defragmenting());
  EXPECT_EQ(EvictedOf(c, moved), "a-0 b-0");
  EXPECT_EQ(moved.pipelined.size(), 2u);
}

TEST(DefragmentPlanTest, AMovedTaskTakesItsGangWithItAllMovableOrNone) {
  // "pair" is a gang of two 1-GPU tasks (minMember 2), one on each of n0 and n1: freeing
  // n0 for the 8-GPU job moves both (they fit on n1), or neither.
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 8), n1 = AddGpuNode(c, "n1", 8);
  const QueueId q = AddQueue(c, "q");
  const JobId pair = AddJob(c, "pair", q, GpuSpec(1), 2, /*min_member=*/2);
  const int32_t zero = 0;
  ASSERT_TRUE(c.Place(c.job(pair).tasks[0], n0, std::span<const int32_t>(&zero, 1)).ok());
  ASSERT_TRUE(c.Place(c.job(pair).tasks[1], n1, std::span<const int32_t>(&zero, 1)).ok());
  for (TaskId t : c.job(pair).tasks) c.SetTaskMovable(t, true);
  AddJob(c, "train", q, GpuSpec(8), 1);
  EXPECT_EQ(EvictedOf(c, RunSession(c, Defragmenting())), "pair-0 pair-1");
  c.SetTaskMovable(c.job(pair).tasks[1], false);
  EXPECT_EQ(EvictedOf(c, RunSession(c, Defragmenting())), "");
}

TEST(DefragmentHoldTest, HoldTakesFreeRoomForAnEvictedTaskAndRollbackGivesItBack) {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "n0", 8), n1 = AddGpuNode(c, "n1", 8);
  const QueueId q = AddQueue(c, "q");
  const JobId job = AddJob(c, "j", q, GpuSpec(2), 1);
  RunOn(c, job, n0, 2, true);
  const TaskId task = c.job(job).tasks[0];
  const Policy policy = MustCompile(Defragmenting());
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(task, "test", kNone, EvictionCause::kDefragment).ok());
  const std::string before = WorkingStateText(s);
  const size_t checkpoint = st.Checkpoint();
  Placement there;
  there.node = n1;
  there.gpus.devices = {3, 4};
  there.gpus.milli_each = kGpuMilliWhole;
  ASSERT_TRUE(st.Hold(task, there).ok());
  EXPECT_EQ(s.free_now(n1, kGpu), 6 * kGpuMilliWhole);
  EXPECT_EQ(s.task_status(task), TaskStatus::kReleasing);  // the task itself is unchanged
  // Held room is taken: the same devices cannot be held again.
  EXPECT_FALSE(st.Hold(task, there).ok());
  st.Rollback(checkpoint);
  EXPECT_EQ(WorkingStateText(s), before);
  // A pending task has no room to be held for.
  const TaskId pending = c.job(AddJob(c, "p", q, GpuSpec(1), 1)).tasks[0];
  Snapshot again(c);
  Session s2(again, policy);
  Statement st2 = s2.NewStatement();
  EXPECT_FALSE(st2.Hold(pending, there).ok());
}

TEST(DefragmentMemoryTest, ForgetsWhatIsAnHourOlderThanTheLatestAndStaysBounded) {
  ClusterState c;
  c.NoteDefragmentEviction(0);
  c.NoteDefragmentEviction(100);
  EXPECT_EQ(c.defragment_evictions().Since(-1), 2);
  EXPECT_EQ(c.defragment_evictions().Since(0), 1);
  c.NoteDefragmentEviction(3600);  // 0 is an hour old now: forgotten
  EXPECT_EQ(c.defragment_evictions().Since(-1), 2);
  for (int64_t i = 0; i < kMaxDefragmentEvictionsPerHour + 50; ++i) c.NoteDefragmentEviction(4000);
  EXPECT_EQ(c.defragment_evictions().Since(-1), kMaxDefragmentEvictionsPerHour);
}

}  // namespace
}  // namespace gantry
