// Placing a job by evicting running tasks for it: shared by preempt and reclaim.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/plugin.h"
#include "engine/session.h"

namespace gantry {

// The order victims are taken in, a total order: lower job priority first, then lower
// task priority, then the younger job (later creation), then job name, then the task
// added last (higher id). True when `a` goes before `b`.
bool VictimGoesFirst(const ClusterState& cluster, TaskId a, TaskId b);

// Places the job's unplaced tasks in task order inside one Statement until the job is
// pipelined (its gang minimum met, pipelined tasks counted): each on free room if any,
// else on room already being released, else on one node where evicting running tasks
// (those the victim filters let it evict for `cause`, in VictimGoesFirst order) makes
// room: the node that needs the fewest evicted, ties to the node of lower-priority victims,
// then the lower node id. The task is then pipelined onto that room. A victim whose gang
// would fall below its minMember takes the rest of its running gang with it, or is not
// taken. Commits when the job is pipelined; otherwise rolls everything back, so that
// nothing is evicted for a job that still would not fit. A job with a required topology
// (Job::topology) does all of this inside one domain of its level (the one its running
// tasks are in, if any): each is tried from a checkpoint and rolled back, and the one that
// needs the fewest evictions is done (ties: the first by name). A task whose
// preemptionPolicy is Never evicts nothing, nor does a job that has waited less than the
// configuration's preemption grace. Records why the job stays pending. Returns the tasks
// placed.
//
// For kDefragment (the defragment action) the candidates are the movable tasks
// (ClusterState::Movable) of other jobs of at most the job's priority; a node that could
// not hold the task even empty, or is cordoned, is not tried; per node, units go largest
// GPU share first, but a single unit that moves the least share and lets the task fit is
// taken instead when there is one; nodes tie on the GPU share moved, then the lower id. A
// node is taken only when the tasks it evicts, with the task pipelined there, would all
// fit elsewhere at once (MovedTasksFit, rolled back), and the job only when all the tasks
// it evicts would; at most `max_evictions` tasks are evicted in all. With `moves`, a
// candidate whose spec fits nowhere now (free room, any node: asked once per spec and
// kept in `moves`) is not moved, and not tried.
// REQUIRES: the job is not pipelined yet (JobPipelined is false).
inline constexpr int64_t kNoEvictionLimit = INT64_MAX;

// What the defragment action keeps between its searches in one session; the caller clears
// it whenever a search commits (the answers are of the state before).
struct MoveCache {
  std::unordered_map<SpecId, bool> fits_now;  // per spec: a task of it fits somewhere now
};

int32_t PlaceJobEvicting(Session& session, JobId job, EvictionCause cause,
                         int64_t max_evictions = kNoEvictionLimit, MoveCache* moves = nullptr);

}  // namespace gantry
