#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"

namespace gantry {
namespace {

class BackfillAction : public Action {
 public:
  std::string_view name() const override { return "backfill"; }

  void Execute(Session& session) const override {
    auto jobs = JobsByQueue(session, [&](JobId j) {
      const JobWork& w = session.job(j);
      return w.inqueue && w.skipped_overused && !w.attempted;
    });
    std::vector<size_t> next(jobs.size(), 0);
    for (QueueId q = NextQueue(session, jobs, next); q != kNone;
         q = NextQueue(session, jobs, next)) {
      // A job that still finds no room says why (it replaces "has its deserved share").
      AllocateJob(session, jobs[q][next[q]++]);
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewBackfillAction() {
  return std::make_unique<BackfillAction>();
}

}  // namespace gantry
