// Fair share with memory: UsageMemory's decayed usage, and the order it gives queues.
#include "model/usage_memory.h"

#include <gtest/gtest.h>

#include "engine/session.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr Milli kOneGpu = 1000;

// A 8-GPU node, and a top-level queue with a half-life of 100 s holding `gpus` GPUs.
struct Fixture {
  ClusterState c;
  NodeId node;
  QueueId q;
  explicit Fixture(int64_t half_life_s = 100) {
    node = AddGpuNode(c, "gpu-0", 8);
    q = AddQueue(c, "team");
    c.SetQueueUsageHalfLife(q, half_life_s);
  }
  void Hold(int gpus) {
    std::vector<int32_t> devices;
    for (int i = 0; i < gpus; ++i) devices.push_back(i);
    Occupy(c, q, node, devices);
  }
  Milli UsedGpus() const { return c.queue(q).usage.Get(kGpu); }
};

TEST(UsageMemoryTest, HeldAllocationIsRememberedAndHalvesEachHalfLife) {
  Fixture f;
  f.Hold(4);
  UsageMemory memory;
  memory.Advance(f.c, 0);
  EXPECT_EQ(f.UsedGpus(), 0);  // nothing held for any time yet
  memory.Advance(f.c, 100);    // 4 GPUs held for one half-life: half of the way to 4
  EXPECT_EQ(f.UsedGpus(), 2 * kOneGpu);
  memory.Advance(f.c, 200);
  EXPECT_EQ(f.UsedGpus(), 3 * kOneGpu);
  memory.Advance(f.c, 100'000);  // long after: what it holds
  EXPECT_EQ(f.UsedGpus(), 4 * kOneGpu);
  for (TaskId t : f.c.job(f.c.jobs().size() - 1).tasks) f.c.Release(t);
  memory.Advance(f.c, 100'100);  // it stopped: halved once
  EXPECT_EQ(f.UsedGpus(), 2 * kOneGpu);
  memory.Advance(f.c, 100'200);
  EXPECT_EQ(f.UsedGpus(), 1 * kOneGpu);
  memory.Advance(f.c, 100'150);  // a clock that goes back counts as no time
  EXPECT_EQ(f.UsedGpus(), 1 * kOneGpu);
}

TEST(UsageMemoryTest, ATreeWithoutHalfLifeRemembersNothing) {
  Fixture f(/*half_life_s=*/0);
  f.Hold(4);
  f.c.SetQueueUsage(f.q, ResourceVector{{kGpu, 3 * kOneGpu}});
  UsageMemory memory;
  memory.Advance(f.c, 0);
  memory.Advance(f.c, 1000);
  EXPECT_TRUE(f.c.queue(f.q).usage.empty());
}

TEST(UsageMemoryTest, ChildQueuesUseTheirTopLevelQueuesHalfLife) {
  Fixture f;
  const QueueId child = AddQueue(f.c, "child");
  ASSERT_TRUE(f.c.SetQueueTree(child, f.q, "", true, {}).ok());
  EXPECT_EQ(TreeUsageHalfLife(f.c, child), 100);
  std::vector<int32_t> devices{0, 1};
  Occupy(f.c, child, f.node, devices);
  UsageMemory memory;
  memory.Advance(f.c, 0);
  memory.Advance(f.c, 100);
  EXPECT_EQ(f.c.queue(child).usage.Get(kGpu), 1 * kOneGpu);
}

// Two top-level queues, both with memory, nothing held now, one 8-GPU job each on one
// 8-GPU node: the one that held the node lately waits, though its name comes first.
TEST(UsageMemoryTest, TheQueueThatUsedMoreLatelyGoesSecond) {
  for (const bool memory_on : {false, true}) {
    ClusterState c;
    AddGpuNode(c, "gpu-0", 8);
    const QueueId a = AddQueue(c, "a");
    const QueueId b = AddQueue(c, "b");
    c.SetQueueUsageHalfLife(a, memory_on ? 3600 : 0);
    c.SetQueueUsageHalfLife(b, memory_on ? 3600 : 0);
    c.SetQueueUsage(a, ResourceVector{{kGpu, 8 * kOneGpu}});
    AddJob(c, "ja", a, GpuSpec(8), 1);
    AddJob(c, "jb", b, GpuSpec(8), 1);
    EXPECT_EQ(BindsOf(c, RunSession(c)), memory_on ? "jb-0@gpu-0" : "ja-0@gpu-0") << memory_on;
  }
}

}  // namespace
}  // namespace gantry
