// Statements: each operation applied at once, undone exactly, and committed as decisions;
// the working state's views of a node's room; the victim filters.
#include "engine/statement.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"
#include "tests/unit/working_state_text.h"

namespace gantry {
namespace {

SchedulerConfig NoActions() {
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  return config;
}

Placement On(NodeId node, std::vector<int32_t> devices, int32_t milli = kGpuMilliWhole) {
  Placement p;
  p.node = node;
  p.gpus.devices = std::move(devices);
  p.gpus.milli_each = p.gpus.devices.empty() ? 0 : milli;
  return p;
}

std::vector<int32_t> Devices(int32_t from, int32_t count) {
  std::vector<int32_t> out(static_cast<size_t>(count));
  std::iota(out.begin(), out.end(), from);
  return out;
}

// One 8-GPU node running a 6-GPU task (devices 0-5) of job "victim"; a CPU-only node;
// pending: "big" (one 7-GPU task), "whole" (one 8-GPU task), "small" (one 1-GPU task),
// "pair" (one 2-GPU task).
class StatementOpsTest : public ::testing::Test {
 protected:
  StatementOpsTest() {
    gpu_node_ = AddGpuNode(c_, "gpu", 8);
    cpu_node_ = AddCpuNode(c_, "cpu", 8000);
    queue_ = AddQueue(c_, "q");
    victim_job_ = AddJob(c_, "victim", queue_, GpuSpec(6), 1);
    victim_ = c_.job(victim_job_).tasks[0];
    const std::vector<int32_t> held = Devices(0, 6);
    EXPECT_TRUE(c_.Place(victim_, gpu_node_, held).ok());
    big_ = c_.job(AddJob(c_, "big", queue_, GpuSpec(7), 1)).tasks[0];
    whole_ = c_.job(AddJob(c_, "whole", queue_, GpuSpec(8), 1)).tasks[0];
    small_ = c_.job(AddJob(c_, "small", queue_, GpuSpec(1), 1)).tasks[0];
    pair_ = c_.job(AddJob(c_, "pair", queue_, GpuSpec(2), 1)).tasks[0];
  }

  ClusterState c_;
  NodeId gpu_node_, cpu_node_;
  QueueId queue_;
  JobId victim_job_;
  TaskId victim_, big_, whole_, small_, pair_;
  const Policy policy_ = MustCompile(NoActions());
};

TEST_F(StatementOpsTest, EveryOperationIsUndoneExactlyByRollbackToItsCheckpoint) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  Statement st = s.NewStatement();
  std::vector<std::string> states = {WorkingStateText(s)};
  ASSERT_TRUE(st.Evict(victim_, "test").ok());
  states.push_back(WorkingStateText(s));
  ASSERT_TRUE(st.Pipeline(big_, On(gpu_node_, Devices(0, 7))).ok());
  states.push_back(WorkingStateText(s));
  // Device 7 is free now and promised to nobody; device 6 is free now but promised.
  ASSERT_TRUE(st.Allocate(small_, On(gpu_node_, {7})).ok());
  states.push_back(WorkingStateText(s));
  for (size_t i = 1; i < states.size(); ++i) ASSERT_NE(states[i], states[i - 1]) << "step " << i;
  for (size_t cp = states.size() - 1; cp-- > 0;) {
    st.Rollback(cp);
    EXPECT_EQ(st.Checkpoint(), cp);
    EXPECT_EQ(WorkingStateText(s), states[cp]) << "rolled back to " << cp;
  }
}

TEST_F(StatementOpsTest, DiscardAndDestructionUndoEverything) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  const std::string before = WorkingStateText(s);
  {
    Statement st = s.NewStatement();
    ASSERT_TRUE(st.Allocate(small_, On(gpu_node_, {6})).ok());
    ASSERT_TRUE(st.Evict(victim_, "test").ok());
    st.Discard();
    EXPECT_EQ(st.size(), 0u);
    EXPECT_EQ(WorkingStateText(s), before);
    ASSERT_TRUE(st.Evict(victim_, "test").ok());
    ASSERT_TRUE(st.Pipeline(whole_, On(gpu_node_, Devices(0, 8))).ok());
  }  // destroyed without Commit
  EXPECT_EQ(WorkingStateText(s), before);
}

