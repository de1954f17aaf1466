// Node shape classes: nodes that no static predicate can tell apart share one, so that the
// engine's per-(spec, class) verdicts are computed per kind of node, not per node. Labels
// that no spec reads (a real node's unique hostname, its feature-discovery labels) split
// no class.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/plugins/plugins.h"
#include "engine/random.h"
#include "engine/session.h"
#include "model/cluster.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr Milli kGi = Milli{1024} * 1024 * 1024 * kMilliPerUnit;
constexpr const char* kHostname = "kubernetes.io/hostname";

// A node as kubelet and GPU feature discovery label it: its own hostname, and labels
// every node of its kind has.
Node LabelledNode(const std::string& name, int gpus = 8) {
  Node node;
  node.name = name;
  node.allocatable = {{kCpu, 64000}, {kMemory, 512 * kGi}, {kPods, 110 * kMilliPerUnit}};
  node.labels.Set(kHostname, name);
  node.labels.Set("kubernetes.io/arch", "amd64");
  node.labels.Set("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");
  node.labels.Set("nvidia.com/gfd.timestamp", std::to_string(name.size() * 7919));
  for (int g = 0; g < gpus; ++g) {
    GpuDevice device;
    device.model = GpuModels().Intern("H100");
    device.memory_mib = 81920;
    device.nvlink_domain = g / 4;
    node.gpus.push_back(device);
  }
  return node;
}

std::string HostName(int i) {
  return "node-" + std::to_string(i);
}

size_t ClassesInUse(const ClusterState& c) {
  std::set<uint32_t> classes;
  for (const Node& node : c.nodes()) {
    if (!node.name.empty()) classes.insert(node.shape_class);
  }
  return classes.size();
}

TaskSpec OneGpu() {
  TaskSpec spec;
  spec.role = "worker";
  spec.requests = {{kCpu, 1000}, {kPods, kMilliPerUnit}};
  spec.gpu.count = 1;
  return spec;
}

TaskSpec OnHost(const std::string& host) {
  TaskSpec spec = OneGpu();
  spec.node_selector.Set(kHostname, host);
  return spec;
}

TEST(NodeShapeClassTest, LabelsNoSpecReadsSplitNoClass) {
  ClusterState c;
  for (int i = 0; i < 1000; ++i) Must(c.AddNode(LabelledNode(HostName(i))));
  EXPECT_EQ(ClassesInUse(c), 1u);
  EXPECT_EQ(c.shape_classes().count(), 1u);
  // A spec that reads none of the nodes' labels changes nothing.
  TaskSpec zoned = OneGpu();
  zoned.node_selector.Set("topology.kubernetes.io/zone", "a");
  c.AddSpec(zoned);
  EXPECT_EQ(ClassesInUse(c), 1u);
}

// The node table a session copies (kept by stamp) holds each node's class as it is now.
void ExpectTableClassesCurrent(const ClusterState& c, NodeTableCache* cache) {
  const NodeTable& table = cache->Sync(c);
  ASSERT_EQ(table.nodes.size(), c.nodes().size());
  for (NodeId n = 0; n < c.nodes().size(); ++n)
    EXPECT_EQ(table.nodes[n].shape_class, c.node(n).shape_class) << c.node(n).name;
}

TEST(NodeShapeClassTest, ASpecThatReadsALabelSplitsTheClassesAndMovesTheStamps) {
  ClusterState c;
  for (int i = 0; i < 1000; ++i) Must(c.AddNode(LabelledNode(HostName(i))));
  c.AddSpec(OneGpu());
  NodeTableCache cache;
  ExpectTableClassesCurrent(c, &cache);
  std::vector<uint64_t> stamps;
  for (NodeId n = 0; n < c.nodes().size(); ++n) stamps.push_back(c.node_stamp(n));
  c.AddSpec(OnHost(HostName(537)));
  EXPECT_EQ(ClassesInUse(c), 1000u);
  EXPECT_EQ(c.shape_classes().count(), 1000u);  // the old class's slot went to the last node
  size_t moved = 0;
  for (NodeId n = 0; n < c.nodes().size(); ++n) moved += c.node_stamp(n) != stamps[n];
  EXPECT_GE(moved, 999u);  // every node whose class id changed
  ExpectTableClassesCurrent(c, &cache);
  // A second spec on the same key: nothing more to split, nothing moves.
  for (NodeId n = 0; n < c.nodes().size(); ++n) stamps[n] = c.node_stamp(n);
  c.AddSpec(OnHost(HostName(3)));
  for (NodeId n = 0; n < c.nodes().size(); ++n) EXPECT_EQ(c.node_stamp(n), stamps[n]) << n;
  // Nodes added later are classed by the labels specs read.
  Must(c.AddNode(LabelledNode("late")));
  EXPECT_EQ(ClassesInUse(c), 1001u);
  ExpectTableClassesCurrent(c, &cache);
}

