#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"
#include "engine/actions/place_job_evicting.h"

namespace gantry {
namespace {

class PreemptAction : public Action {
 public:
  std::string_view name() const override { return "preempt"; }

  // Queue by queue in id order: a preemption stays inside its queue, so queues take
  // nothing from each other here. Inside one, jobs in job order (priority first), each
  // one that is admitted and not yet pipelined (its gang minimum short).
  void Execute(Session& session) const override {
    auto jobs = JobsByQueue(session, [&](JobId j) {
      return session.job(j).inqueue && !session.job(j).unplaced.empty();
    });
    for (const std::vector<JobId>& queue_jobs : jobs) {
      for (JobId job : queue_jobs) {
        if (!session.JobPipelined(job)) PlaceJobEvicting(session, job, EvictionCause::kPreempt);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewPreemptAction() {
  return std::make_unique<PreemptAction>();
}

}  // namespace gantry
