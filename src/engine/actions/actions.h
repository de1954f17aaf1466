// Factories of the built-in actions; see registry.h for the table of names.
#pragma once

#include <memory>

#include "engine/action.h"

namespace gantry {

// Admits pending jobs (queue capability, gang minimum) so that allocate considers them.
std::unique_ptr<Action> NewEnqueueAction();
// Places admitted jobs queue by queue, fairest share first, each gang whole or not at all.
std::unique_ptr<Action> NewAllocateAction();
// Lets jobs that allocate passed over because their queue had its deserved share use the
// capacity still idle (borrowing), within their queue's capability.
std::unique_ptr<Action> NewBackfillAction();
// Inside each queue, places pending jobs (in job order) by evicting running tasks of jobs
// of lower priority, pipelined onto the room they release (see place_job_evicting.h).
std::unique_ptr<Action> NewPreemptAction();
// Queues below their deserved share (in queue order) take back from queues above theirs,
// whatever the priorities, never past either queue's deserved share.
std::unique_ptr<Action> NewReclaimAction();
// Holds the nodes a starving job needs (the head of its queue, waited starvationSeconds)
// so that no other job's tasks take them; off while starvationSeconds is 0.
std::unique_ptr<Action> NewReserveAction();
// A pending job that needs whole GPUs (or a whole topology domain) and does not fit,
// although the free room in total would hold it, gets a node (or domain) freed by moving
// movable tasks that fit elsewhere at once, within a budget of evictions per hour.
std::unique_ptr<Action> NewDefragmentAction();

}  // namespace gantry
