// PodDisruptionBudgets for the preempt and reclaim actions: a running task is a victim
// only while every budget that covers it still allows a disruption, counting the
// evictions this session has planned (the statement's, through OnStateChange) and the
// victims kept before it in the caller's list.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/quote.h"

namespace gantry {
namespace {

class DisruptionBudgetPlugin : public SessionCopyable<DisruptionBudgetPlugin>,
                               public VictimFilter,
                               public PlacementListener {
 public:
  std::string_view name() const override { return "disruptionbudget"; }

  void OnSessionOpen(Session& s) override {
    budgets_ = &s.cluster().disruption_budgets();
    evicted_.assign(budgets_->size(), 0);
    covering_.assign(s.cluster().specs().size(), std::nullopt);
    blocked_.clear();
  }
  bool ActiveInSession() const override { return budgets_ != nullptr && !budgets_->empty(); }
  bool ListensInSession() const override { return ActiveInSession(); }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId /*node*/,
                     const GpuChoice& /*gpus*/, int sign) override {
    if (change != StateChange::kEvict) return;
    for (int32_t b : Covering(s, task)) evicted_[b] += sign;
  }

  // It makes no cause safe by itself: it only takes victims away.
  void FilterVictims(const Session& s, EvictionCause /*cause*/, TaskId preemptor,
                     std::vector<TaskId>* victims) const override {
    std::map<int32_t, int32_t> kept;  // per budget, victims kept so far in this list
    const JobId preemptor_job = s.cluster().task(preemptor).job;
    std::erase_if(*victims, [&](TaskId v) {
      const std::vector<int32_t>& covering = Covering(s, v);
      for (int32_t b : covering) {
        const int64_t used = int64_t{evicted_[b]} + kept[b];
        if (used >= (*budgets_)[b].disruptions_allowed) {
          blocked_[preemptor_job].insert(b);
          return true;
        }
      }
      for (int32_t b : covering) ++kept[b];
      return false;
    });
  }

  // A job left pending after a budget refused it a victim says which budget.
  void OnSessionClose(const Session& /*s*/, Decisions* out) const override {
    if (blocked_.empty()) return;
    for (PendingJob& p : out->pending) {
      auto it = blocked_.find(p.job);
      if (it == blocked_.end()) continue;
      std::string names;
      for (int32_t b : it->second) {
        names += (names.empty() ? "" : ", ") + std::string("disruption budget ") +
                 QuoteForMessage((*budgets_)[b].name) + " (" +
                 std::to_string((*budgets_)[b].disruptions_allowed) + " allowed)";
      }
      p.reason += (p.reason.empty() ? "" : "; ") + std::string("victims kept by ") + names +
                  ": no more disruptions allowed";
    }
  }

 private:
  // The budgets that cover a task, by index, once per spec and session.
  const std::vector<int32_t>& Covering(const Session& s, TaskId task) const {
    const ClusterState& c = s.cluster();
    const SpecId spec = c.task(task).spec;
    if (spec >= covering_.size()) covering_.resize(spec + 1);
    std::optional<std::vector<int32_t>>& entry = covering_[spec];
    if (!entry.has_value()) {
      entry.emplace();
      for (size_t b = 0; b < budgets_->size(); ++b) {
        if ((*budgets_)[b].Covers(c.spec(spec))) entry->push_back(static_cast<int32_t>(b));
      }
    }
    return *entry;
  }

  const std::vector<DisruptionBudget>* budgets_ = nullptr;
  std::vector<int32_t> evicted_;  // per budget, evictions this session planned
  // Per session caches, filled by const calls (the session asks filters through const).
  mutable std::vector<std::optional<std::vector<int32_t>>> covering_;  // per spec id
  mutable std::map<JobId, std::set<int32_t>> blocked_;  // per preemptor job, budgets that refused
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewDisruptionBudgetPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new DisruptionBudgetPlugin());
}

}  // namespace gantry