TEST(NodeShapeClassTest, NodesWithoutTheNewlyReadLabelKeepTheirClassAndStamp) {
  ClusterState c;
  for (int i = 0; i < 10; ++i) {
    Node node = LabelledNode(HostName(i));
    if (i < 3) node.labels.Set("pool", i == 0 ? "train" : "infer");
    Must(c.AddNode(node));
  }
  const uint64_t stamp_of_unlabelled = c.node_stamp(5);
  TaskSpec spec = OneGpu();
  spec.affinity.terms = {{SelectorRequirement{"pool", SelectorRequirement::Op::kNotIn, {"x"}}}};
  c.AddSpec(spec);
  // train, infer (two nodes), and no pool label at all.
  EXPECT_EQ(ClassesInUse(c), 3u);
  EXPECT_EQ(c.node(1).shape_class, c.node(2).shape_class);
  EXPECT_NE(c.node(0).shape_class, c.node(1).shape_class);
  EXPECT_NE(c.node(0).shape_class, c.node(5).shape_class);
  EXPECT_EQ(c.node_stamp(5), stamp_of_unlabelled);
}

TEST(NodeShapeClassTest, ALabelANodeGainsLaterSplitsItsClassWhenFirstRead) {
  ClusterState c;
  for (int i = 0; i < 3; ++i) Must(c.AddNode(LabelledNode(HostName(i))));
  // Node 1 gains a label no other node has (an update), node 2 leaves and comes back
  // with another (a new node in the freed slot).
  Node gained = LabelledNode(HostName(1));
  gained.labels.Set("pool", "train");
  ASSERT_TRUE(c.UpdateNode(1, gained).ok());
  c.RemoveNode(2);
  Node back = LabelledNode(HostName(2));
  back.labels.Set("rack", "r1");
  ASSERT_EQ(Must(c.AddNode(back)), 2u);
  EXPECT_EQ(ClassesInUse(c), 1u);
  TaskSpec on_pool = OneGpu();
  on_pool.node_selector.Set("pool", "train");
  c.AddSpec(on_pool);
  EXPECT_EQ(ClassesInUse(c), 2u);
  EXPECT_NE(c.node(0).shape_class, c.node(1).shape_class);
  TaskSpec on_rack = OneGpu();
  on_rack.affinity.terms = {{SelectorRequirement{"rack", SelectorRequirement::Op::kExists, {}}}};
  c.AddSpec(on_rack);
  EXPECT_EQ(ClassesInUse(c), 3u);
  EXPECT_NE(c.node(0).shape_class, c.node(2).shape_class);
  // The label goes again: a later reader of it finds no node to split.
  ASSERT_TRUE(c.UpdateNode(1, LabelledNode(HostName(1))).ok());
  TaskSpec on_pool_infer = OneGpu();
  on_pool_infer.node_selector.Set("pool", "infer");
  c.AddSpec(on_pool_infer);
  EXPECT_EQ(c.node(0).shape_class, c.node(1).shape_class);
}

// One session on the cluster, through the node-table cache the simulator and the daemon
// keep from session to session; applies its binds.
Decisions ScheduleAndPlace(ClusterState* c, NodeTableCache* cache) {
  const Decisions d = RunSession(*c, SchedulerConfig::Default(), {}, cache);
  for (const BindDecision& b : d.binds) EXPECT_TRUE(c->Place(b.task, b.node, b.gpus).ok());
  return d;
}

