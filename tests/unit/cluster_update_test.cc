// World changes on ClusterState: what the daemon applies as watch events arrive.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

Node GpuNode(std::string name, int gpus, Milli cpu = 64000) {
  Node node;
  node.name = std::move(name);
  node.allocatable = ResourceVector{{kCpu, cpu}};
  for (int i = 0; i < gpus; ++i) {
    GpuDevice g;
    g.model = GpuModels().Intern("A100-80GB");
    g.memory_mib = 81920;
    node.gpus.push_back(g);
  }
  return node;
}

Queue NamedQueue(std::string name) {
  Queue queue;
  queue.name = std::move(name);
  return queue;
}

struct World {
  ClusterState c;
  QueueId q = 0;
  SpecId one_gpu = 0;
  SpecId half_gpu = 0;
  World() {
    q = Must(c.AddQueue(NamedQueue("default")));
    TaskSpec spec;
    spec.requests = ResourceVector{{kCpu, 4000}};
    spec.gpu.count = 1;
    one_gpu = c.AddSpec(spec);
    spec.gpu = GpuRequest();
    spec.gpu.milli = 500;
    half_gpu = c.AddSpec(spec);
  }
  JobId Job(const std::string& name, int32_t min_member = 1) {
    gantry::Job job;
    job.name = name;
    job.queue = q;
    job.min_member = min_member;
    return Must(c.AddJob(job));
  }
};

TEST(ClusterUpdate, UnplaceReturnsTheTaskToPending) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 2)));
  JobId j = w.Job("j");
  TaskId t = Must(w.c.AddTask(j, w.one_gpu, "t"));
  int32_t gpu[] = {1};
  ASSERT_TRUE(w.c.Place(t, n, gpu).ok());
  EXPECT_TRUE(w.c.jobs_with_pending().empty());
  w.c.Unplace(t);
  EXPECT_EQ(w.c.task(t).state, TaskState::kPending);
  EXPECT_EQ(w.c.node(n).gpus[1].used_milli, 0);
  EXPECT_EQ(w.c.node(n).used.Get(kCpu), 0);
  EXPECT_EQ(w.c.job(j).pending, 1);
  EXPECT_EQ(w.c.job(j).running, 0);
  EXPECT_EQ(w.c.queue(w.q).allocated.Get(kGpu), 0);
  EXPECT_EQ(w.c.jobs_with_pending().count(j), 1u);
  EXPECT_TRUE(w.c.tasks_on(n).empty());
}

TEST(ClusterUpdate, RemovedTaskFreesItsRoomAndItsIdIsReused) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 1)));
  JobId j = w.Job("j");
  TaskId a = Must(w.c.AddTask(j, w.half_gpu, "a"));
  TaskId b = Must(w.c.AddTask(j, w.half_gpu, "b"));
  int32_t gpu[] = {0};
  ASSERT_TRUE(w.c.Place(a, n, gpu).ok());
  w.c.RemoveTask(a);
  EXPECT_EQ(w.c.node(n).gpus[0].used_milli, 0);
  EXPECT_EQ(w.c.job(j).tasks, std::vector<TaskId>{b});
  w.c.RemoveTask(b);  // pending: the job has nothing pending any more
  EXPECT_TRUE(w.c.jobs_with_pending().empty());
  TaskId c = Must(w.c.AddTask(j, w.one_gpu, "c"));
  EXPECT_TRUE(c == a || c == b);
  EXPECT_EQ(w.c.task(c).name, "c");
}

TEST(ClusterUpdate, RemovedJobNameCanBeAddedAgain) {
  World w;
  JobId j = w.Job("j");
  w.c.RemoveJob(j);
  EXPECT_EQ(w.c.FindJob("j"), kNone);
  JobId again = w.Job("j", 3);
  EXPECT_EQ(again, j);
  EXPECT_EQ(w.c.job(again).min_member, 3);
}

TEST(ClusterUpdate, PlaceBoundAcceptsWhatTheApiServerAlreadyBound) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 1, /*cpu=*/2000)));
  JobId j = w.Job("j");
  TaskId t = Must(w.c.AddTask(j, w.one_gpu, "t"));  // wants 4 CPUs, node has 2
  int32_t gpu[] = {0};
  EXPECT_FALSE(w.c.Place(t, n, gpu).ok());
  ASSERT_TRUE(w.c.PlaceBound(t, n, gpu).ok());
  EXPECT_EQ(w.c.node(n).used.Get(kCpu), 4000);
  int32_t bad[] = {3};
  TaskId u = Must(w.c.AddTask(j, w.one_gpu, "u"));
  Status s = w.c.PlaceBound(u, n, bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("GPU index 3 out of range"), std::string::npos) << s.message();
}

TEST(ClusterUpdate, UpdateJobMovesHoldingsToTheNewQueue) {
  World w;
  QueueId other = Must(w.c.AddQueue(NamedQueue("other")));
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 2)));
  JobId j = w.Job("j");
  TaskId t = Must(w.c.AddTask(j, w.one_gpu, "t"));
  int32_t gpu[] = {0};
  ASSERT_TRUE(w.c.Place(t, n, gpu).ok());
  ASSERT_TRUE(w.c.UpdateJob(j, 2, 7, other).ok());
  EXPECT_EQ(w.c.queue(w.q).allocated.Get(kGpu), 0);
  EXPECT_EQ(w.c.queue(other).allocated.Get(kGpu), 1000);
  EXPECT_EQ(w.c.job(j).min_member, 2);
  EXPECT_EQ(w.c.job(j).priority, 7);
  EXPECT_FALSE(w.c.UpdateJob(j, 0, 0, other).ok());
  EXPECT_FALSE(w.c.UpdateJob(j, 1, 0, 99).ok());
}

