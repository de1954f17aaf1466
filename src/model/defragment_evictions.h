// When the defragment action's recent evictions were: the memory its budget
// (defragmentEvictionsPerHour, engine/actions/defragment.cc) is counted against. A budget
// spans sessions, so the memory is the cluster's: ClusterState owns one
// (ClusterState::defragment_evictions()) and whoever applies a session's decisions notes
// each defragment eviction in it. A class of its own because it is a bounded window of
// times that nothing else of the cluster reads or changes.
#pragma once

#include <cstdint>
#include <deque>

namespace gantry {

// The defragment action's budget counts its evictions over this many seconds.
inline constexpr int64_t kDefragmentBudgetWindowS = 3600;

class DefragmentEvictions {
 public:
  // Records an eviction at `at` (seconds on the sessions' clock, SessionOptions::now).
  // Bounded: times at or before kDefragmentBudgetWindowS before the latest are forgotten,
  // and at most kMaxDefragmentEvictionsPerHour (the largest budget) are kept.
  void Note(int64_t at);
  // How many of the recorded evictions were later than `since`.
  int64_t Since(int64_t since) const;

 private:
  std::deque<int64_t> times_;  // in the order noted
};

}  // namespace gantry
