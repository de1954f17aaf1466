// PodDisruptionBudgets, as the engine sees them: how many more of the tasks a budget
// covers may be evicted. The preempt and reclaim actions honour them through the
// disruptionbudget plugin (engine/plugins/disruption_budget.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/pod_constraints.h"
#include "model/task_spec.h"

namespace gantry {

struct DisruptionBudget {
  std::string name;
  // The namespace of the tasks it covers; empty: every namespace (a scenario's budgets).
  std::string namespace_;
  // The tasks it covers, by their labels. Empty: every task (of its namespace), as
  // policy/v1 says; none: no task at all (a PDB whose selector is null).
  std::optional<LabelSelector> selector;
  // How many more of its tasks may go now (policy/v1 status.disruptionsAllowed): evictions
  // planned in a session count against it.
  int32_t disruptions_allowed = 0;
  bool operator==(const DisruptionBudget&) const = default;

  bool Covers(const TaskSpec& spec) const {
    if (!namespace_.empty() && spec.namespace_ != namespace_) return false;
    return Selects(selector, spec.labels);
  }
};

}  // namespace gantry
