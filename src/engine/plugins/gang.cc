#include <algorithm>
#include <map>
#include <set>

#include "engine/group_readiness.h"
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
    bool a_ready = JobReady(s, a);
    bool b_ready = JobReady(s, b);
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
    if (!j.groups.empty() && !TreeCanBeReady(s.cluster(), j)) {
      *reason = "gang: even with every task placed, its groups would not meet their minimums";
      return false;
    }
    return true;
  }

  // A job with a group tree is ready when its root is, and no group is left part placed.
  PendingHold RefusalHold() const override { return PendingHold::kGang; }

  bool JobReady(const Session& s, JobId job) const override {
    const Job& j = s.cluster().job(job);
    return s.job(job).ready >= j.min_member &&
           (j.groups.empty() || GroupsReady(s, job, /*count_pipelined=*/false));
  }

  bool JobPipelined(const Session& s, JobId job) const override {
    const Job& j = s.cluster().job(job);
    return s.job(job).ready + s.job(job).pipelined_tasks >= j.min_member &&
           (j.groups.empty() || GroupsReady(s, job, /*count_pipelined=*/true));
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
    std::map<JobId, std::vector<TaskId>> of_trees;  // jobs with groups, their candidates
    for (TaskId v : *victims) {
      const JobId job = c.task(v).job;
      if (!c.job(job).groups.empty() && candidates[job] < s.ready_tasks(job)) {
        of_trees[job].push_back(v);
      }
    }
    std::set<TaskId> tree_victims;  // those of them that may go
    for (const auto& [job, tasks] : of_trees) {
      for (TaskId t : GroupsMayGive(s, job, tasks)) tree_victims.insert(t);
    }
    std::erase_if(*victims, [&](TaskId v) {
      const JobId job = c.task(v).job;
      if (of_trees.count(job)) return tree_victims.count(v) == 0;
      return spare[job]-- <= 0;
    });
  }

 private:
  // Whether the job's tree is ready with every one of its tasks placed.
  static bool TreeCanBeReady(const ClusterState& c, const Job& j) {
    std::vector<int32_t> counts(j.groups.size(), 0);
    for (TaskId t : j.tasks) {
      if (c.task(t).group >= 0) ++counts[static_cast<size_t>(c.task(t).group)];
    }
    return GroupTreeReady(j.groups, counts);
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewGangPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new GangPlugin());
}

}  // namespace gantry