TEST_F(StatementOpsTest, EvictionAddsFutureRoomNotFreeRoom) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim_, "test").ok());
  EXPECT_EQ(s.task_status(victim_), TaskStatus::kReleasing);
  const WorkingState& w = s.state();
  EXPECT_EQ(w.idle(gpu_node_, kGpu), 2 * kGpuMilliWhole);  // the victim still holds 6
  EXPECT_EQ(w.future_free(gpu_node_, kGpu), 8 * kGpuMilliWhole);
  EXPECT_EQ(s.free_now(gpu_node_, kGpu), 2 * kGpuMilliWhole);
  EXPECT_EQ(s.free_node(gpu_node_).whole_free, 2);

  Placement p;
  std::string why;
  EXPECT_FALSE(s.FindPlacement(big_, &p, &why));
  EXPECT_TRUE(Contains(why, "1 Insufficient free whole GPUs")) << why;
  SearchScope future;
  future.future = true;
  ASSERT_TRUE(s.FindPlacement(big_, future, &p, &why)) << why;
  EXPECT_EQ(p.node, gpu_node_);
  EXPECT_EQ(p.gpus.devices.size(), 7u);
  // Only the CPU node: nothing fits there, and the reason says which room was searched.
  const std::vector<NodeId> cpu_only = {cpu_node_};
  future.nodes = &cpu_only;
  EXPECT_FALSE(s.FindPlacement(big_, future, &p, &why));
  EXPECT_TRUE(Contains(why, "0/1 nodes are available once releasing tasks end")) << why;
  // Allocating the big task on the victim's room now is refused.
  Status refused = st.Allocate(big_, On(gpu_node_, Devices(0, 7)));
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.message(), "does not fit the free room of node gpu"))
      << refused.message();
}

TEST_F(StatementOpsTest, AnAllocationNeverTakesRoomPromisedToAPipelinedTask) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim_, "test").ok());
  ASSERT_TRUE(st.Pipeline(whole_, On(gpu_node_, Devices(0, 8))).ok());
  // Two devices are idle now, but all eight are promised to "whole".
  EXPECT_EQ(s.state().idle(gpu_node_, kGpu), 2 * kGpuMilliWhole);
  EXPECT_EQ(s.free_now(gpu_node_, kGpu), 0);
  const std::string before = WorkingStateText(s);
  EXPECT_FALSE(st.Allocate(small_, On(gpu_node_, {6})).ok());
  EXPECT_EQ(WorkingStateText(s), before);  // a refused operation changes nothing
  Placement p;
  std::string why;
  EXPECT_FALSE(s.FindPlacement(small_, &p, &why));
  // Taking the promise back makes the idle devices free again, and the "fits nowhere"
  // verdict just made is forgotten.
  st.Rollback(1);
  ASSERT_TRUE(s.FindPlacement(small_, &p, &why)) << why;
  EXPECT_EQ(p.node, gpu_node_);
}

TEST_F(StatementOpsTest, FitsNowhereIsForgottenWhenAnAllocationIsRolledBack) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Allocate(small_, On(gpu_node_, {6})).ok());  // one GPU left: device 7
  Placement p;
  std::string why;
  EXPECT_FALSE(s.FindPlacement(pair_, &p, &why));
  EXPECT_FALSE(s.FindPlacement(pair_, &p, &why));  // now from the memo
  EXPECT_TRUE(Contains(why, "1 Insufficient free whole GPUs")) << why;
  st.Rollback(0);
  ASSERT_TRUE(s.FindPlacement(pair_, &p, &why)) << why;
  EXPECT_EQ(p.gpus.devices, (std::vector<int32_t>{6, 7}));
}

