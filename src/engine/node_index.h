// Nodes grouped by how many whole GPUs they have free, so that a session can visit the
// nodes a task most likely fits best first (the fullest that fit when packing, the
// emptiest when spreading) and stop early, instead of scoring every node for every task.
#pragma once

#include <cstdint>
#include <vector>

#include "model/cluster.h"

namespace gantry {

class NodeIndex {
 public:
  // A gpu_count that keeps a node out of the index (a removed node).
  static constexpr int32_t kNotIndexed = -1;

  // `whole_free[n]` free whole GPUs, `partial[n]` whether some device is partly used,
  // `gpu_count[n]` how many GPUs the node has (0: a CPU-only node; kNotIndexed: none of
  // the lists). Buckets go up to the largest gpu_count (at most kMaxGpusPerNode).
  void Build(const std::vector<int32_t>& whole_free, const std::vector<uint8_t>& partial,
             const std::vector<int32_t>& gpu_count);
  // Moves a GPU node to the buckets for its new state.
  void Update(NodeId node, int32_t whole_free, bool partial);

  int32_t max_whole() const { return static_cast<int32_t>(by_whole_free_.size()) - 1; }
  // GPU nodes with exactly `whole_free` free whole GPUs.
  const std::vector<NodeId>& with_whole_free(int32_t whole_free) const {
    return by_whole_free_[whole_free];
  }
  // GPU nodes with at least one partly used device.
  const std::vector<NodeId>& partial() const { return partial_; }
  const std::vector<NodeId>& cpu_only() const { return cpu_only_; }
  bool is_partial(NodeId node) const { return pos_partial_[node] != kAbsent; }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  static void Remove(std::vector<NodeId>* list, std::vector<uint32_t>* pos, NodeId node);
  static void Insert(std::vector<NodeId>* list, std::vector<uint32_t>* pos, NodeId node);

  std::vector<std::vector<NodeId>> by_whole_free_;
  std::vector<int32_t> bucket_of_;
  std::vector<uint32_t> pos_whole_;
  std::vector<NodeId> partial_;
  std::vector<uint32_t> pos_partial_;
  std::vector<NodeId> cpu_only_;
};

}  // namespace gantry
