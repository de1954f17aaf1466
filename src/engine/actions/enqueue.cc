#include <algorithm>

#include "engine/actions/actions.h"
#include "engine/session.h"

namespace gantry {
namespace {

class EnqueueAction : public Action {
 public:
  std::string_view name() const override { return "enqueue"; }
  bool admits_jobs() const override { return true; }

  void Execute(Session& session) const override {
    std::vector<JobId> waiting;
    for (JobId job : session.pending_jobs()) {
      if (!session.job(job).inqueue) waiting.push_back(job);
    }
    std::stable_sort(waiting.begin(), waiting.end(), [&](JobId a, JobId b) {
      QueueId qa = session.cluster().job(a).queue;
      QueueId qb = session.cluster().job(b).queue;
      if (qa != qb) return session.CompareQueues(qa, qb) < 0;
      return session.CompareJobs(a, b) < 0;
    });
    for (JobId job : waiting) {
      std::string reason;
      session.AdmitJob(job, &reason);  // notes the job inqueue, or why not
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewEnqueueAction() {
  return std::make_unique<EnqueueAction>();
}

}  // namespace gantry
