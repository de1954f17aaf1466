#include "engine/node_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gantry {
namespace {

// Bucket order is not part of the contract (removal swaps with the last): compare sorted.
std::vector<NodeId> Sorted(std::vector<NodeId> nodes) {
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

using Ids = std::vector<NodeId>;

// Every bucket, sorted, from 0 to max_whole().
std::vector<Ids> Buckets(const NodeIndex& index) {
  std::vector<Ids> out;
  for (int32_t k = 0; k <= index.max_whole(); ++k) out.push_back(Sorted(index.with_whole_free(k)));
  return out;
}

// Nodes: 0: 4 GPUs, 2 free, none partial; 1: 4 GPUs, 0 free, one partial;
// 2: 4 GPUs all free; 3: CPU only; 4: 2 GPUs, 1 free, one partial.
class NodeIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { index_.Build({2, 0, 4, 0, 1}, {0, 1, 0, 0, 1}, {4, 4, 4, 0, 2}); }
  NodeIndex index_;
};

TEST_F(NodeIndexTest, BuildPutsEachGpuNodeInItsBucket) {
  EXPECT_EQ(index_.max_whole(), 4);
  EXPECT_EQ(Buckets(index_), (std::vector<Ids>{{1}, {4}, {0}, {}, {2}}));
  EXPECT_EQ(Sorted(index_.partial()), (Ids{1, 4}));
  EXPECT_EQ(index_.cpu_only(), (Ids{3}));
  EXPECT_FALSE(index_.is_partial(0));
  EXPECT_TRUE(index_.is_partial(1));
  EXPECT_FALSE(index_.is_partial(2));
  EXPECT_FALSE(index_.is_partial(3));
  EXPECT_TRUE(index_.is_partial(4));
}

TEST_F(NodeIndexTest, UpdateMovesBetweenBuckets) {
  index_.Update(2, 3, false);  // a whole GPU taken on node 2
  EXPECT_EQ(Buckets(index_), (std::vector<Ids>{{1}, {4}, {0}, {2}, {}}));
  index_.Update(0, 0, false);  // node 0 full
  EXPECT_EQ(Buckets(index_), (std::vector<Ids>{{0, 1}, {4}, {}, {2}, {}}));
  index_.Update(1, 4, false);  // node 1 emptied
  EXPECT_EQ(Buckets(index_), (std::vector<Ids>{{0}, {4}, {}, {2}, {1}}));
  EXPECT_EQ(Sorted(index_.partial()), (Ids{4}));
  EXPECT_FALSE(index_.is_partial(1));
  // CPU-only nodes are untouched by all of it.
  EXPECT_EQ(index_.cpu_only(), (Ids{3}));
}

TEST_F(NodeIndexTest, UpdateChangesPartialOnly) {
  index_.Update(0, 2, true);  // same bucket, now partial
  EXPECT_EQ(Buckets(index_), (std::vector<Ids>{{1}, {4}, {0}, {}, {2}}));
  EXPECT_EQ(Sorted(index_.partial()), (Ids{0, 1, 4}));
  EXPECT_TRUE(index_.is_partial(0));
  index_.Update(0, 2, true);  // no change: not listed twice
  EXPECT_EQ(Sorted(index_.partial()), (Ids{0, 1, 4}));
  index_.Update(1, 0, false);  // partial device filled up
  EXPECT_EQ(Sorted(index_.partial()), (Ids{0, 4}));
  EXPECT_FALSE(index_.is_partial(1));
  index_.Update(1, 0, false);
  EXPECT_EQ(Sorted(index_.partial()), (Ids{0, 4}));
  index_.Update(4, 1, false);
  index_.Update(0, 2, false);
  EXPECT_TRUE(index_.partial().empty());
}

TEST_F(NodeIndexTest, RemovingFromTheMiddleKeepsTheOthers) {
  // Put three nodes in bucket 0, then take out the first one inserted.
  index_.Update(0, 0, false);
  index_.Update(2, 0, false);
  EXPECT_EQ(Sorted(index_.with_whole_free(0)), (Ids{0, 1, 2}));
  index_.Update(1, 1, true);
  EXPECT_EQ(Sorted(index_.with_whole_free(0)), (Ids{0, 2}));
  EXPECT_EQ(Sorted(index_.with_whole_free(1)), (Ids{1, 4}));
  index_.Update(0, 2, false);
  index_.Update(2, 4, false);
  EXPECT_EQ(Buckets(index_), (std::vector<Ids>{{}, {1, 4}, {0}, {}, {2}}));
  // Each node is in exactly one bucket.
  size_t total = 0;
  for (int32_t k = 0; k <= index_.max_whole(); ++k) total += index_.with_whole_free(k).size();
  EXPECT_EQ(total, 4u);
}

TEST(NodeIndexBuildTest, BucketsReachTheLargestDeviceCount) {
  NodeIndex index;
  // The largest free count is 3, but a node has 8 GPUs: buckets go up to 8.
  index.Build({3, 2}, {1, 0}, {8, 2});
  EXPECT_EQ(index.max_whole(), 8);
  EXPECT_EQ(Sorted(index.with_whole_free(3)), (Ids{0}));
  EXPECT_EQ(Sorted(index.with_whole_free(2)), (Ids{1}));
  index.Update(0, 8, false);
  EXPECT_EQ(Sorted(index.with_whole_free(8)), (Ids{0}));
  EXPECT_TRUE(index.with_whole_free(3).empty());
}

TEST(NodeIndexBuildTest, CpuOnlyClusterAndRebuild) {
  NodeIndex index;
  index.Build({0, 0}, {0, 0}, {0, 0});
  EXPECT_EQ(index.max_whole(), 0);
  EXPECT_TRUE(index.with_whole_free(0).empty());
  EXPECT_EQ(index.cpu_only(), (Ids{0, 1}));
  EXPECT_TRUE(index.partial().empty());

  // Building again starts over.
  index.Build({1, 0, 2}, {0, 0, 1}, {1, 0, 2});
  EXPECT_EQ(index.max_whole(), 2);
  EXPECT_EQ(index.cpu_only(), (Ids{1}));
  EXPECT_EQ(Buckets(index), (std::vector<Ids>{{}, {0}, {2}}));
  EXPECT_EQ(index.partial(), (Ids{2}));
  EXPECT_FALSE(index.is_partial(0));
}

TEST(NodeIndexBuildTest, EmptyCluster) {
  NodeIndex index;
  index.Build({}, {}, {});
  EXPECT_EQ(index.max_whole(), 0);
  EXPECT_TRUE(index.with_whole_free(0).empty());
  EXPECT_TRUE(index.cpu_only().empty());
  EXPECT_TRUE(index.partial().empty());
}

}  // namespace
}  // namespace gantry
