// The workload profile a long-running scheduler keeps (issue 14): decayed counts of the
// task shapes that arrived, so that the fgd and gantry scorers pack against the workload
// that actually comes, as they do in the simulator (which knows its whole workload).
//
// Each arrival adds 1 to its shape's weight, at the arrival's time; weights halve every
// half-life. Times are the caller's seconds (the daemon: pods' creation timestamps, so that
// a restart that lists the same pods rebuilds the same profile) and may come out of order.
// At most `max_shapes` shapes are kept: a new shape when all slots are taken replaces the
// lightest, or is dropped when it is lighter still, so memory stays bounded whatever
// shapes clients send. Pure bookkeeping, no clock.
#pragma once

#include <cstdint>
#include <vector>

#include "model/cluster.h"

namespace gantry {

inline constexpr size_t kDefaultProfileShapes = 64;

class ArrivalProfile {
 public:
  // REQUIRES: half_life_s > 0, max_shapes > 0.
  ArrivalProfile(double half_life_s, size_t max_shapes);

  // One task of this shape arrived at `at` (seconds).
  void Observe(const TaskShape& shape, double at);
  // The profile at `now` (a time before the latest arrival counts as that time): counts
  // are weights in thousandths, rounded; shapes whose count rounds to 0 are left out.
  // Most frequent first, ties in the order the shapes were first kept.
  WorkloadProfile ProfileAt(double now) const;
  size_t shapes() const { return entries_.size(); }

 private:
  struct Entry {
    TaskShape shape;
    double weight = 0;  // at latest_
    uint64_t order = 0;
  };
  double half_life_s_;
  size_t max_shapes_;
  std::vector<Entry> entries_;
  double latest_ = 0;
  bool started_ = false;
  uint64_t next_order_ = 0;
};

}  // namespace gantry
