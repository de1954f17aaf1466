// A stamp per node slot of a cluster that changes whenever the node does (added, a task
// placed or released, its description or class changed). Stamps come from a counter the
// cluster and its copies share, so equal stamps of one counter mean the same node state,
// even across copies of a ClusterState: a cache of per-node state refreshes only the nodes
// whose stamp moved (see engine/node_table.h). ClusterState owns one (node_stamp() and
// stamp_counter() forward to it) and moves a node's stamp with every change it makes to
// the node; a class of its own so that how stamps are given is said in one place.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/node.h"

namespace gantry {

class NodeStamps {
 public:
  uint64_t of(NodeId id) const { return stamps_[id]; }
  // Made with the cluster and shared by its copies (copies run side by side on threads,
  // hence atomic). A cache keyed by stamps keeps it, and starts over for a cluster whose
  // counter is another: stamps of two clusters built apart say nothing of each other.
  const std::shared_ptr<std::atomic<uint64_t>>& counter() const { return counter_; }

  // Gives a node a new stamp: its state changed.
  void Touch(NodeId id) { stamps_[id] = Next(); }
  // A new node slot (id: the number of slots so far), with a new stamp.
  void AddSlot() { stamps_.push_back(Next()); }

 private:
  // The next stamp of counter_: never 0, never given twice by it.
  uint64_t Next() { return counter_->fetch_add(1, std::memory_order_relaxed) + 1; }

  std::vector<uint64_t> stamps_;  // by node id
  std::shared_ptr<std::atomic<uint64_t>> counter_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace gantry
