// Deserved shares over the queue tree (the proportion plugin's arithmetic, kept apart so
// that it can be tested on its own).
//
// Top-down: the cluster's capacity is divided among the top-level queues, then each
// queue's deserved amount among its children, the same way at every level and for every
// resource separately. Each member first gets its guarantee (or its explicit deserved
// amount, where it names one), up to what it wants; the rest is water-filled by weight
// among the members that want more: each round hands every such member its weight's
// portion of what is left, never above what it wants, and what one does not take goes
// round again to the others. What a queue wants is its demand (a leaf's requests, an
// inner queue's children's wants added up) capped by its capability. Integer milli-units
// throughout: the remainder that weights cannot split is handed out one milli-unit at a
// time in id order, so the result is exact and deterministic.
#pragma once

#include <vector>

#include "model/cluster.h"
#include "model/queue_tree.h"
#include "model/resources.h"

namespace gantry {

// `requests`: by queue, what its jobs ask for (allocated and pending); inner queues' own
// entries are ignored (their jobs wait). Queues out of the tree deserve nothing.
std::vector<ResourceVector> DeservedShares(const std::vector<Queue>& queues, const QueueTree& tree,
                                           const std::vector<ResourceVector>& requests,
                                           const ResourceVector& capacity);

}  // namespace gantry
