// Fair share with memory (issue 12): what each queue held lately, so that a team that used
// more yesterday waits a little today. Off unless a top-level queue sets a half-life
// (Queue::usage_half_life_s), which holds for its whole tree.
//
// The memory is an exponentially decayed average of the queue's allocation: with the
// allocation `a` held over the `dt` seconds since the last call, the usage `u` becomes
// a + (u - a) * 2^(-dt / half_life). A queue that holds `a` for long remembers `a`; one that
// stops halves its memory every half-life. It is in the units of Queue::allocated, so that
// the proportion plugin orders siblings by the mean of the two.
//
// The model reads no clock: the simulator and the daemon call Advance with their own time
// before each session.
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"

namespace gantry {

class UsageMemory {
 public:
  // Folds in what each queue of a tree with memory held since the last call (its
  // allocation as `cluster` holds it now, before this cycle's session), decays it to
  // `now` (seconds, any origin; a time before the last call counts as no time) and sets
  // each queue's usage in `cluster`. Queues in trees without memory get none.
  void Advance(ClusterState& cluster, double now);

 private:
  struct Remembered {
    std::string name;  // the queue the slot was kept for: a slot given to another is reset
    ResourceVector usage;
  };
  std::vector<Remembered> queues_;  // by queue id
  double last_ = 0;
  bool started_ = false;
};

// The half-life of the tree `queue` is in: its top-level queue's (0 when off, or when the
// parents loop).
int64_t TreeUsageHalfLife(const ClusterState& cluster, QueueId queue);

}  // namespace gantry
