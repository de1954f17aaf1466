// Placing a job by evicting running tasks for it: the preempt, reclaim and defragment
// actions' search, job by job (each task's room: make_room.h).
#pragma once

#include <cstdint>

#include "engine/actions/make_room.h"
#include "engine/plugin.h"
#include "engine/session.h"

namespace gantry {

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
// For kDefragment (the defragment action) each task's room is made by moving
// (MakeRoomByMoving), and the job is taken only when all the tasks it evicts would fit
// elsewhere at once; at most `max_evictions` tasks are evicted in all.
// REQUIRES: the job is not pipelined yet (JobPipelined is false).
int32_t PlaceJobEvicting(Session& session, JobId job, EvictionCause cause,
                         int64_t max_evictions = kNoEvictionLimit, MoveCache* moves = nullptr);

}  // namespace gantry
