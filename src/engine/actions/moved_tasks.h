// The defragment action's checks on the tasks it moves (shared with make_room.cc, where
// its evictions are searched): the GPU share a task holds, cheap bounds on which nodes are
// worth a trial, and whether the tasks it would evict all fit elsewhere at once.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/session.h"

namespace gantry {

class Statement;

// The GPU share a running task holds, in milli-GPUs: its devices times its share of each.
Milli GpuShareHeld(const ClusterState& cluster, TaskId task);

// Orders running tasks for moving: the largest GPU share first (the fewest evictions free
// the most), ties in VictimGoesFirst order.
void SortForMoving(const ClusterState& cluster, std::vector<TaskId>* tasks);

// Cheap bounds before the defragment action's searches on a node (necessary, not
// sufficient, conditions):
// - whether a node could hold the task were it empty (schedulable, allocatable enough);
bool CouldHold(const Session& session, const TaskSpec& spec, NodeId node);
// - whether the task could fit the node's future room as it is now, by amounts and free
//   whole devices;
bool RoomMayFit(const Session& session, const TaskSpec& spec, NodeId node);
// - whether evicting every one of `on_node` (running tasks on the node) could make room for
//   it, by amounts and, for whole GPUs, by devices whose users would all be gone.
bool MayFitMovingAll(const Session& session, const TaskSpec& spec, NodeId node,
                     const std::vector<TaskId>& on_node);

// Whether the evicted tasks `moved` would all be placed at once elsewhere: each in turn,
// largest GPU share first, gets room free now where the placement search puts it, held in
// the statement (Statement::Hold) so that the next sees it taken. False with *why_not
// naming the first that finds none. The holds stay in the statement: the caller rolls
// them back, since the moved pods are placed again by a later session, not by this one.
// REQUIRES: every task of `moved` is evicted (releasing) in the session.
bool MovedTasksFit(Session& session, Statement& st, std::span<const TaskId> moved,
                   std::string* why_not);

}  // namespace gantry
