// ClusterState's part in defragmentation (the defragment action): which tasks may be
// moved, and the memory of its recent evictions that its budget is counted against.
#include <algorithm>

#include "model/cluster.h"
#include "model/limits.h"

namespace gantry {

void ClusterState::NoteDefragmentEviction(int64_t at) {
  defragment_evictions_.push_back(at);
  // The latest time noted, not `at`: a clock that stepped back forgets nothing early.
  int64_t latest = at;
  for (int64_t t : defragment_evictions_) latest = std::max(latest, t);
  while (!defragment_evictions_.empty() &&
         (defragment_evictions_.front() <= latest - kDefragmentBudgetWindowS ||
          static_cast<int64_t>(defragment_evictions_.size()) > kMaxDefragmentEvictionsPerHour)) {
    defragment_evictions_.pop_front();
  }
}

int64_t ClusterState::DefragmentEvictionsSince(int64_t since) const {
  return std::count_if(defragment_evictions_.begin(), defragment_evictions_.end(),
                       [&](int64_t t) { return t > since; });
}

}  // namespace gantry
