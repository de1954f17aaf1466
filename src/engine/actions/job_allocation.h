// Placing one job: shared by allocate and backfill.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/session.h"

namespace gantry {

// How many of a job's tasks one AllocateJob tries.
enum class JobStep {
  kAll,      // every unplaced task (backfill)
  kOneTurn,  // up to its gang minimum, or one task when it has that already (allocate)
};

struct JobStepResult {
  int32_t placed = 0;  // tasks placed and committed
  bool more = false;   // it stopped at the step's end with tasks left that may still fit
};

// Tries to place the job's unplaced tasks in task order inside one Statement, stopping
// at the first task that cannot be placed (or at the end of the step). Commits when the
// job is ready (its gang minimum is met), else discards every placement. Records why
// tasks stay pending; `placed_before` (tasks placed by earlier steps this session) makes
// that reason count the job's tasks, not the step's.
JobStepResult AllocateJob(Session& session, JobId job, JobStep step = JobStep::kAll,
                          int32_t placed_before = 0);

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
