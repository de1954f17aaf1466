// The memory of the defragment action's recent evictions (model/defragment_evictions.h).
#include "model/defragment_evictions.h"

#include <algorithm>

#include "model/limits.h"

namespace gantry {

void DefragmentEvictions::Note(int64_t at) {
  times_.push_back(at);
  // The latest time noted, not `at`: a clock that stepped back forgets nothing early.
  int64_t latest = at;
  for (int64_t t : times_) latest = std::max(latest, t);
  while (!times_.empty() &&
         (times_.front() <= latest - kDefragmentBudgetWindowS ||
          static_cast<int64_t>(times_.size()) > kMaxDefragmentEvictionsPerHour)) {
    times_.pop_front();
  }
}

int64_t DefragmentEvictions::Since(int64_t since) const {
  return std::count_if(times_.begin(), times_.end(), [&](int64_t t) { return t > since; });
}

}  // namespace gantry
