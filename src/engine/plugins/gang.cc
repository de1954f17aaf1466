#include <algorithm>
#include <map>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

class GangPlugin : public SessionCopyable<GangPlugin>,
                   public JobOrder,
                   public JobAdmission,
                   public JobReadiness,
                   public VictimFilter {
 public:
  std::string_view name() const override { return "gang"; }

  // Jobs below their minimum go before jobs that already have it.
  int CompareJobs(const Session& s, JobId a, JobId b) const override {
    bool a_ready = s.job(a).ready >= s.cluster().job(a).min_member;
    bool b_ready = s.job(b).ready >= s.cluster().job(b).min_member;
    if (a_ready == b_ready) return 0;
    return a_ready ? 1 : -1;
  }

  bool Admit(Session& s, JobId job, std::string* reason) override {
    const Job& j = s.cluster().job(job);
    auto tasks = static_cast<int32_t>(j.tasks.size());
    if (tasks < j.min_member) {
      *reason = "gang: the job has " + std::to_string(tasks) + " task(s) but minMember is " +
                std::to_string(j.min_member);
      return false;
    }
    return true;
  }

  bool JobReady(const Session& s, JobId job) const override {
    return s.job(job).ready >= s.cluster().job(job).min_member;
  }

  bool JobPipelined(const Session& s, JobId job) const override {
    return s.job(job).ready + s.job(job).pipelined_tasks >= s.cluster().job(job).min_member;
  }

  // No gang is left half running: a job gives up tasks only down to its minMember, unless
  // every one of its ready tasks is a candidate, and then the whole gang goes.
  void FilterVictims(const Session& s, EvictionCause /*cause*/, TaskId /*preemptor*/,
                     std::vector<TaskId>* victims) const override {
    const ClusterState& c = s.cluster();
    std::map<JobId, int32_t> candidates;  // per job, its candidates
    for (TaskId v : *victims) candidates[c.task(v).job]++;
    std::map<JobId, int32_t> spare;  // per job, how many of its candidates may go
    for (const auto& [job, count] : candidates) {
      const int32_t ready = s.ready_tasks(job);  // a victim's job: maybe untouched
      spare[job] = count >= ready ? count : std::max(0, ready - c.job(job).min_member);
    }
    std::erase_if(*victims, [&](TaskId v) { return spare[c.task(v).job]-- <= 0; });
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewGangPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new GangPlugin());
}

}  // namespace gantry
