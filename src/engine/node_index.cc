#include "engine/node_index.h"

#include <algorithm>
#include <cassert>

namespace gantry {

void NodeIndex::Build(const std::vector<int32_t>& whole_free, const std::vector<uint8_t>& partial,
                      const std::vector<int32_t>& gpu_count) {
  const size_t n = whole_free.size();
  int32_t max_whole = 0;
  for (size_t i = 0; i < n; ++i) max_whole = std::max(max_whole, gpu_count[i]);
  by_whole_free_.assign(static_cast<size_t>(max_whole) + 1, {});
  bucket_of_.assign(n, -1);
  pos_whole_.assign(n, kAbsent);
  pos_partial_.assign(n, kAbsent);
  partial_.clear();
  cpu_only_.clear();
  for (size_t i = 0; i < n; ++i) {
    auto node = static_cast<NodeId>(i);
    if (gpu_count[i] == kNotIndexed) continue;
    if (gpu_count[i] == 0) {
      cpu_only_.push_back(node);
      continue;
    }
    bucket_of_[i] = whole_free[i];
    Insert(&by_whole_free_[whole_free[i]], &pos_whole_, node);
    if (partial[i]) Insert(&partial_, &pos_partial_, node);
  }
}

void NodeIndex::Update(NodeId node, int32_t whole_free, bool partial) {
  assert(bucket_of_[node] >= 0);  // GPU nodes only
  if (bucket_of_[node] != whole_free) {
    Remove(&by_whole_free_[bucket_of_[node]], &pos_whole_, node);
    // Buckets go up to the largest device count, so every state has one.
    Insert(&by_whole_free_[whole_free], &pos_whole_, node);
    bucket_of_[node] = whole_free;
  }
  bool was_partial = pos_partial_[node] != kAbsent;
  if (partial && !was_partial) Insert(&partial_, &pos_partial_, node);
  if (!partial && was_partial) Remove(&partial_, &pos_partial_, node);
}

void NodeIndex::Remove(std::vector<NodeId>* list, std::vector<uint32_t>* pos, NodeId node) {
  uint32_t at = (*pos)[node];
  NodeId last = list->back();
  (*list)[at] = last;
  (*pos)[last] = at;
  list->pop_back();
  (*pos)[node] = kAbsent;
}

void NodeIndex::Insert(std::vector<NodeId>* list, std::vector<uint32_t>* pos, NodeId node) {
  (*pos)[node] = static_cast<uint32_t>(list->size());
  list->push_back(node);
}

}  // namespace gantry
