// The queue tree: structure checks (model/queue_tree.h), deserved shares over it
// (engine/queue_shares.h), and what the proportion plugin and allocate make of it.
#include "model/queue_tree.h"

#include <gtest/gtest.h>

#include "engine/queue_shares.h"
#include "model/limits.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

ResourceVector Gpus(int64_t n) {
  ResourceVector v;
  v.Set(kGpu, n * kMilliPerUnit);
  return v;
}

QueueId AddChild(ClusterState& c, const std::string& name, QueueId parent, int64_t weight = 1,
                 ResourceVector guarantee = {}, ResourceVector capability = {}) {
  Queue q;
  q.name = name;
  q.weight = weight;
  q.parent = parent;
  q.guarantee = std::move(guarantee);
  q.capability = std::move(capability);
  return Must(c.AddQueue(std::move(q)));
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(QueueTree, ChildrenRootsAndGuaranteesAddUp) {
  ClusterState c;
  QueueId org = AddQueue(c, "org");
  QueueId x = AddChild(c, "x", org, 1, Gpus(2));
  QueueId y = AddChild(c, "y", org, 1, Gpus(3));
  QueueId solo = AddQueue(c, "solo");
  QueueTree tree = BuildQueueTree(c.queues());
  EXPECT_EQ(tree.roots, (std::vector<QueueId>{org, solo}));
  EXPECT_EQ(tree.children[org], (std::vector<QueueId>{x, y}));
  EXPECT_TRUE(tree.leaf(x));
  EXPECT_EQ(tree.depth[x], 2);
  EXPECT_EQ(tree.guarantee[org].Get(kGpu), 5000);  // org names none: its children's
  EXPECT_EQ(FirstQueueProblem(tree, nullptr), "");
}

TEST(QueueTree, CycleIsNamedAndStopsOnlyItsQueues) {
  ClusterState c;
  QueueId a = AddQueue(c, "a");
  QueueId b = AddChild(c, "b", a);
  QueueId below = AddChild(c, "below", b);
  QueueId fine = AddQueue(c, "fine");
  ASSERT_TRUE(c.SetQueueTree(a, b, "", true, {}).ok());
  QueueTree tree = BuildQueueTree(c.queues());
  EXPECT_TRUE(Contains(tree.problem[a], "cycle of parents: \"a\" -> \"b\" -> \"a\""))
      << tree.problem[a];
  EXPECT_TRUE(Contains(tree.problem[b], "cycle of parents")) << tree.problem[b];
  EXPECT_TRUE(Contains(tree.problem[below], "is below queue \"b\", which is out of the tree"))
      << tree.problem[below];
  EXPECT_TRUE(tree.in_tree(fine));
  EXPECT_EQ(tree.roots, (std::vector<QueueId>{fine}));
}

TEST(QueueTree, MissingParentAndTooDeep) {
  ClusterState c;
  QueueId orphan = AddQueue(c, "orphan");
  ASSERT_TRUE(c.SetQueueTree(orphan, kNone, "gone", true, {}).ok());
  QueueId q = AddQueue(c, "level-1");
  for (int level = 2; level <= kMaxQueueDepth + 1; ++level) {
    q = AddChild(c, "level-" + std::to_string(level), q);
  }
  QueueTree tree = BuildQueueTree(c.queues());
  EXPECT_EQ(tree.problem[orphan], "queue \"orphan\": parent queue \"gone\" does not exist");
  EXPECT_TRUE(Contains(tree.problem[q], "levels deep")) << tree.problem[q];
  EXPECT_TRUE(tree.in_tree(c.FindQueue("level-" + std::to_string(kMaxQueueDepth))));
}

TEST(QueueTree, ChildGuaranteesMustFitTheParent) {
  ClusterState c;
  QueueId org = AddQueue(c, "org", 1, Gpus(4), Gpus(8));
  QueueId x = AddChild(c, "x", org, 1, Gpus(3));
  QueueId y = AddChild(c, "y", org, 1, Gpus(3));  // 3 + 3 > 4
  QueueId capped = AddQueue(c, "capped", 1, {}, Gpus(2));
  QueueId big = AddChild(c, "big", capped, 1, Gpus(3));  // 3 > capability 2
  QueueTree tree = BuildQueueTree(c.queues());
  EXPECT_TRUE(tree.in_tree(x));
  EXPECT_TRUE(Contains(tree.problem[y], "exceeds the guarantee of its parent queue \"org\""))
      << tree.problem[y];
  EXPECT_TRUE(Contains(tree.problem[big], "exceeds the capability of its parent queue \"capped\""))
      << tree.problem[big];
  EXPECT_TRUE(tree.in_tree(org));
}

TEST(QueueShares, FlatQueuesSplitByWeightAfterGuarantees) {
  ClusterState c;
  QueueId a = AddQueue(c, "a", 3);
  QueueId b = AddQueue(c, "b", 1, Gpus(8));
  QueueTree tree = BuildQueueTree(c.queues());
  auto d = DeservedShares(c.queues(), tree, {Gpus(10), Gpus(10)}, Gpus(12));
  EXPECT_EQ(d[a].Get(kGpu), 3000);
  EXPECT_EQ(d[b].Get(kGpu), 9000);
}

TEST(QueueShares, TopDownWithWaterFillingAndCaps) {
  ClusterState c;
  QueueId p = AddQueue(c, "p", 1);
  QueueId c1 = AddChild(c, "c1", p, 1);
  QueueId c2 = AddChild(c, "c2", p, 1, {}, Gpus(3));
  QueueId q = AddQueue(c, "q", 1);
  QueueTree tree = BuildQueueTree(c.queues());
  // c1 wants 1, c2 wants 20 but may use 3: p wants 4, q takes the other 12.
  auto d = DeservedShares(c.queues(), tree, {{}, Gpus(1), Gpus(20), Gpus(20)}, Gpus(16));
  EXPECT_EQ(d[p].Get(kGpu), 4000);
  EXPECT_EQ(d[c1].Get(kGpu), 1000);
  EXPECT_EQ(d[c2].Get(kGpu), 3000);
  EXPECT_EQ(d[q].Get(kGpu), 12000);
}

TEST(QueueShares, RemaindersAreExact) {
  ClusterState c;
  QueueId p = AddQueue(c, "p");
  AddChild(c, "x", p);
  AddChild(c, "y", p);
  AddChild(c, "z", p);
  QueueTree tree = BuildQueueTree(c.queues());
  ResourceVector one;
  one.Set(kGpu, 1000);
  auto d = DeservedShares(c.queues(), tree, {{}, Gpus(5), Gpus(5), Gpus(5)}, one);
  EXPECT_EQ(d[1].Get(kGpu) + d[2].Get(kGpu) + d[3].Get(kGpu), 1000);
  EXPECT_EQ(d[1].Get(kGpu), 334);  // the one milli-unit left goes in id order
}

TEST(QueueOrder, ElasticJobsTakeTurnsByWeight) {
  ClusterState c;
  for (int i = 0; i < 16; ++i) AddGpuNode(c, "n" + std::to_string(i), 1);
  QueueId a = AddQueue(c, "a", 3);
  QueueId b = AddQueue(c, "b", 1);
  AddJob(c, "ja", a, GpuSpec(1, 1000), 16, /*min_member=*/1);
  AddJob(c, "jb", b, GpuSpec(1, 1000), 16, /*min_member=*/1, 0, 1);
  Decisions d = RunSession(c);
  int in_a = 0, in_b = 0;
  for (const BindDecision& bind : d.binds) (c.job(bind.job).queue == a ? in_a : in_b)++;
  EXPECT_EQ(in_a, 12);
  EXPECT_EQ(in_b, 4);
}

TEST(QueueOrder, HierarchicalDrfGoesDownTheBestChild) {
  // 2 GPUs; org-a (weight 1) already holds 1 through a1; org-b holds none. b's job goes
  // before a2's even though a2 itself holds nothing: org-b's share is lower than org-a's.
  ClusterState c;
  NodeId n = AddGpuNode(c, "n", 2);
  QueueId org_a = AddQueue(c, "org-a");
  QueueId a1 = AddChild(c, "a1", org_a);
  QueueId a2 = AddChild(c, "a2", org_a);
  QueueId org_b = AddQueue(c, "org-b");
  Occupy(c, a1, n, {0});
  JobId from_a2 = AddJob(c, "from-a2", a2, GpuSpec(1), 1, 1, 0, 1);
  JobId from_b = AddJob(c, "from-b", org_b, GpuSpec(1), 1, 1, 0, 2);
  Decisions d = RunSession(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(d.binds[0].job, from_b);
  (void)from_a2;
}

TEST(QueueOrder, JobsInInnerOrBrokenQueuesWaitSayingWhy) {
  ClusterState c;
  AddGpuNode(c, "n", 4);
  QueueId org = AddQueue(c, "org");
  AddChild(c, "team", org);
  QueueId orphan = AddQueue(c, "orphan");
  ASSERT_TRUE(c.SetQueueTree(orphan, kNone, "gone", true, {}).ok());
  JobId inner = AddJob(c, "inner", org, GpuSpec(1), 1);
  JobId lost = AddJob(c, "lost", orphan, GpuSpec(1), 1, 1, 0, 1);
  Decisions d = RunSession(c);
  EXPECT_TRUE(d.binds.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(d, inner), "jobs belong to leaf queues only"))
      << PendingReasonOf(d, inner);
  EXPECT_TRUE(Contains(PendingReasonOf(d, lost), "parent queue \"gone\" does not exist"))
      << PendingReasonOf(d, lost);
}

TEST(QueueLimits, AParentsCapabilityHoldsItsChildren) {
  ClusterState c;
  AddGpuNode(c, "n", 8);
  QueueId p = AddQueue(c, "p", 1, {}, Gpus(3));
  QueueId x = AddChild(c, "x", p);
  QueueId y = AddChild(c, "y", p);
  AddJob(c, "jx", x, GpuSpec(1), 2);
  AddJob(c, "jy", y, GpuSpec(1), 2, 1, 0, 1);
  Decisions d = RunSession(c);
  EXPECT_EQ(d.binds.size(), 3u);
}

}  // namespace
}  // namespace gantry
