#include "engine/node_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/random.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr Milli kGi = 1024LL * 1024 * 1024 * kMilliPerUnit;

// The whole table as text, so that two tables compare exactly and a difference reads.
std::string Text(const NodeTable& t) {
  std::string out = "resources " + std::to_string(t.resource_count) + "\n";
  for (size_t n = 0; n < t.nodes.size(); ++n) {
    const NodeWork& w = t.nodes[n];
    out += std::to_string(n) + ": gpus " + std::to_string(w.gpu_begin) + "+" +
           std::to_string(w.gpu_count) + " whole " + std::to_string(w.whole_free) + " partial " +
           std::to_string(w.partial_count) + " used " + std::to_string(w.gpu_used) + " max " +
           std::to_string(w.max_free_milli) + " tasks " + std::to_string(w.tasks) + " class " +
           std::to_string(w.shape_class) + " pods " + std::to_string(w.max_pods) + " free";
    for (uint32_t r = 0; r < t.resource_count; ++r) {
      out += " " + std::to_string(t.free[n * t.resource_count + r]);
    }
    for (int32_t d = 0; d < w.gpu_count; ++d) {
      const auto slot = static_cast<size_t>(w.gpu_begin + d);
      out += " " + std::to_string(t.gpu_free_milli[slot]) + "/" +
             std::to_string(t.gpu_free_memory[slot]);
    }
    out += "\n";
  }
  return out;
}

class NodeTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) AddNode("gpu-" + std::to_string(i), 4);
    AddNode("cpu-0", 0);
    Queue q;
    q.name = "q";
    queue_ = Must(c_.AddQueue(std::move(q)));
    TaskSpec whole;
    whole.requests = ResourceVector{{kCpu, 4000}, {kMemory, 8 * kGi}};
    whole.gpu.count = 2;
    whole_ = c_.AddSpec(whole);
    TaskSpec shared;
    shared.requests = ResourceVector{{kCpu, 1000}};
    shared.gpu.milli = 250;
    shared.gpu.memory_mib = 1000;
    shared_ = c_.AddSpec(shared);
  }

  void AddNode(const std::string& name, int gpus) {
    Node node;
    node.name = name;
    node.allocatable = ResourceVector{{kCpu, 32000}, {kMemory, 256 * kGi}, {kPods, 110'000}};
    for (int i = 0; i < gpus; ++i) {
      GpuDevice g;
      g.memory_mib = 40000;
      node.gpus.push_back(g);
    }
    Must(c_.AddNode(std::move(node)));
  }

  TaskId AddTask(SpecId spec) {
    Job job;
    job.name = "j" + std::to_string(c_.jobs().size());
    job.queue = queue_;
    JobId id = Must(c_.AddJob(std::move(job)));
    return Must(c_.AddTask(id, spec, c_.job(id).name + "-0"));
  }

  ClusterState c_;
  QueueId queue_ = 0;
  SpecId whole_ = 0;
  SpecId shared_ = 0;
};

TEST_F(NodeTableTest, BuildReadsFreeResourcesAndDevices) {
  TaskId t = AddTask(shared_);
  int32_t device[] = {1};
  ASSERT_TRUE(c_.Place(t, 2, device).ok());
  NodeTable table = BuildNodeTable(c_);
  ASSERT_EQ(table.nodes.size(), 5u);
  const NodeWork& w = table.nodes[2];
  EXPECT_EQ(w.gpu_begin, 8);
  EXPECT_EQ(w.gpu_count, 4);
  EXPECT_EQ(w.whole_free, 3);
  EXPECT_EQ(w.partial_count, 1);
  EXPECT_EQ(w.gpu_used, 250);
  EXPECT_EQ(w.max_free_milli, 1000);
  EXPECT_EQ(w.tasks, 1);
  EXPECT_EQ(w.max_pods, 110'000);
  EXPECT_EQ(table.free[2 * table.resource_count + kCpu], 31000);
  EXPECT_EQ(table.free[2 * table.resource_count + kGpu], 3750);
  EXPECT_EQ(table.gpu_free_milli[9], 750);
  EXPECT_EQ(table.gpu_free_memory[9], 39000);
  EXPECT_EQ(table.nodes[4].gpu_count, 0);
}

TEST_F(NodeTableTest, CacheFollowsPlacementsAndReleases) {
  // Random placements and releases between syncs: the cached table always equals one
  // built from scratch.
  NodeTableCache cache;
  Rng rng(7);
  std::vector<TaskId> running;
  for (int round = 0; round < 200; ++round) {
    if (!running.empty() && rng.Uniform(3) == 0) {
      size_t k = rng.Uniform(running.size());
      c_.Release(running[k]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      const bool shared = rng.Uniform(2) == 0;
      TaskId t = AddTask(shared ? shared_ : whole_);
      auto node = static_cast<NodeId>(rng.Uniform(4));
      std::vector<int32_t> devices;
      for (int32_t d = 0; d < 4 && devices.size() < (shared ? 1u : 2u); ++d) {
        const GpuDevice& g = c_.node(node).gpus[static_cast<size_t>(d)];
        if (g.free_milli() >= (shared ? 250 : 1000)) devices.push_back(d);
      }
      if (c_.Place(t, node, devices).ok()) running.push_back(t);
    }
    if (rng.Uniform(4) == 0) continue;  // several changes between some syncs
    ASSERT_EQ(Text(cache.Sync(c_)), Text(BuildNodeTable(c_))) << "round " << round;
  }
}

TEST_F(NodeTableTest, CacheGrowsWithNodesAndResources) {
  NodeTableCache cache;
  cache.Sync(c_);
  AddNode("gpu-late", 2);
  EXPECT_EQ(Text(cache.Sync(c_)), Text(BuildNodeTable(c_)));
  // A resource that only specs name gets no column (nothing of it is free anywhere);
  // one that a node has does.
  const ResourceId rdma = InternResource("rdma/hca-node-table-test");
  TaskSpec spec;
  spec.requests = ResourceVector{{rdma, 1000}};
  c_.AddSpec(spec);
  EXPECT_LE(cache.Sync(c_).resource_count, rdma);
  Node node;
  node.name = "rdma-node";
  node.allocatable = ResourceVector{{kCpu, 1000}, {rdma, 4000}};
  ASSERT_TRUE(c_.AddNode(std::move(node)).ok());
  const NodeTable& synced = cache.Sync(c_);
  EXPECT_GT(synced.resource_count, rdma);
  EXPECT_EQ(Text(synced), Text(BuildNodeTable(c_)));
}

// Stamps are counted per cluster (and its copies): two clusters built apart give their
// first nodes the same stamps, and a cache synced with one must not take the other's
// nodes for unchanged. A copy shares its cluster's counter, so the cache follows it.
TEST(NodeTableCacheTest, ClustersBuiltApartAreNotTakenForEachOther) {
  auto one_node = [](Milli cpu) {
    ClusterState c;
    Node node;
    node.name = "node-0";
    node.allocatable = ResourceVector{{kCpu, cpu}, {kMemory, 8 * kGi}};
    Must(c.AddNode(std::move(node)));
    return c;
  };
  const ClusterState a = one_node(4000);
  const ClusterState b = one_node(16000);
  ASSERT_EQ(a.node_stamp(0), b.node_stamp(0));  // what makes the case: the same stamps
  NodeTableCache cache;
  EXPECT_EQ(Text(cache.Sync(a)), Text(BuildNodeTable(a)));
  EXPECT_EQ(Text(cache.Sync(b)), Text(BuildNodeTable(b)));
  EXPECT_NE(Text(BuildNodeTable(a)), Text(BuildNodeTable(b)));

  ClusterState copy = b;
  EXPECT_EQ(copy.stamp_counter(), b.stamp_counter());
  Node more;
  more.name = "node-1";
  more.allocatable = ResourceVector{{kCpu, 1000}};
  Must(copy.AddNode(std::move(more)));
  EXPECT_NE(copy.node_stamp(1), b.node_stamp(0));  // one counter: no stamp given twice
  EXPECT_EQ(Text(cache.Sync(copy)), Text(BuildNodeTable(copy)));
}

}  // namespace
}  // namespace gantry
