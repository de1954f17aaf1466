// Which running tasks may be evicted for a task, and in which order: shared by preempt,
// reclaim and defragment (make_room.h) and by reserve.
#pragma once

#include <vector>

#include "engine/plugin.h"
#include "engine/session.h"

namespace gantry {

// The order victims are taken in, a total order: lower job priority first, then lower
// task priority, then the younger job (later creation), then job name, then the task
// added last (higher id). True when `a` goes before `b`.
bool VictimGoesFirst(const ClusterState& cluster, TaskId a, TaskId b);

// Running tasks `preemptor` may evict for `cause`, in victim order: of lower-priority
// jobs in its own queue (preempt), of other queues' jobs (reclaim), or movable tasks of
// jobs of at most its priority (defragment), as the victim filters keep them. Never a task
// of a job that evicted the preemptor's, directly or through a chain (this session's
// evictions counted), nor of a job whose eviction memory is full.
std::vector<TaskId> EvictionCandidates(const Session& session, EvictionCause cause,
                                       TaskId preemptor);

// The tasks that go if `victim` goes: itself, or, when its job would fall below its
// minMember or is disrupted whole (Job::disrupt_whole), every running task of the job. Asked of the
// victim filters again in the state as it is now (earlier victims gone): all or none. Empty when
// they do not all go.
std::vector<TaskId> EvictionUnit(const Session& session, EvictionCause cause, TaskId preemptor,
                                 TaskId victim);

}  // namespace gantry
