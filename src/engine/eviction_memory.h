// What the cluster remembers of an eviction a session decided, wherever it is carried out:
// the simulator unplaces the task at once, the daemon asks the API server (which may refuse).
// Both remember it through this one function, so that neither forgets a part of it.
#pragma once

#include <cstdint>

#include "engine/decisions.h"
#include "model/cluster.h"

namespace gantry {

// Remembers `eviction`, decided by a session at `now` (the session's clock): the victim's job
// never evicts its preemptor back (ClusterState::NoteEviction, the engine's memory against
// loops of evictions), and a defragment move counts against the defragment action's hourly
// budget (ClusterState::NoteDefragmentEviction). Called once per eviction sent, refused or
// not: a refusal is retried by a later session, and counts again then.
void RememberEviction(ClusterState& cluster, const EvictDecision& eviction, int64_t now);

}  // namespace gantry
