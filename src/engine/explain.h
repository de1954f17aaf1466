// Why a job stays pending, as facts a person can act on: the queue limit that holds it, how
// many nodes each predicate rejected, the closest nodes and what they lack, how many gang
// members the free room takes now, its reservation, and what it would take. Asked after
// Session::Run, for jobs left pending only: never on the placement path, and a session
// that is not asked pays nothing. Changes nothing: trial placements live in statements
// that are discarded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/decisions.h"
#include "engine/session.h"

namespace gantry {

// The queue limit (capability) that holds a job back: it needs `needs` of `resource` to
// start, and the queue's subtree holds `used` of its `limit`.
struct QueueLimitFact {
  QueueId queue = kNone;  // the job's queue or an ancestor of it
  ResourceId resource = 0;
  Milli used = 0;
  Milli limit = 0;
  Milli needs = 0;
};

// How many nodes one reason rejected, in kube-scheduler's words ("Insufficient cpu").
struct PredicateCount {
  std::string words;
  int64_t nodes = 0;
};

// A node that came close, and what it lacks: "2 GPUs free, needs 8", "cpu 2 short".
struct NodeShortfall {
  NodeId node = kNone;
  std::string lacks;
};

struct PendingExplanation {
  JobId job = kNone;
  std::optional<QueueLimitFact> queue_limit;  // set when a queue's capability holds it
  // For its first task that fits no node now (else its first unplaced task): the live
  // nodes, those it fits alone, and per reason how many rejected it (most first, then by
  // words; a node short of several resources counts once for each).
  int64_t nodes_looked_at = 0;
  int64_t nodes_fit = 0;
  std::vector<PredicateCount> predicates;
  // When it fits no node: nodes only short of free room (not too small when empty), a few,
  // closest first (fewest whole GPUs short, fewest resources short, least short), ties by id.
  std::vector<NodeShortfall> closest;
  // The gang: minMember, its tasks running now, and how many more of its pending tasks the
  // free room takes now, one after the other (in the best domain when its topology is
  // required), ignoring queue limits; counted up to what it still needs to start.
  int32_t min_member = 0;
  int32_t running = 0;
  int32_t still_needed = 0;  // minMember - running, or its pending tasks once the gang runs
  int32_t placeable_now = 0;
  std::vector<NodeId> reserved_nodes;  // held for it by the reserve action, ascending
  std::string would_take;              // "2 more nodes with 8 free GPUs in one leaf domain"
};

// How many closest nodes an explanation names.
inline constexpr size_t kClosestNodes = 3;

// Explains the first `max_jobs` pending jobs of `decisions`, in its order.
// REQUIRES: `decisions` is what session.Run() returned, and the session has not run again.
std::vector<PendingExplanation> ExplainPending(Session& session, const Decisions& decisions,
                                               size_t max_jobs);

}  // namespace gantry
