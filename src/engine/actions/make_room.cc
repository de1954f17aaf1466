#include "engine/actions/make_room.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>

#include "engine/actions/moved_tasks.h"
#include "engine/actions/victims.h"
#include "engine/statement.h"

namespace gantry {
namespace {

struct NodeTrial {
  NodeId node = kNone;
  std::vector<TaskId> evicted;
  int32_t top_priority = std::numeric_limits<int32_t>::min();  // of the evicted jobs
  Milli moved_share = 0;  // the GPU share the evicted tasks held (defragment)
  Placement placement;
  std::string queue_refused;  // the task fit, but its queue would not take it: why
};

// The task fits the trial's node, found in *placement, and its queue may take it there.
bool FitsAndQueueTakes(Session& s, TaskId task, const SearchScope& scope, Placement* placement) {
  std::string why_not;
  return s.FindPlacement(task, scope, placement, &why_not) &&
         s.QueueTakes(task, *placement, &why_not);
}

// kube-scheduler's reprieve (SelectVictimsOnNode): of the units evicted before the one
// that made room, the most important first, each is given back where the task still fits
// without it, so that no victim goes whom the others' leaving makes unnecessary (a
// half-GPU task is not evicted beside the one-GPU task whose GPU alone is enough). A unit
// whose job has another unit among them is kept: the later unit was chosen with it gone
// (a gang that goes whole). Leaves the statement with the evictions kept, from `start`,
// and the trial filled for them; false where the task no longer fits (it should).
bool Reprieve(Session& s, Statement& st, EvictionCause cause, TaskId task, size_t start,
              const std::vector<std::vector<TaskId>>& units, const std::string& reason,
              const SearchScope& scope, NodeTrial* trial) {
  const ClusterState& c = s.cluster();
  std::vector<bool> kept(units.size(), true);
  auto evict_kept = [&] {
    st.Rollback(start);
    for (size_t u = 0; u < units.size(); ++u) {
      if (!kept[u]) continue;
      for (TaskId t : units[u]) {
        if (!st.Evict(t, reason, c.task(task).job, cause).ok()) return false;
      }
    }
    return true;
  };
  auto job_of = [&](size_t u) { return c.task(units[u].front()).job; };
  for (size_t i = units.size() - 1; i-- > 0;) {
    bool shares_job = false;
    for (size_t u = 0; u < units.size(); ++u) shares_job |= u != i && job_of(u) == job_of(i);
    if (shares_job) continue;
    kept[i] = false;
    Placement placement;
    if (!evict_kept() || !FitsAndQueueTakes(s, task, scope, &placement)) kept[i] = true;
  }
  if (!evict_kept()) return false;
  trial->evicted.clear();
  trial->top_priority = std::numeric_limits<int32_t>::min();
  for (size_t u = 0; u < units.size(); ++u) {
    if (!kept[u]) continue;
    for (TaskId t : units[u]) {
      trial->evicted.push_back(t);
      trial->top_priority = std::max(trial->top_priority, c.job(c.task(t).job).priority);
    }
  }
  return FitsAndQueueTakes(s, task, scope, &trial->placement);
}

// Evicts the node's victims in order until `task` fits the node's future room and its
// queue may take it there, then reprieves those the others make unnecessary: true with the
// trial filled, the evictions left in the statement (the caller rolls them back). Where the
// task fits but its queue is at its capability, preemption goes on to the candidates on
// other nodes (`all`, in victim order: of its own queue), so that a larger task of the
// queue may go instead of giving up, as Volcano's preempt does. Gives up once more than
// `limit` tasks would go.
bool EvictOnNode(Session& s, Statement& st, EvictionCause cause, TaskId task,
                 const std::vector<TaskId>& on_node, const std::vector<TaskId>& all, size_t limit,
                 const std::string& reason, NodeTrial* trial) {
  const ClusterState& c = s.cluster();
  const std::vector<NodeId> nodes = {trial->node};
  const SearchScope scope{&nodes, /*future=*/true};
  const size_t start = st.Checkpoint();
  std::vector<std::vector<TaskId>> units;
  bool fits = false;
  // Evicts the victim's unit; false when it may not go or the limit would be passed.
  auto evict = [&](TaskId victim) {
    if (s.task_status(victim) != TaskStatus::kRunning) return true;  // gone with its gang
    std::vector<TaskId> unit = EvictionUnit(s, cause, task, victim);
    if (unit.empty()) return true;
    if (trial->evicted.size() + unit.size() > limit) return false;
    for (TaskId t : unit) {
      if (!st.Evict(t, reason, c.task(task).job, cause).ok()) return false;
      trial->evicted.push_back(t);
      trial->top_priority = std::max(trial->top_priority, c.job(c.task(t).job).priority);
    }
    units.push_back(std::move(unit));
    return true;
  };
  auto done = [&] {
    return units.size() < 2 || Reprieve(s, st, cause, task, start, units, reason, scope, trial);
  };
  for (TaskId victim : on_node) {
    const size_t before = units.size();
    if (!evict(victim)) return false;
    std::string why_not;
    if (units.size() == before || !s.FindPlacement(task, scope, &trial->placement, &why_not)) {
      continue;
    }
    if (s.QueueTakes(task, trial->placement, &trial->queue_refused)) return done();
    fits = true;
    break;
  }
  if (!fits || cause != EvictionCause::kPreempt) return false;
  for (TaskId victim : all) {
    if (c.task(victim).node == trial->node) continue;  // tried above
    const size_t before = units.size();
    if (!evict(victim)) return false;
    if (units.size() == before) continue;
    if (FitsAndQueueTakes(s, task, scope, &trial->placement)) return done();
  }
  return false;
}

// Defragment's EvictOnNode: units go largest GPU share first (`on_node` in SortForMoving
// order), but before each, the single unit that moves the least share and lets the task
// fit is looked for, and taken instead when there is one, so that no larger victim than
// needed goes last. Gives up once more than `limit` tasks would go.
bool MoveOnNode(Session& s, Statement& st, TaskId task, const std::vector<TaskId>& on_node,
                size_t limit, const std::string& reason, NodeTrial* trial) {
  const ClusterState& c = s.cluster();
  const EvictionCause cause = EvictionCause::kDefragment;
  const std::vector<NodeId> nodes = {trial->node};
  const SearchScope scope{&nodes, /*future=*/true};
  std::vector<TaskId> smallest_first = on_node;
  std::stable_sort(smallest_first.begin(), smallest_first.end(),
                   [&](TaskId a, TaskId b) { return GpuShareHeld(c, a) < GpuShareHeld(c, b); });
  auto evict = [&](const std::vector<TaskId>& unit) {
    for (TaskId t : unit) {
      if (!st.Evict(t, reason, c.task(task).job, cause).ok()) return false;
      trial->evicted.push_back(t);
      trial->moved_share += GpuShareHeld(c, t);
    }
    return true;
  };
  while (true) {
    for (TaskId victim : smallest_first) {
      if (s.task_status(victim) != TaskStatus::kRunning) continue;
      const std::vector<TaskId> unit = EvictionUnit(s, cause, task, victim);
      if (unit.empty() || trial->evicted.size() + unit.size() > limit) continue;
      const size_t checkpoint = st.Checkpoint();
      const size_t evicted = trial->evicted.size();
      const Milli share = trial->moved_share;
      std::string why_not;
      if (evict(unit) && RoomMayFit(s, c.spec_of(task), trial->node) &&
          s.FindPlacement(task, scope, &trial->placement, &why_not)) {
        return true;
      }
      st.Rollback(checkpoint);
      trial->evicted.resize(evicted);
      trial->moved_share = share;
    }
    // No one unit completes it: the largest goes, and the search goes on.
    bool took = false;
    for (TaskId victim : on_node) {
      if (s.task_status(victim) != TaskStatus::kRunning) continue;
      const std::vector<TaskId> unit = EvictionUnit(s, cause, task, victim);
      if (unit.empty()) continue;
      if (trial->evicted.size() + unit.size() > limit || !evict(unit)) return false;
      took = true;
      break;
    }
    if (!took) return false;
  }
}

// The reason an eviction gives; `node`: where the task goes (defragment names it).
std::string EvictionReason(const Session& s, EvictionCause cause, TaskId task, NodeId node) {
  const ClusterState& c = s.cluster();
  const Job& job = c.job(c.task(task).job);
  const std::string who = "task " + c.task(task).name + " of job " + job.name;
  if (cause == EvictionCause::kDefragment) {
    return "defragment: moved to free node " + c.node(node).name + " for job " + job.name + " (" +
           who + ")";
  }
  if (cause == EvictionCause::kPreempt) {
    return "preempted for " + who + " (priority " + std::to_string(job.priority) + ")";
  }
  return "reclaimed for queue " + c.queue(job.queue).name + " (" + who +
         "): its queue holds more than its deserved share";
}

// The nodes a search may use: all (null), or a topology domain's, in id order.
bool InScope(const std::vector<NodeId>* scope, NodeId node) {
  return scope == nullptr || std::binary_search(scope->begin(), scope->end(), node);
}

// Why no task may be evicted for a task, by cause.
std::string NoCandidates(EvictionCause cause) {
  switch (cause) {
    case EvictionCause::kPreempt:
      return "no running task of lower priority in its queue may be evicted for it";
    case EvictionCause::kReclaim:
      return "no task may be reclaimed for it (no other queue holds more than its deserved "
             "share, or its own queue would go above its share)";
    case EvictionCause::kDefragment:
      return "no movable task may be moved for it (movable: by the pod's gantry.dev/movable "
             "annotation or its queue's; of a job of at most its priority)";
  }
  return "";
}

// The candidates for `cause` on the search's nodes, in victim order.
std::vector<TaskId> CandidatesInScope(const RoomSearch& r, EvictionCause cause) {
  const ClusterState& c = r.session.cluster();
  std::vector<TaskId> victims = EvictionCandidates(r.session, cause, r.task);
  if (r.scope != nullptr) {
    std::erase_if(victims, [&](TaskId v) { return !InScope(r.scope, c.task(v).node); });
  }
  return victims;
}

// Candidates by node, in node id order, each node's in the order given.
std::map<NodeId, std::vector<TaskId>> ByNode(const ClusterState& c,
                                             const std::vector<TaskId>& victims) {
  std::map<NodeId, std::vector<TaskId>> by_node;
  for (TaskId v : victims) by_node[c.task(v).node].push_back(v);
  return by_node;
}

// How many tasks the next node's trial may evict: no more than the best so far (fewer
// wins), and no more than the budget.
size_t TrialLimit(bool found, const NodeTrial& best, int64_t budget) {
  size_t limit = found ? best.evicted.size() : std::numeric_limits<size_t>::max();
  if (budget < kNoEvictionLimit) {
    limit = std::min(limit, static_cast<size_t>(std::max<int64_t>(0, budget)));
  }
  return limit;
}

// Does the best node's evictions again, for good, and pipelines the task there. False with
// *why_not and the statement as it was when its queue may not take it.
bool TakeBest(const RoomSearch& r, EvictionCause cause, NodeTrial best, const std::string& reason,
              std::vector<TaskId>* evicted, std::string* why_not) {
  Session& s = r.session;
  Statement& st = r.statement;
  const ClusterState& c = s.cluster();
  const TaskId task = r.task;
  const size_t checkpoint = st.Checkpoint();
  for (TaskId v : best.evicted) {
    Status evicted_now = st.Evict(v, reason, c.task(task).job, cause);
    if (!evicted_now.ok()) {  // the trial evicted it in this very state: a bug, say so
      st.Rollback(checkpoint);
      *why_not = "internal error: " + evicted_now.message();
      return false;
    }
  }
  if (!s.QueueTakes(task, best.placement, why_not)) {
    st.Rollback(checkpoint);
    return false;
  }
  Status pipelined = st.Pipeline(task, std::move(best.placement));
  if (!pipelined.ok()) {
    st.Rollback(checkpoint);
    *why_not = "internal error: " + pipelined.message();
    return false;
  }
  evicted->insert(evicted->end(), best.evicted.begin(), best.evicted.end());
  return true;
}

}  // namespace

bool MakeRoomByEvicting(const RoomSearch& r, EvictionCause cause, std::vector<TaskId>* evicted,
                        std::string* why_not) {
  Session& s = r.session;
  Statement& st = r.statement;
  const std::vector<TaskId> victims = CandidatesInScope(r, cause);
  if (victims.empty()) {
    *why_not = NoCandidates(cause);
    return false;
  }
  const std::string reason = EvictionReason(s, cause, r.task, kNone);
  NodeTrial best;
  bool found = false;
  std::string queue_refused;  // the first node's where the task fit but its queue refused it
  for (const auto& [node, on_node] : ByNode(s.cluster(), victims)) {
    const size_t checkpoint = st.Checkpoint();
    NodeTrial trial;
    trial.node = node;
    // Of as many evicted, the node of lower-priority victims, then the lower node id.
    const bool better = EvictOnNode(s, st, cause, r.task, on_node, victims,
                                    TrialLimit(found, best, r.budget), reason, &trial) &&
                        (!found || trial.evicted.size() < best.evicted.size() ||
                         trial.top_priority < best.top_priority);
    if (queue_refused.empty()) queue_refused = trial.queue_refused;
    if (better) {
      best = std::move(trial);
      found = true;
    }
    st.Rollback(checkpoint);
  }
  if (!found) {
    *why_not = "evicting what it may evict (" + std::to_string(victims.size()) +
               " task(s)) makes room for it on no node";
    if (!queue_refused.empty()) *why_not += "; where it fit: " + queue_refused;
    return false;
  }
  return TakeBest(r, cause, std::move(best), reason, evicted, why_not);
}

bool MakeRoomByMoving(const RoomSearch& r, MoveCache* moves, std::vector<TaskId>* evicted,
                      std::string* why_not) {
  const EvictionCause cause = EvictionCause::kDefragment;
  Session& s = r.session;
  Statement& st = r.statement;
  const ClusterState& c = s.cluster();
  const TaskId task = r.task;
  std::vector<TaskId> victims = CandidatesInScope(r, cause);
  std::erase_if(victims, [&](TaskId v) { return !CouldHold(s, c.spec_of(task), c.task(v).node); });
  if (moves != nullptr) {  // a task that fits nowhere now is moved nowhere
    std::erase_if(victims, [&](TaskId v) {
      auto [known, inserted] = moves->fits_now.try_emplace(c.task(v).spec, false);
      if (inserted) {
        Placement placement;
        std::string why;
        known->second = s.FindPlacement(v, &placement, &why);
      }
      return !known->second;
    });
  }
  if (victims.empty()) {
    *why_not = NoCandidates(cause);
    return false;
  }
  std::map<NodeId, std::vector<TaskId>> by_node = ByNode(c, victims);
  // Nodes that moving every candidate would not free enough of are not tried.
  std::erase_if(by_node, [&](const auto& entry) {
    return !MayFitMovingAll(s, c.spec_of(task), entry.first, entry.second);
  });
  if (by_node.empty()) {
    *why_not = "moving all it may move (" + std::to_string(victims.size()) +
               " task(s)) would free room for it on no node";
    return false;
  }
  // The nodes with the fewest candidates first, so that the trial limit cuts the rest
  // short; the comparison, not this order, settles ties.
  std::vector<NodeId> order;
  for (auto& [node, on_node] : by_node) {
    order.push_back(node);
    SortForMoving(c, &on_node);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](NodeId a, NodeId b) { return by_node[a].size() < by_node[b].size(); });
  NodeTrial best;
  bool found = false;
  int64_t unfit_nodes = 0;  // nodes whose moved tasks would not fit elsewhere
  std::string unfit_why;
  for (NodeId node : order) {
    const size_t checkpoint = st.Checkpoint();
    NodeTrial trial;
    trial.node = node;
    // Of as many moved, less GPU share moved, then the lower node id.
    bool better = MoveOnNode(s, st, task, by_node[node], TrialLimit(found, best, r.budget),
                             EvictionReason(s, cause, task, node), &trial) &&
                  (!found || trial.evicted.size() < best.evicted.size() ||
                   (trial.evicted.size() == best.evicted.size() &&
                    (trial.moved_share < best.moved_share ||
                     (trial.moved_share == best.moved_share && node < best.node))));
    if (better) {
      // Its moved tasks must fit elsewhere at once, with the task pipelined here.
      const size_t check = st.Checkpoint();
      std::string why;
      better = st.Pipeline(task, trial.placement).ok() && MovedTasksFit(s, st, trial.evicted, &why);
      st.Rollback(check);
      if (!better && unfit_nodes++ == 0) unfit_why = why;
    }
    if (better) {
      best = std::move(trial);
      found = true;
    }
    st.Rollback(checkpoint);
  }
  if (!found) {
    *why_not = "moving what it may move (" + std::to_string(victims.size()) +
               " task(s)) frees room for it on no node";
    if (r.budget < static_cast<int64_t>(victims.size())) {  // the budget may have stopped it
      *why_not += " within the " + std::to_string(r.budget) + " eviction(s) its budget has left";
    }
    if (unfit_nodes > 0) {
      *why_not += "; on " + std::to_string(unfit_nodes) +
                  " node(s) the moved tasks would not all fit elsewhere (" + unfit_why + ")";
    }
    return false;
  }
  const std::string reason = EvictionReason(s, cause, task, best.node);
  return TakeBest(r, cause, std::move(best), reason, evicted, why_not);
}

}  // namespace gantry
