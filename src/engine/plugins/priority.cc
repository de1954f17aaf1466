#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

class PriorityPlugin : public SessionCopyable<PriorityPlugin>,
                       public JobOrder,
                       public TaskOrder,
                       public VictimFilter {
 public:
  std::string_view name() const override { return "priority"; }

  int CompareJobs(const Session& s, JobId a, JobId b) const override {
    return Higher(s.cluster().job(a).priority, s.cluster().job(b).priority);
  }

  int CompareTasks(const Session& s, TaskId a, TaskId b) const override {
    return Higher(s.cluster().spec_of(a).priority, s.cluster().spec_of(b).priority);
  }

  // Preemption evicts only jobs of lower priority than the preemptor's, never its own job.
  // Reclaim takes back what a queue is owed whatever the priorities: no opinion.
  bool Grants(EvictionCause cause) const override { return cause == EvictionCause::kPreempt; }

  void FilterVictims(const Session& s, EvictionCause cause, TaskId preemptor,
                     std::vector<TaskId>* victims) const override {
    if (cause != EvictionCause::kPreempt) return;
    const ClusterState& c = s.cluster();
    const JobId job = c.task(preemptor).job;
    const int32_t priority = c.job(job).priority;
    std::erase_if(*victims, [&](TaskId v) {
      const JobId victim_job = c.task(v).job;
      return victim_job == job || c.job(victim_job).priority >= priority;
    });
  }

 private:
  static int Higher(int32_t a, int32_t b) { return a == b ? 0 : (a > b ? -1 : 1); }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewPriorityPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new PriorityPlugin());
}

}  // namespace gantry