TEST(ClusterUpdate, UpdateNodeKeepsUsageAndChangesCapacity) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 4)));
  JobId j = w.Job("j");
  TaskId t = Must(w.c.AddTask(j, w.one_gpu, "t"));
  int32_t gpu[] = {2};
  ASSERT_TRUE(w.c.Place(t, n, gpu).ok());
  uint32_t before = w.c.node(n).shape_class;
  Node changed = GpuNode("n0", 8, 128000);
  changed.labels.Set("pool", "big");
  ASSERT_TRUE(w.c.UpdateNode(n, changed).ok());
  EXPECT_EQ(w.c.capacity().Get(kGpu), 8000);
  EXPECT_EQ(w.c.capacity().Get(kCpu), 128000);
  EXPECT_EQ(w.c.node(n).gpus[2].used_milli, 1000);
  EXPECT_EQ(w.c.node(n).used.Get(kCpu), 4000);
  EXPECT_NE(w.c.node(n).shape_class, before);
  // Fewer devices than are in use: the used ones stay until their tasks end.
  ASSERT_TRUE(w.c.UpdateNode(n, GpuNode("n0", 1)).ok());
  EXPECT_EQ(w.c.node(n).gpus.size(), 3u);
  EXPECT_FALSE(w.c.UpdateNode(n, GpuNode("renamed", 1)).ok());
}

TEST(ClusterUpdate, NodeChangesMoveTheNodeStamp) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 4)));
  uint64_t added = w.c.node_stamp(n);
  ASSERT_TRUE(w.c.UpdateNode(n, GpuNode("n0", 4, 32000)).ok());
  uint64_t updated = w.c.node_stamp(n);
  EXPECT_NE(updated, added);
  w.c.RemoveNode(n);
  EXPECT_NE(w.c.node_stamp(n), updated);
}

TEST(ClusterUpdate, RemovedNodeWithTasksLeavesCapacityAndComesBackByName) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 4)));
  Must(w.c.AddNode(GpuNode("n1", 4)));
  TaskId t = Must(w.c.AddTask(w.Job("j"), w.one_gpu, "t"));
  ASSERT_TRUE(w.c.PlaceBound(t, n, std::vector<int32_t>{2}).ok());
  w.c.RemoveNode(n);
  EXPECT_TRUE(w.c.node(n).removed);
  EXPECT_TRUE(w.c.node(n).unschedulable);
  EXPECT_EQ(w.c.capacity().Get(kGpu), 4000);
  EXPECT_EQ(w.c.live_node_count(), 1u);
  // Its task still counts there, and its name still finds it.
  EXPECT_EQ(w.c.FindNode("n0"), n);
  EXPECT_EQ(w.c.node(n).gpus[2].used_milli, 1000);
  w.c.RemoveNode(n);  // twice is harmless
  EXPECT_EQ(w.c.capacity().Get(kGpu), 4000);
  ASSERT_TRUE(w.c.UpdateNode(n, GpuNode("n0", 4)).ok());
  EXPECT_FALSE(w.c.node(n).removed);
  EXPECT_FALSE(w.c.node(n).unschedulable);
  EXPECT_EQ(w.c.capacity().Get(kGpu), 8000);
  EXPECT_EQ(w.c.node(n).gpus[2].used_milli, 1000);
  EXPECT_EQ(w.c.live_node_count(), 2u);
}

TEST(ClusterUpdate, RemovedNodeIsFreedOnceItsLastTaskGoes) {
  World w;
  NodeId n = Must(w.c.AddNode(GpuNode("n0", 4)));
  TaskId t = Must(w.c.AddTask(w.Job("j"), w.one_gpu, "t"));
  ASSERT_TRUE(w.c.PlaceBound(t, n, std::vector<int32_t>{0}).ok());
  w.c.RemoveNode(n);
  EXPECT_EQ(w.c.FindNode("n0"), n);
  w.c.RemoveTask(t);
  // Nothing of it is kept: no name, no devices; the slot is reused by the next node.
  EXPECT_EQ(w.c.FindNode("n0"), kNone);
  EXPECT_TRUE(w.c.node(n).name.empty());
  EXPECT_TRUE(w.c.node(n).gpus.empty());
  EXPECT_TRUE(w.c.node(n).removed);
  NodeId again = Must(w.c.AddNode(GpuNode("n9", 2)));
  EXPECT_EQ(again, n);
  EXPECT_EQ(w.c.nodes().size(), 1u);
  EXPECT_EQ(w.c.capacity().Get(kGpu), 2000);
}

TEST(ClusterUpdate, UpdateQueueChecksGuaranteeAgainstCapability) {
  World w;
  ResourceVector cap{{kGpu, 4000}};
  ASSERT_TRUE(w.c.UpdateQueue(w.q, 3, ResourceVector{{kGpu, 2000}}, cap).ok());
  EXPECT_EQ(w.c.queue(w.q).weight, 3);
  EXPECT_FALSE(w.c.UpdateQueue(w.q, 3, ResourceVector{{kGpu, 8000}}, cap).ok());
  EXPECT_FALSE(w.c.UpdateQueue(w.q, 0, {}, {}).ok());
}

}  // namespace
}  // namespace gantry
