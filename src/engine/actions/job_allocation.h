// Placing one job: shared by allocate and backfill.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/session.h"

namespace gantry {

// Tries to place the job's unplaced tasks in task order inside one Statement, stopping
// at the first task that cannot be placed. Commits when the job is ready (its gang
// minimum is met), else discards every placement. Records why tasks stay pending.
// Returns the number of tasks placed and committed.
int32_t AllocateJob(Session& session, JobId job);

// Jobs with pending tasks grouped by queue, each group in job order. Only jobs for
// which `wanted` is true.
template <typename Pred>
std::vector<std::vector<JobId>> JobsByQueue(const Session& session, Pred wanted);

// Picks the queue that goes next among those with jobs left (the session's queue order).
// Returns kNone when none has.
QueueId NextQueue(const Session& session, const std::vector<std::vector<JobId>>& jobs,
                  const std::vector<size_t>& next);

template <typename Pred>
std::vector<std::vector<JobId>> JobsByQueue(const Session& session, Pred wanted) {
  std::vector<std::vector<JobId>> by_queue(session.cluster().queues().size());
  for (JobId job : session.pending_jobs()) {
    if (wanted(job)) by_queue[session.cluster().job(job).queue].push_back(job);
  }
  for (auto& jobs : by_queue) {
    std::stable_sort(jobs.begin(), jobs.end(),
                     [&](JobId a, JobId b) { return session.CompareJobs(a, b) < 0; });
  }
  return by_queue;
}

}  // namespace gantry
