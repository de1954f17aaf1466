// Making room on one node for one pending task by evicting running tasks, and pipelining
// the task onto it: the step PlaceJobEvicting (place_job_evicting.h) takes for each task
// that fits nowhere as things are. Two algorithms, one per kind of eviction:
//   MakeRoomByEvicting  preempt and reclaim: victims of lower priority or of other queues;
//   MakeRoomByMoving    defragment: movable tasks that will fit elsewhere at once.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/plugin.h"
#include "engine/session.h"

namespace gantry {

class Statement;

inline constexpr int64_t kNoEvictionLimit = INT64_MAX;

// What the defragment action keeps between its searches in one session; the caller clears
// it whenever a search commits (the answers are of the state before).
struct MoveCache {
  std::unordered_map<SpecId, bool> fits_now;  // per spec: a task of it fits somewhere now
};

// One search for room: the task, the statement the evictions go into, the nodes it may
// use (a topology domain's, in id order; null: every node) and how many tasks it may evict
// at most (kNoEvictionLimit: no limit).
struct RoomSearch {
  Session& session;
  Statement& statement;
  TaskId task;
  const std::vector<NodeId>* scope;
  int64_t budget;
};

// Preempt and reclaim: evicts the candidates (EvictionCandidates, victims.h) of one node,
// in victim order, a gang's whole unit at a time (EvictionUnit), until the task fits the
// node's future room: on the node that needs the fewest evicted, ties to the node of
// lower-priority victims, then the lower node id. Then pipelines the task there. True with
// the evicted tasks appended to *evicted; false with *why_not and the statement as it was.
bool MakeRoomByEvicting(const RoomSearch& search, EvictionCause cause, std::vector<TaskId>* evicted,
                        std::string* why_not);

// Defragment: the candidates are the movable tasks of other jobs of at most the task's
// job's priority. A node that could not hold the task even empty, or is cordoned, is not
// tried, nor one where moving every candidate would not make room; with `moves`, neither
// is a candidate whose spec fits nowhere now (asked once per spec and kept in `moves`).
// Per node, units go largest GPU share first, but a single unit that moves the least share
// and lets the task fit is taken instead when there is one; nodes tie on the GPU share
// moved, then the lower id. A node is taken only when the tasks it evicts, with the task
// pipelined there, would all fit elsewhere at once (MovedTasksFit, rolled back). Results
// as MakeRoomByEvicting's.
bool MakeRoomByMoving(const RoomSearch& search, MoveCache* moves, std::vector<TaskId>* evicted,
                      std::string* why_not);

}  // namespace gantry