TEST(NodeShapeClassTest, ASessionPlacesASelectedTaskOnlyOnItsNode) {
  ClusterState c;
  for (int i = 0; i < 1000; ++i) Must(c.AddNode(LabelledNode(HostName(i), 1)));
  Queue queue;
  queue.name = "default";
  const QueueId q = Must(c.AddQueue(queue));
  auto add_job = [&](const std::string& name, SpecId spec) {
    Job job;
    job.name = name;
    job.queue = q;
    job.creation = static_cast<int64_t>(c.jobs().size());
    const JobId id = Must(c.AddJob(job));
    return Must(c.AddTask(id, spec, name + "-0"));
  };
  NodeTableCache cache;
  // A first session sees one class: the table caches it.
  add_job("plain", c.AddSpec(OneGpu()));
  ASSERT_EQ(ScheduleAndPlace(&c, &cache).binds.size(), 1u);
  // Then tasks for two hosts arrive: each runs there and nowhere else, whichever node
  // the engine looks at first.
  const TaskId to_537 = add_job("to-537", c.AddSpec(OnHost(HostName(537))));
  const TaskId to_12 = add_job("to-12", c.AddSpec(OnHost(HostName(12))));
  const TaskId nowhere = add_job("nowhere", c.AddSpec(OnHost("no-such-node")));
  Decisions d = ScheduleAndPlace(&c, &cache);
  ASSERT_EQ(d.binds.size(), 2u);
  EXPECT_EQ(c.node(c.task(to_537).node).name, HostName(537));
  EXPECT_EQ(c.node(c.task(to_12).node).name, HostName(12));
  EXPECT_EQ(c.task(nowhere).state, TaskState::kPending);
  // The same host again, now full: it waits rather than going elsewhere.
  const TaskId again = add_job("again", c.task(to_537).spec);
  ASSERT_TRUE(ScheduleAndPlace(&c, &cache).binds.empty());
  EXPECT_EQ(c.task(again).state, TaskState::kPending);
}

// DaemonSet pods name their node in matchFields (metadata.name): while such a spec is
// read, the name is part of each node's class (labels alone would put them in one).
TEST(NodeShapeClassTest, MatchFieldsOnTheNodeNamePlaceOnThatNodeOnly) {
  ClusterState c;
  for (int i = 0; i < 300; ++i) Must(c.AddNode(LabelledNode(HostName(i), 1)));
  const QueueId q = AddQueue(c, "default");
  NodeTableCache cache;
  ASSERT_EQ(ClassesInUse(c), 1u);
  TaskSpec daemon = OneGpu();
  daemon.affinity.terms = {{SelectorRequirement{
      std::string(kNodeNameField), SelectorRequirement::Op::kIn, {HostName(217)}}}};
  const TaskId to_217 = c.job(AddJob(c, "ds-217", q, daemon, 1)).tasks[0];
  EXPECT_EQ(ClassesInUse(c), 300u);
  ASSERT_EQ(ScheduleAndPlace(&c, &cache).binds.size(), 1u);
  EXPECT_EQ(c.node(c.task(to_217).node).name, HostName(217));
  // Its node full, the next one waits rather than going elsewhere.
  const TaskId again = c.job(AddJob(c, "ds-217-again", q, daemon, 1)).tasks[0];
  EXPECT_TRUE(ScheduleAndPlace(&c, &cache).binds.empty());
  EXPECT_EQ(c.task(again).state, TaskState::kPending);
}

TEST(NodeShapeClassTest, ReplacedSpecsKeepNoLabelKeysAlive) {
  ClusterState c;
  for (int i = 0; i < 4; ++i) Must(c.AddNode(LabelledNode(HostName(i))));
  const SpecId slot = c.AddSpec(OneGpu());
  for (int i = 0; i < 1000; ++i) {
    TaskSpec spec = OneGpu();
    spec.node_selector.Set("key-" + std::to_string(i), "v");
    c.ReplaceSpec(slot, spec);
  }
  EXPECT_EQ(c.shape_classes().referenced_label_key_count(), 1u);
  c.ReplaceSpec(slot, OnHost(HostName(2)));
  EXPECT_EQ(c.shape_classes().referenced_label_key_count(), 1u);
  EXPECT_EQ(ClassesInUse(c), 4u);
  // No spec reads the hostname any more: the finer classes may stay, but no more than
  // there are nodes, and a new spec on the key is classed right.
  c.ReplaceSpec(slot, OneGpu());
  EXPECT_EQ(c.shape_classes().referenced_label_key_count(), 0u);
  EXPECT_LE(c.shape_classes().count(), 4u);
  ASSERT_TRUE(c.UpdateNode(1, LabelledNode(HostName(1))).ok());
  c.ReplaceSpec(slot, OnHost(HostName(1)));
  EXPECT_EQ(ClassesInUse(c), 4u);
}

}  // namespace
}  // namespace gantry
