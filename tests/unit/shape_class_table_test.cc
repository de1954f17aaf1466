// The shape class table alone (model/shape_classes.h), without a cluster: the caller holds
// the nodes, and the table classes them, counts the label keys specs read and says which
// nodes a newly read key classed again. shape_class_test.cc checks the classes a
// ClusterState gives its nodes; this checks the table's own contract.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/node.h"
#include "model/shape_classes.h"
#include "model/task_spec.h"

namespace gantry {
namespace {

Node Labelled(const std::string& name, const std::string& rack) {
  Node node;
  node.name = name;
  node.allocatable = {{kCpu, 8000}};
  node.labels.Set("kubernetes.io/hostname", name);
  if (!rack.empty()) node.labels.Set("rack", rack);
  return node;
}

TaskSpec Selecting(const std::string& key, const std::string& value) {
  TaskSpec spec;
  spec.requests = {{kCpu, 1000}};
  spec.node_selector.Set(key, value);
  return spec;
}

// Classes every node as ClusterState does when it adds one.
void AddAll(ShapeClassTable& table, std::vector<Node>& nodes) {
  for (Node& node : nodes) {
    node.shape_class = table.Acquire(node);
    table.CountNodeLabels(node, +1);
  }
}

TEST(ShapeClassTableTest, NodesAlikeShareAClassUntilASpecReadsWhatSetsThemApart) {
  ShapeClassTable table;
  std::vector<Node> nodes = {Labelled("a", "r1"), Labelled("b", "r1"), Labelled("c", "r2"),
                             Labelled("d", "")};
  AddAll(table, nodes);
  // Their hostnames and racks differ, but no spec reads either: one class.
  EXPECT_EQ(table.count(), 1u);
  for (const Node& node : nodes) EXPECT_EQ(node.shape_class, nodes[0].shape_class);

  // A spec reads "rack" for the first time: the nodes carrying it are classed again and
  // named, in node order; d has no rack and stays where it was.
  const std::vector<NodeId> moved = table.CountSpecLabelKeys(Selecting("rack", "r1"), +1, nodes);
  EXPECT_EQ(moved, (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(table.referenced_label_key_count(), 1u);
  EXPECT_EQ(nodes[0].shape_class, nodes[1].shape_class);  // both r1
  EXPECT_NE(nodes[0].shape_class, nodes[2].shape_class);  // r1 and r2
  EXPECT_NE(nodes[0].shape_class, nodes[3].shape_class);  // r1 and no rack
  EXPECT_NE(nodes[2].shape_class, nodes[3].shape_class);

  // A second spec on the same key classes nothing again; neither does a key no node carries.
  EXPECT_TRUE(table.CountSpecLabelKeys(Selecting("rack", "r2"), +1, nodes).empty());
  EXPECT_TRUE(table.CountSpecLabelKeys(Selecting("gpu-kind", "x"), +1, nodes).empty());
  EXPECT_EQ(table.referenced_label_key_count(), 2u);
  table.CountSpecLabelKeys(Selecting("gpu-kind", "x"), -1, nodes);
  EXPECT_EQ(table.referenced_label_key_count(), 1u);

  // Every node carries its hostname: read for the first time, it gives each node a class
  // of its own. A node is released before it is classed again, so the last one to leave a
  // class gets its id back: only a, which left b behind in theirs, changed class id.
  const std::vector<NodeId> split =
      table.CountSpecLabelKeys(Selecting("kubernetes.io/hostname", "a"), +1, nodes);
  EXPECT_EQ(split, (std::vector<NodeId>{0}));
  EXPECT_EQ(table.count(), 4u);
  EXPECT_NE(nodes[0].shape_class, nodes[1].shape_class);
}

TEST(ShapeClassTableTest, AClassWithoutNodesIsFreedAndItsIdReused) {
  ShapeClassTable table;
  std::vector<Node> nodes = {Labelled("a", "r1"), Labelled("b", "r2")};
  table.CountSpecLabelKeys(Selecting("rack", "r1"), +1, nodes);  // no node yet: no pass
  AddAll(table, nodes);
  ASSERT_NE(nodes[0].shape_class, nodes[1].shape_class);
  EXPECT_EQ(table.count(), 2u);

  // The only node of r1's class leaves: its id is free, and the next new shape takes it
  // instead of growing the table.
  const uint32_t freed = nodes[0].shape_class;
  table.Release(freed);
  const uint32_t taken = table.Acquire(Labelled("c", "r3"));
  EXPECT_EQ(taken, freed);
  EXPECT_EQ(table.count(), 2u);

  // A class with nodes left is kept: b's twin joins b's class, and b leaving keeps it.
  const uint32_t twin = table.Acquire(Labelled("e", "r2"));
  EXPECT_EQ(twin, nodes[1].shape_class);
  table.Release(nodes[1].shape_class);
  EXPECT_EQ(table.Acquire(Labelled("f", "r4")), 2u);  // a new id: none is free
  EXPECT_EQ(table.count(), 3u);
}

}  // namespace
}  // namespace gantry