TEST_F(StatementOpsTest, RefusesOperationsOnTasksInTheWrongStateAndChangesNothing) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  Statement st = s.NewStatement();
  const std::string before = WorkingStateText(s);
  Status st1 = st.Evict(small_, "test");
  EXPECT_TRUE(Contains(st1.message(), "task small-0 of job small is pending, not running"))
      << st1.message();
  Status st2 = st.Allocate(victim_, On(gpu_node_, {6}));
  EXPECT_TRUE(Contains(st2.message(), "is running, not pending")) << st2.message();
  Status st3 = st.Pipeline(whole_, On(gpu_node_, Devices(0, 8)));  // no eviction yet
  EXPECT_TRUE(Contains(st3.message(), "does not fit the room node gpu will have")) << st3.message();
  Status st4 = st.Allocate(small_, On(gpu_node_, {3}));  // the victim's device
  EXPECT_FALSE(st4.ok());
  Status st5 = st.Allocate(small_, On(gpu_node_, {6, 6}));  // one device twice
  EXPECT_FALSE(st5.ok());
  EXPECT_EQ(st.size(), 0u);
  EXPECT_EQ(WorkingStateText(s), before);
}

// A device whose memory is unknown (0: no gpu.memory label, a single-strategy MIG device) is
// not sized by memory: a task asking for GPU memory takes the whole device's share there, as
// the search and ClusterState::Place see it, and the statement agrees.
TEST(StatementMemoryTest, AMemoryRequestFitsADeviceOfUnknownMemory) {
  ClusterState c;
  const NodeId node = AddGpuNode(c, "unsized", 2, 64000, /*gpu_memory_mib=*/0);
  const QueueId q = AddQueue(c, "q");
  const TaskId task = c.job(AddJob(c, "by-memory", q, SharedSpec(0, 4096), 1)).tasks[0];
  Snapshot snapshot(c);
  const Policy policy = Policy::Compile(NoActions()).value();
  Session s(snapshot, policy);
  Placement p;
  std::string why;
  ASSERT_TRUE(s.FindPlacement(task, &p, &why)) << why;
  EXPECT_EQ(p.node, node);
  EXPECT_EQ(p.gpus.milli_each, kGpuMilliWhole);
  Statement st = s.NewStatement();
  const Status allocated = st.Allocate(task, p);
  EXPECT_TRUE(allocated.ok()) << allocated.message();
  EXPECT_TRUE(c.Place(task, p.node, p.gpus.devices).ok());
}

TEST_F(StatementOpsTest, JobsAndQueuesCountAllocatedPipelinedAndReleasing) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  Statement st = s.NewStatement();
  // The victim's job has no pending task: no entry until a change touches it, and its
  // readers see it as the cluster has it all the same.
  EXPECT_EQ(s.ready_tasks(victim_job_), 1);
  EXPECT_EQ(s.state().CopyOfJob(victim_job_).allocated.Get(kGpu), 6 * kGpuMilliWhole);
  ASSERT_TRUE(st.Evict(victim_, "test").ok());
  ASSERT_TRUE(st.Pipeline(big_, On(gpu_node_, Devices(0, 7))).ok());
  ASSERT_TRUE(st.Allocate(small_, On(gpu_node_, {7})).ok());
  const JobWork& victim = s.job(victim_job_);
  EXPECT_EQ(victim.ready, 0);
  EXPECT_EQ(victim.releasing_tasks, 1);
  EXPECT_EQ(victim.allocated.Get(kGpu), 0);
  EXPECT_EQ(victim.releasing.Get(kGpu), 6 * kGpuMilliWhole);
  const JobWork& big = s.job(c_.task(big_).job);
  EXPECT_EQ(big.pipelined_tasks, 1);
  EXPECT_EQ(big.ready, 0);
  EXPECT_EQ(big.pipelined.Get(kGpu), 7 * kGpuMilliWhole);
  const JobWork& small = s.job(c_.task(small_).job);
  EXPECT_EQ(small.ready, 1);
  EXPECT_EQ(small.placed, 1);
  const QueueWork& q = s.queue(queue_);
  EXPECT_EQ(q.allocated.Get(kGpu), 1 * kGpuMilliWhole);
  EXPECT_EQ(q.pipelined.Get(kGpu), 7 * kGpuMilliWhole);
  EXPECT_EQ(q.releasing.Get(kGpu), 6 * kGpuMilliWhole);
  EXPECT_EQ(s.task_status(big_), TaskStatus::kPipelined);
  EXPECT_EQ(s.task_status(small_), TaskStatus::kAllocated);
  EXPECT_EQ(s.task_status(whole_), TaskStatus::kPending);
}

