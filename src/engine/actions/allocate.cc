#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"

namespace gantry {
namespace {

class AllocateAction : public Action {
 public:
  std::string_view name() const override { return "allocate"; }

  // One job at a time from the queue that is furthest below its share, so that queues
  // interleave by share as they are given resources (as Volcano's allocate does).
  void Execute(Session& session) const override {
    auto jobs = JobsByQueue(session, [&](JobId j) { return session.job(j).inqueue; });
    std::vector<size_t> next(jobs.size(), 0);
    for (QueueId q = NextQueue(session, jobs, next); q != kNone;
         q = NextQueue(session, jobs, next)) {
      std::string reason;
      if (session.QueueOverused(q, &reason)) {
        for (; next[q] < jobs[q].size(); ++next[q])
          session.MarkSkippedOverused(jobs[q][next[q]], reason);
        continue;
      }
      AllocateJob(session, jobs[q][next[q]++]);
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewAllocateAction() {
  return std::make_unique<AllocateAction>();
}

}  // namespace gantry
