// Why pods wait, in a few kinds: the label of gantry_pending_pods_by_reason. The reasons
// themselves are free text (they name queues, nodes, counts), so a metric labelled with
// them would grow a series per message; a kind is one of a fixed set.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gantry {

enum class PendingKind : uint8_t {
  kQueueLimit,     // its queue's capability or deserved share (admission or allocation)
  kGangShort,      // fewer than minMember of its gang could be placed
  kNoFit,          // no node fits one of its tasks (resources, predicates)
  kTopology,       // its required topology domain has no room
  kGated,          // scheduling gates
  kVolume,         // its volumes keep it pending (claims unbound, binding failed)
  kInvalid,        // the pod, or what it refers to, cannot be read as written
  kGroupMissing,   // its PodGroup or Queue does not exist, or is invalid
  kBindBackoff,    // its last bind failed; placed again after a backoff
  kPreempting,     // placed onto room that evictions are freeing (pipelined)
  kNotConsidered,  // no cycle has looked at it yet, or no action placed it
  kOther,          // a reason none of the above describes
};

// "queue_limit", "gang_short", "no_fit", "topology", "gated", "volume", "invalid",
// "group_missing", "bind_backoff", "preempting", "not_considered", "other".
std::string_view PendingKindName(PendingKind kind);

// Every kind, in enum order (so that a gauge publishes each, at 0 when none waits).
const std::vector<PendingKind>& AllPendingKinds();

// The kind of a pending job's reason as the engine writes it (PendingJob::reason): the
// first thing that kept it pending, before any "; " notes that preempt or reserve add.
PendingKind ClassifyPendingReason(std::string_view reason);

}  // namespace gantry