// WorkingState::job() reads, it never makes an entry (that is EnterJob's, behind the
// changes and the notes): asking it for a job the session has not touched is a bug in the
// engine, and stops the process with the job's name rather than reading made-up state.
TEST_F(StatementOpsTest, ReadingAJobTheSessionHasNotTouchedStopsNamingIt) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  EXPECT_EQ(s.ready_tasks(victim_job_), 1);  // the readers meant for it answer
  EXPECT_EQ(s.state().CopyOfJob(victim_job_).ready, 1);
  EXPECT_DEATH(s.job(victim_job_), "job [0-9]+ \\(" + c_.job(victim_job_).name + "\\).*no entry");
}

TEST_F(StatementOpsTest, CommitRecordsEvictionsPipelinedTasksAndBindsInOrder) {
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  {
    Statement st = s.NewStatement();
    ASSERT_TRUE(st.Evict(victim_, "preempted by big-0").ok());
    ASSERT_TRUE(st.Pipeline(big_, On(gpu_node_, Devices(0, 7))).ok());
    ASSERT_TRUE(st.Allocate(small_, On(gpu_node_, {7})).ok());
    st.Commit();
    EXPECT_EQ(st.size(), 0u);
  }  // committed: destruction undoes nothing
  EXPECT_EQ(s.task_status(victim_), TaskStatus::kReleasing);
  EXPECT_TRUE(s.job(c_.task(big_).job).unplaced.empty());
  EXPECT_TRUE(s.job(c_.task(small_).job).unplaced.empty());
  EXPECT_EQ(s.job(c_.task(whole_).job).unplaced.size(), 1u);
  Decisions d = s.Run();
  ASSERT_EQ(d.evictions.size(), 1u);
  EXPECT_EQ(d.evictions[0].task, victim_);
  EXPECT_EQ(d.evictions[0].job, victim_job_);
  EXPECT_EQ(d.evictions[0].node, gpu_node_);
  EXPECT_EQ(d.evictions[0].reason, "preempted by big-0");
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].task, big_);
  EXPECT_EQ(d.pipelined[0].node, gpu_node_);
  EXPECT_EQ(d.pipelined[0].gpus, Devices(0, 7));
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(d.binds[0].task, small_);
  EXPECT_EQ(d.binds[0].gpus, std::vector<int32_t>{7});
  // Pending: "whole" and "pair" (the pipelined task is not pending: it waits for its node).
  ASSERT_EQ(d.pending.size(), 2u);
  EXPECT_EQ(d.pending[0].job, c_.task(whole_).job);
  EXPECT_EQ(d.pending[1].job, c_.task(pair_).job);
}

// ---------------------------------------------------------------- victims

class VictimsTest : public ::testing::Test {
 protected:
  // `tasks` one-GPU tasks of a job running on their own 8-GPU node.
  JobId Running(const std::string& name, QueueId queue, int tasks, int32_t priority,
                int32_t min_member = 1) {
    const NodeId node = AddGpuNode(c_, name + "-node", 8);
    const JobId job = AddJob(c_, name, queue, GpuSpec(1), tasks, min_member, priority);
    for (int i = 0; i < tasks; ++i) {
      const int32_t device = i;
      EXPECT_TRUE(c_.Place(c_.job(job).tasks[static_cast<size_t>(i)], node,
                           std::span<const int32_t>(&device, 1))
                      .ok());
    }
    return job;
  }
  std::vector<TaskId> TasksOf(JobId job, int count = -1) const {
    const auto& tasks = c_.job(job).tasks;
    return std::vector<TaskId>(tasks.begin(), count < 0 ? tasks.end() : tasks.begin() + count);
  }
  static std::vector<TaskId> Join(std::vector<std::vector<TaskId>> parts) {
    std::vector<TaskId> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  }

  ClusterState c_;
  const Policy policy_ = MustCompile(NoActions());
};

