// What the tasks on each node hold of something a node has one of (host ports, attached
// volumes, inline disks), as a per-session index for the plugins that keep such rules
// (nodeports, nodevolumelimits, predicates). Built on first need from the cluster's
// running tasks and the session's changes so far, and kept by the plugin's
// OnStateChange after that, each change undone exactly.
//
// Which tasks hold an item follows the three views of the working state: a releasing
// task holds it until it has ended (kube-scheduler counts a terminating pod's ports and
// volumes), a pipelined task holds it once the releasing ones have ended. Room free now
// is refused where either holds it; room being released only where a task that will
// still be there, or is pipelined there, does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/plugin.h"
#include "engine/session.h"

namespace gantry {

// `Items` is what a spec holds: a member of TaskSpec that is a vector of T; `Same` tells
// whether two items are one thing held.
template <typename T, std::vector<T> TaskSpec::*Items, typename Same = std::equal_to<T>>
class NodeHoldings {
 public:
  // One item held on a node, and by how many tasks in each view.
  struct Use {
    const T* item;       // in a spec of the session's cluster
    int32_t now = 0;     // tasks that hold it now: running (releasing too) or allocated
    int32_t future = 0;  // tasks that will hold it: running and not releasing, allocated or
                         // pipelined
    // Whether it is held in the view the session looks at.
    bool HeldIn(bool future_view) const { return future_view ? future > 0 : now > 0 || future > 0; }
  };

  bool built() const { return built_; }

  // What is held on `node`, building the index first if need be.
  const std::vector<Use>& On(const Session& s, NodeId node) const {
    Build(s);
    return uses_[node];
  }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node, int sign) {
    if (!built_) return;  // Build reads the working state as it is then
    const TaskSpec& spec = s.cluster().spec_of(task);
    if ((spec.*Items).empty()) return;
    switch (change) {
      case StateChange::kAllocate:
        Count(node, spec, sign, sign);
        break;
      case StateChange::kPipeline:
        Count(node, spec, 0, sign);
        break;
      case StateChange::kEvict:  // it holds its items until it has ended
        Count(node, spec, 0, -sign);
        break;
    }
  }

 private:
  void Count(NodeId node, const TaskSpec& spec, int32_t now, int32_t future) const {
    std::vector<Use>& uses = uses_[node];
    for (const T& item : spec.*Items) {
      auto it = std::find_if(uses.begin(), uses.end(),
                             [&](const Use& use) { return Same{}(*use.item, item); });
      if (it == uses.end()) it = uses.insert(uses.end(), Use{&item});
      it->now += now;
      it->future += future;
    }
  }

  void Build(const Session& s) const {
    if (built_) return;
    built_ = true;
    const ClusterState& c = s.cluster();
    uses_.assign(c.nodes().size(), {});
    for (NodeId node = 0; node < c.nodes().size(); ++node) {
      for (TaskId task : c.tasks_on(node)) {
        const TaskSpec& spec = c.spec_of(task);
        if ((spec.*Items).empty()) continue;
        const bool releasing = s.task_status(task) == TaskStatus::kReleasing;
        Count(node, spec, 1, releasing ? 0 : 1);
      }
    }
    // Tasks the session placed were pending when it opened.
    for (JobId job : s.pending_jobs()) {
      for (TaskId task : c.job(job).tasks) {
        const TaskSpec& spec = c.spec_of(task);
        if ((spec.*Items).empty()) continue;
        const TaskStatus status = s.task_status(task);
        if (status != TaskStatus::kAllocated && status != TaskStatus::kPipelined) continue;
        const bool allocated = status == TaskStatus::kAllocated;
        Count(s.state().placement_of(task).node, spec, allocated ? 1 : 0, 1);
      }
    }
  }

  // Built on first need; filters are const, as predicates are.
  mutable bool built_ = false;
  mutable std::vector<std::vector<Use>> uses_;  // per node
};

}  // namespace gantry
