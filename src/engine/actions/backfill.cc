#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"

namespace gantry {
namespace {

class BackfillAction : public Action {
 public:
  std::string_view name() const override { return "backfill"; }

  void Execute(Session& session) override {
    auto jobs = JobsByQueue(session, [&](JobId j) {
      const JobWork& w = session.job(j);
      return w.inqueue && w.skipped_overused && !w.attempted;
    });
    std::vector<size_t> next(jobs.size(), 0);
    for (QueueId q = NextQueue(session, jobs, next); q != kNone; q = NextQueue(session, jobs, next)) {
      JobId job = jobs[q][next[q]++];
      std::string overused_reason = session.job(job).reason;
      if (AllocateJob(session, job) == 0 && session.job(job).reason.empty()) {
        session.mutable_job(job).reason = overused_reason;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewBackfillAction() { return std::make_unique<BackfillAction>(); }

}  // namespace gantry