TEST_F(VictimsTest, PreemptionEvictsOnlyLowerPriorityJobsAndNeverItsOwn) {
  const QueueId q = AddQueue(c_, "q");
  const JobId low = Running("low", q, 2, 5);
  const JobId same = Running("same", q, 2, 10);
  const JobId high = Running("high", q, 2, 20);
  const JobId preemptor_job = AddJob(c_, "preemptor", q, GpuSpec(8), 1, 1, 10);
  const TaskId preemptor = c_.job(preemptor_job).tasks[0];
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  const std::vector<TaskId> all = Join({TasksOf(low), TasksOf(same), TasksOf(high)});
  EXPECT_EQ(s.Victims(EvictionCause::kPreempt, preemptor, all), TasksOf(low));
  // Reclaim does not ask about priority (the proportion plugin decides, below).
}

TEST_F(VictimsTest, AGangGivesUpTasksDownToItsMinimumOrGoesWhole) {
  const QueueId q = AddQueue(c_, "q");
  const JobId gang = Running("gang", q, 4, 0, /*min_member=*/3);
  const JobId preemptor_job = AddJob(c_, "preemptor", q, GpuSpec(8), 1, 1, 10);
  const TaskId preemptor = c_.job(preemptor_job).tasks[0];
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  // Three of four offered: only one may go (4 - minMember 3).
  EXPECT_EQ(s.Victims(EvictionCause::kPreempt, preemptor, TasksOf(gang, 3)), TasksOf(gang, 1));
  // All four offered: the whole gang may go, never a part below its minimum.
  EXPECT_EQ(s.Victims(EvictionCause::kPreempt, preemptor, TasksOf(gang)), TasksOf(gang));
}

TEST_F(VictimsTest, ReclaimTakesFromOtherQueuesOnlyDownToTheirDeservedShare) {
  // 8 GPUs, all held by "rich"; "poor" asks for 8 too. At weights 1:1 each deserves 4.
  const QueueId rich = AddQueue(c_, "rich");
  const QueueId poor = AddQueue(c_, "poor");
  const JobId hog = Running("hog", rich, 8, 100);
  const JobId wants = AddJob(c_, "wants", poor, GpuSpec(1), 8, 1, 0);
  const TaskId claimant = c_.job(wants).tasks[0];
  Snapshot snapshot(c_);
  Session s(snapshot, policy_);
  // Whatever the priorities: four may go, the first four offered.
  EXPECT_EQ(s.Victims(EvictionCause::kReclaim, claimant, TasksOf(hog)), TasksOf(hog, 4));
  // Preemption is not reclaim: the hog's priority (100) protects it from a priority-0 job.
  EXPECT_TRUE(s.Victims(EvictionCause::kPreempt, claimant, TasksOf(hog)).empty());
}

// Plugins may keep what they derive from a queue's or job's amounts (proportion keeps each
// queue's share of what it deserves) until the amounts change: the order must follow
// every operation and every rollback, never a share from before.
TEST(StatementCachesTest, QueueOrderFollowsAllocationsAndTheirRollback) {
  ClusterState c;
  AddGpuNode(c, "gpu", 8);
  const QueueId a = AddQueue(c, "a");
  const QueueId b = AddQueue(c, "b");
  // Each queue deserves what it asks for: a 2 GPUs, b 6.
  const TaskId a_task = c.job(AddJob(c, "a-job", a, GpuSpec(2), 1)).tasks[0];
  const TaskId b_task = c.job(AddJob(c, "b-job", b, GpuSpec(6), 1)).tasks[0];
  const Policy policy = MustCompile(NoActions());
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  // Equal shares go by name: a first.
  ASSERT_LT(s.CompareQueues(a, b), 0) << "both hold nothing";
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Allocate(a_task, On(0, Devices(0, 2))).ok());
  EXPECT_GT(s.CompareQueues(a, b), 0) << "a has all it deserves, b none: b goes first";
  const size_t cp = st.Checkpoint();
  ASSERT_TRUE(st.Allocate(b_task, On(0, Devices(2, 6))).ok());
  EXPECT_LT(s.CompareQueues(a, b), 0) << "both have all they deserve";
  st.Rollback(cp);
  EXPECT_GT(s.CompareQueues(a, b), 0) << "b's allocation undone: b first again";
  st.Rollback(0);
  EXPECT_LT(s.CompareQueues(a, b), 0) << "all undone";
}

}  // namespace
}  // namespace gantry
