#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"
#include "engine/actions/place_job_evicting.h"

namespace gantry {

namespace {

class ReclaimAction : public Action {
 public:
  std::string_view name() const override { return "reclaim"; }

  // One job at a time from the queue that goes next (the queue order: furthest below its
  // share first), as allocate does. A queue that has its own deserved share reclaims
  // nothing (one whose parent has its share may still take from its siblings); the
  // proportion plugin's victim filter keeps every reclaim within both sides' shares.
  void Execute(Session& session) const override {
    auto jobs = JobsByQueue(session, [&](JobId j) {
      return session.job(j).inqueue && !session.job(j).unplaced.empty();
    });
    std::vector<size_t> next(jobs.size(), 0);
    for (QueueId q = NextQueue(session, jobs, next); q != kNone;
         q = NextQueue(session, jobs, next)) {
      std::string reason;
      if (session.QueueHoldsOwnShare(q, &reason)) {
        for (; next[q] < jobs[q].size(); ++next[q]) {
          const JobId job = jobs[q][next[q]];
          const std::string& before = session.job(job).reason;
          const std::string text = "reclaim: " + reason;
          session.SetJobReason(job, before.empty() ? text : before + "; " + text);
        }
        continue;
      }
      const JobId job = jobs[q][next[q]++];
      if (!session.JobPipelined(job)) PlaceJobEvicting(session, job, EvictionCause::kReclaim);
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewReclaimAction() {
  return std::make_unique<ReclaimAction>();
}

}  // namespace gantry
