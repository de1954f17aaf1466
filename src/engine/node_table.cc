#include "engine/node_table.h"

#include <algorithm>

namespace gantry {
namespace {

// The largest resource id a node names (allocatable or used).
ResourceId MaxResourceOf(const Node& node) {
  ResourceId max_id = 0;
  for (const auto& e : node.allocatable.entries()) max_id = std::max(max_id, e.id);
  for (const auto& e : node.device_capacity.entries()) max_id = std::max(max_id, e.id);
  for (const auto& e : node.used.entries()) max_id = std::max(max_id, e.id);
  return max_id;
}

// Writes node `id`'s row, devices and counts. Its gpu_begin must be set already.
void FillNode(const Node& node, NodeId id, NodeTable* t) {
  NodeWork& w = t->nodes[id];
  const int32_t begin = w.gpu_begin;
  w = NodeWork{};
  w.gpu_begin = begin;
  const size_t begin_row = static_cast<size_t>(id) * t->resource_count;
  Milli* row = t->free.data() + begin_row;
  Milli* allocatable = t->allocatable->data() + begin_row;
  std::fill(row, row + t->resource_count, 0);
  std::fill(allocatable, allocatable + t->resource_count, 0);
  for (const auto& e : node.allocatable.entries()) {
    row[e.id] += e.amount;
    allocatable[e.id] += e.amount;
  }
  // What its DRA devices count as: the tasks that use them have it in `used`
  // (ClusterState::Accounted), so the row stays what is free of the node's whole.
  for (const auto& e : node.device_capacity.entries()) {
    row[e.id] += e.amount;
    allocatable[e.id] += e.amount;
  }
  for (const auto& e : node.used.entries()) row[e.id] -= e.amount;
  w.shape_class = node.shape_class;
  w.removed = node.removed;
  w.max_pods = node.allocatable.Get(kPods);
  w.gpu_count = static_cast<int32_t>(node.gpus.size());
  w.one_nvlink_domain = std::all_of(node.gpus.begin(), node.gpus.end(), [&](const GpuDevice& g) {
    return g.nvlink_domain == node.gpus.front().nvlink_domain;
  });
  auto slot = static_cast<size_t>(begin);
  for (const GpuDevice& g : node.gpus) {
    t->gpu_free_milli[slot] = g.free_milli();
    t->gpu_free_memory[slot] = g.memory_mib - g.used_memory_mib;
    ++slot;
    w.gpu_used += g.used_milli;
    w.max_free_milli = std::max(w.max_free_milli, g.free_milli());
    if (g.used_milli == 0) {
      w.whole_free++;
    } else if (g.used_milli < kGpuMilliWhole) {
      w.partial_count++;
    }
  }
  w.tasks = node.task_count;
}

}  // namespace

NodeTable BuildNodeTable(const ClusterState& c) {
  const size_t n = c.nodes().size();
  // Columns for what nodes have (a task asking for a resource no node has fits nowhere:
  // a missing column reads as zero free), and kPods at least, so that the columns a
  // session reads by name always exist.
  ResourceId max_id = kPods;
  size_t devices = 0;
  for (const Node& node : c.nodes()) {
    max_id = std::max(max_id, MaxResourceOf(node));
    devices += node.gpus.size();
  }
  NodeTable t;
  t.resource_count = max_id + 1;
  t.free.assign(n * t.resource_count, 0);
  t.allocatable = std::make_shared<std::vector<Milli>>(n * t.resource_count, 0);
  t.nodes.assign(n, NodeWork{});
  t.gpu_free_milli.resize(devices);
  t.gpu_free_memory.resize(devices);
  size_t slot = 0;
  for (NodeId i = 0; i < n; ++i) {
    t.nodes[i].gpu_begin = static_cast<int32_t>(slot);
    FillNode(c.nodes()[i], i, &t);
    slot += c.nodes()[i].gpus.size();
  }
  return t;
}

const NodeTable& NodeTableCache::Sync(const ClusterState& c) {
  const size_t n = c.nodes().size();
  bool rebuild = stamps_.size() != n || counter_ != c.stamp_counter();
  std::vector<NodeId> changed;
  for (NodeId i = 0; i < n && !rebuild; ++i) {
    if (stamps_[i] == c.node_stamp(i)) continue;
    const Node& node = c.node(i);
    rebuild = static_cast<int32_t>(node.gpus.size()) != table_.nodes[i].gpu_count ||
              MaxResourceOf(node) >= table_.resource_count;
    changed.push_back(i);
  }
  if (rebuild) {
    table_ = BuildNodeTable(c);
    counter_ = c.stamp_counter();
    stamps_.resize(n);
    for (NodeId i = 0; i < n; ++i) stamps_[i] = c.node_stamp(i);
  } else {
    // A session may still hold the amounts: change a copy.
    if (!changed.empty() && table_.allocatable.use_count() > 1) {
      table_.allocatable = std::make_shared<std::vector<Milli>>(*table_.allocatable);
    }
    for (NodeId i : changed) {
      FillNode(c.node(i), i, &table_);
      stamps_[i] = c.node_stamp(i);
    }
  }
  return table_;
}

}  // namespace gantry
