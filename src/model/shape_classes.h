// The shape classes of a cluster's nodes: nodes that every class-cached predicate and score
// sees alike share a class, so that a verdict computed for one node is reused for the rest
// (docs/engine.md, "Node shape classes"). ClusterState owns one table and tells it of
// every node and spec that comes and goes. It is a table of its own because what puts a
// node in a class (ShapeOf) and which label keys count (those some spec reads) are one
// concern that no other part of the cluster shares; it is given the nodes it must class
// again, and says which it changed, so that it needs nothing else of the cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/labels.h"
#include "model/mig.h"
#include "model/node.h"
#include "model/resources.h"
#include "model/task_spec.h"

namespace gantry {

class ShapeClassTable {
 public:
  // The class of `node`, taking a reference on it; Release drops one, and a class without
  // nodes is forgotten (its id reused), so that node churn keeps no memory. A key that specs
  // stop reading may stay in the classes of nodes classed while it was read: finer than
  // needed, never wrong, and gone when they are classed again.
  uint32_t Acquire(const Node& node);
  void Release(uint32_t id);

  // Counts (sign +1) or uncounts (-1) a node slot's label keys, so that a key no node
  // carries (a pod can name any) costs no pass over the nodes.
  void CountNodeLabels(const Node& node, int sign);
  // Counts (sign +1) or uncounts (-1) the label keys a spec reads. A key read for the first
  // time classes again every node of `nodes` that carries it (their Node::shape_class),
  // one key at a time in LabelKeysOf's order. Returns the ids (indexes into `nodes`) of
  // those whose class changed, once per change, in the order changed: the caller moves
  // their stamps, so that a NodeTableCache picks the new class up.
  std::vector<NodeId> CountSpecLabelKeys(const TaskSpec& spec, int sign, std::span<Node> nodes);

  // Ids of classes are below this (some may be unused: freed classes are reused).
  size_t count() const { return keys_.size(); }
  // Node label keys some spec reads (through its node selector or affinity).
  size_t referenced_label_key_count() const { return label_key_refs_.size(); }

 private:
  // What puts a node in its shape class: every field of Node that a class-cached verdict
  // reads (the predicates' FilterStatic, and FilterByCapacity in the gantry scorer's rare
  // capabilities). Its labels only through specs' node selectors and affinities, so only
  // labels whose key some spec reads are in it: a real node's unique hostname and its
  // dozens of feature labels split no class until a spec names them. ShapeOf names every
  // field of Node and says why each one is in the key or not.
  struct NodeShape {
    ResourceVector allocatable;
    Labels labels;  // those whose key a spec read when the node was classed
    std::vector<Taint> taints;
    std::vector<GpuDevice> gpus;  // usage zeroed
    bool unschedulable = false;
    NodeMig mig;  // strategy, readiness and layout; holders cleared
    std::vector<std::string> declared_features;
    bool operator==(const NodeShape&) const = default;
  };
  struct NodeShapeHash {
    size_t operator()(const NodeShape& shape) const;
  };
  // The key of `node`'s class (what Acquire looks up).
  NodeShape ShapeOf(const Node& node) const;
  // Classes again every node of `nodes` with label `key`, appending those whose class
  // changed to `reclassed`.
  void ReclassNodesWithLabel(const std::string& key, std::span<Node> nodes,
                             std::vector<NodeId>* reclassed);

  std::unordered_map<NodeShape, uint32_t, NodeShapeHash> classes_;
  std::vector<NodeShape> keys_;                               // by id; empty when free
  std::vector<int64_t> refs_;                                 // nodes in each class
  std::vector<uint32_t> free_ids_;                            // classes without nodes
  std::unordered_map<std::string, int64_t> label_key_refs_;   // specs reading each key
  std::unordered_map<std::string, int64_t> node_label_keys_;  // node slots carrying each key
};

}  // namespace gantry
