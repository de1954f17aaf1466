// Fairness measures of a replay: Jain's index over queues, and the check that evictions
// never loop (issue 12: no job is evicted for a job it had itself evicted, directly or
// through a chain).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gantry {

// Jain's fairness index of `x`: (sum x)^2 / (n * sum x^2), in [1/n, 1]; 1 when every value
// is equal, 1/n when one value holds everything. The replay takes x per queue as its share
// over its deserved share (see ReplayRow::jain). 1 for an empty or all-zero `x` (nothing to
// be unfair about). REQUIRES: every value >= 0.
double JainIndex(std::span<const double> x);

// The eviction graph of a run: an edge preemptor -> victim per eviction (jobs by index).
// An eviction closes a loop when its victim already reaches its preemptor through earlier
// edges: the victim (or a job it evicted, or one that job evicted, ...) had evicted the
// preemptor. Equivalently, the edge closes a cycle; each cycle is counted once, by the edge
// that closes it. Memory: one entry per distinct (preemptor, victim) pair.
class EvictionLoopDetector {
 public:
  // Records the eviction of `victim` for `preemptor`; true when it closes a loop.
  // A repeated pair is not a new edge (the same loop is not counted twice).
  bool Add(int64_t preemptor, int64_t victim);
  int64_t loops() const { return loops_; }
  int64_t edges() const { return edges_; }

 private:
  bool Reaches(int64_t from, int64_t to);
  void Grow(int64_t job);

  std::vector<std::vector<int64_t>> out_;  // victims per preemptor, distinct
  std::vector<uint64_t> seen_;             // per job: the search that visited it last
  uint64_t search_ = 0;
  int64_t loops_ = 0;
  int64_t edges_ = 0;
};

}  // namespace gantry
