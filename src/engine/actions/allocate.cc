#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"

namespace gantry {
namespace {

class AllocateAction : public Action {
 public:
  std::string_view name() const override { return "allocate"; }

  // One turn at a time from the queue that goes next in the queue order, so that queues
  // interleave by share as they are given resources (as Volcano's allocate does). A turn
  // is a job's gang minimum, or one more task of a job that has it: an elastic job's
  // further tasks go back into the order, and cannot take the cluster in one go.
  void Execute(Session& session) const override {
    auto jobs = JobsByQueue(session, [&](JobId j) { return session.job(j).inqueue; });
    std::vector<size_t> next(jobs.size(), 0);
    std::vector<int32_t> placed(session.cluster().jobs().size(), 0);  // by job, this action
    for (QueueId q = NextQueue(session, jobs, next); q != kNone;
         q = NextQueue(session, jobs, next)) {
      if (session.QueueOverused(q, nullptr) && OthersWantTheirs(session, jobs, next, q)) {
        std::string reason;  // the words only for the jobs that wait
        session.QueueOverused(q, &reason);
        for (; next[q] < jobs[q].size(); ++next[q])
          session.MarkSkippedOverused(jobs[q][next[q]], reason);
        continue;
      }
      const JobId job = jobs[q][next[q]];
      const JobStepResult turn = AllocateJob(session, job, JobStep::kOneTurn, placed[job]);
      placed[job] += turn.placed;
      if (!turn.more) {
        ++next[q];
        continue;
      }
      // The job's place among the queue's other jobs after this turn (the job order may
      // weigh what it now holds).
      auto& order = jobs[q];
      for (size_t k = next[q]; k + 1 < order.size() && session.CompareJobs(order[k + 1], job) < 0;
           ++k) {
        std::swap(order[k], order[k + 1]);
      }
    }
  }

 private:
  // Whether a queue other than `q` still has jobs to place and is below its share: only
  // then does a queue that has its deserved share wait.
  static bool OthersWantTheirs(const Session& session, const std::vector<std::vector<JobId>>& jobs,
                               const std::vector<size_t>& next, QueueId q) {
    for (QueueId o = 0; o < jobs.size(); ++o) {
      if (o != q && next[o] < jobs[o].size() && !session.QueueOverused(o, nullptr)) return true;
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Action> NewAllocateAction() {
  return std::make_unique<AllocateAction>();
}

}  // namespace gantry
