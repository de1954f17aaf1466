#include "engine/actions/job_allocation.h"

#include "engine/statement.h"

namespace gantry {

JobStepResult AllocateJob(Session& session, JobId job_id, JobStep step, int32_t placed_before) {
  const ClusterState& cluster = session.cluster();
  const Job& job = cluster.job(job_id);
  const JobWork& work = session.job(job_id);
  session.MarkAttempted(job_id);
  Statement statement = session.NewStatement();
  std::string why_not;
  TaskId failed_task = kNone;
  const bool ready_before = session.JobReady(job_id);
  bool step_ended = false;
  // Placing tasks does not change `unplaced` until the statement commits.
  for (TaskId task : work.unplaced) {
    if (step_ended) break;
    Placement placement;
    if (!session.FindPlacement(task, &placement, &why_not)) {
      failed_task = task;
      break;
    }
    // The queue is charged what the task takes on the chosen devices, which for a
    // GPU-memory request is known only now.
    const ResourceVector accounted = ClusterState::Accounted(
        cluster.spec_of(task), static_cast<int32_t>(placement.gpus.devices.size()),
        placement.gpus.milli_each);
    if (!session.QueueAllocatable(job.queue, accounted, &why_not)) {
      failed_task = task;
      break;
    }
    Status allocated = statement.Allocate(task, std::move(placement));
    if (!allocated.ok()) {  // the search found it room, so this is a bug: say so, place nothing
      why_not = "internal error: " + allocated.message();
      failed_task = task;
      break;
    }
    // One turn: the gang minimum in one go, then one task at a time, so that the job's
    // further tasks go back into the queue order like any other job's.
    step_ended = step == JobStep::kOneTurn && (ready_before || session.JobReady(job_id));
  }
  const int32_t placed = static_cast<int32_t>(statement.size());
  const int32_t unplaced_before = static_cast<int32_t>(work.unplaced.size());
  const int32_t ready = session.job(job_id).ready;
  // A job of one task is the pod itself: its reason is kube-scheduler's words alone, as
  // its PodScheduled condition says them. A task of a larger job is named.
  std::string task_reason = failed_task == kNone ? ""
                            : job.tasks.size() == 1
                                ? why_not
                                : "task " + cluster.task(failed_task).name + ": " + why_not;
  if (session.JobReady(job_id)) {
    statement.Commit();
    const int32_t total = placed_before + placed;
    if (failed_task != kNone) {
      session.SetJobReason(job_id, total > 0 ? "placed " + std::to_string(total) +
                                                   " task(s); the rest wait: " + task_reason
                                             : task_reason);
    } else {
      session.SetJobReason(job_id, "");
    }
    return {placed, failed_task == kNone && placed > 0 && placed < unplaced_before};
  }
  statement.Discard();
  if (job.min_member > 1) {
    int32_t short_by = job.min_member - ready;
    session.SetJobReason(job_id, "gang: " + std::to_string(ready) + " of minMember " +
                                     std::to_string(job.min_member) + " tasks could be placed (" +
                                     std::to_string(short_by) + " short), so none were; " +
                                     task_reason);
  } else {
    session.SetJobReason(job_id, task_reason);
  }
  return {};
}

QueueId NextQueue(const Session& session, const std::vector<std::vector<JobId>>& jobs,
                  const std::vector<size_t>& next) {
  QueueId best = kNone;
  for (QueueId q = 0; q < jobs.size(); ++q) {
    if (next[q] >= jobs[q].size()) continue;
    if (best == kNone || session.CompareQueues(q, best) < 0) best = q;
  }
  return best;
}

}  // namespace gantry
