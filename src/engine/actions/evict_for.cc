#include "engine/actions/evict_for.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

#include "engine/actions/moved_tasks.h"
#include "engine/statement.h"

namespace gantry {

bool VictimGoesFirst(const ClusterState& c, TaskId a, TaskId b) {
  const Job& ja = c.job(c.task(a).job);
  const Job& jb = c.job(c.task(b).job);
  if (ja.priority != jb.priority) return ja.priority < jb.priority;
  const int32_t pa = c.spec_of(a).priority;
  const int32_t pb = c.spec_of(b).priority;
  if (pa != pb) return pa < pb;
  if (ja.creation != jb.creation) return ja.creation > jb.creation;
  if (ja.name != jb.name) return ja.name < jb.name;
  return a > b;
}

namespace {

// The jobs that evicted `job`, directly or through a chain, counting this session's
// committed evictions as well as the cluster's memory (Job::evicted_by, closed over the
// chains before the session): sorted. Without the session's part, two evictions of one
// session could close a loop that neither closes alone: B had evicted A and D had evicted
// C; in this session A evicts D, then C evicts B (C-B-A-D-C). After the last eviction of
// this session on a chain into `job`, the rest of the chain is one the cluster's memory
// knows, so adding each session evictor whose victim is already in the set, with its own
// evicted_by, until nothing changes, finds every job up the chains.
std::vector<JobId> EvictorsOf(const Session& s, JobId job) {
  const ClusterState& c = s.cluster();
  std::vector<JobId> upstream = c.job(job).evicted_by;
  const std::vector<EvictDecision>& session = s.committed_evictions();
  if (session.empty()) return upstream;
  auto holds = [&](JobId j) {
    return j == job || std::binary_search(upstream.begin(), upstream.end(), j);
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const EvictDecision& e : session) {
      if (e.for_job == kNone || e.for_job == job || holds(e.for_job) || !holds(e.job)) continue;
      std::vector<JobId> merged;
      const std::vector<JobId>& more = c.job(e.for_job).evicted_by;
      std::set_union(upstream.begin(), upstream.end(), more.begin(), more.end(),
                     std::back_inserter(merged));
      const auto at = std::lower_bound(merged.begin(), merged.end(), e.for_job);
      merged.insert(at, e.for_job);
      upstream = std::move(merged);
      changed = true;
    }
  }
  std::erase(upstream, job);
  return upstream;
}

// Running tasks `preemptor` may evict for `cause`, in victim order: of lower-priority
// jobs in its own queue (preempt), of other queues' jobs (reclaim), or movable tasks of
// jobs of at most its priority (defragment), as the victim filters keep them. The action
// asks for lower priority itself too: whatever the filters, a preemption never evicts a
// job that could preempt back.
std::vector<TaskId> Candidates(const Session& s, EvictionCause cause, TaskId preemptor) {
  const ClusterState& c = s.cluster();
  const JobId own_job = c.task(preemptor).job;
  const QueueId own_queue = c.job(own_job).queue;
  const int32_t priority = c.job(own_job).priority;
  // No loops: never a job that evicted this one, directly or through a chain.
  if (c.EvictionChainFull(own_job)) return {};
  const std::vector<JobId> evicted_by = EvictorsOf(s, own_job);
  std::vector<TaskId> out;
  for (JobId j = 0; j < c.jobs().size(); ++j) {
    const Job& job = c.job(j);
    if (j == own_job || job.running == 0) continue;
    if (c.EvictionChainFull(j) || std::binary_search(evicted_by.begin(), evicted_by.end(), j)) {
      continue;
    }
    const bool same_queue = job.queue == own_queue;
    const bool moving = cause == EvictionCause::kDefragment;
    const bool eligible = cause == EvictionCause::kPreempt ? same_queue && job.priority < priority
                          : moving                         ? job.priority <= priority
                                                           : !same_queue;
    if (!eligible) continue;
    for (TaskId t : job.tasks) {
      if (s.task_status(t) == TaskStatus::kRunning && (!moving || c.Movable(t))) out.push_back(t);
    }
  }
  std::sort(out.begin(), out.end(), [&](TaskId a, TaskId b) { return VictimGoesFirst(c, a, b); });
  return s.Victims(cause, preemptor, std::move(out));
}

// The tasks that go if `victim` goes: itself, or, when its job would fall below its
// minMember, every running task of the job (a gang goes whole). Asked of the victim
// filters again in the state as it is now (earlier victims gone): all or none. Empty
// when they do not all go.
std::vector<TaskId> UnitOf(const Session& s, EvictionCause cause, TaskId preemptor, TaskId victim) {
  const ClusterState& c = s.cluster();
  const JobId job = c.task(victim).job;
  std::vector<TaskId> unit;
  if (s.job(job).ready - 1 >= c.job(job).min_member) {
    unit.push_back(victim);
  } else {
    for (TaskId t : c.job(job).tasks) {
      if (s.task_status(t) == TaskStatus::kRunning) unit.push_back(t);
    }
  }
  if (s.Victims(cause, preemptor, unit).size() != unit.size()) return {};
  if (cause == EvictionCause::kDefragment &&
      !std::all_of(unit.begin(), unit.end(), [&](TaskId t) { return c.Movable(t); })) {
    return {};
  }
  return unit;
}

struct NodeTrial {
  NodeId node = kNone;
  std::vector<TaskId> evicted;
  int32_t top_priority = std::numeric_limits<int32_t>::min();  // of the evicted jobs
  Milli moved_share = 0;  // the GPU share the evicted tasks held (defragment)
  Placement placement;
};

// Evicts the node's victims in order until `task` fits the node's future room: true with
// the trial filled, the evictions left in the statement (the caller rolls them back).
// Gives up once more than `limit` tasks would go.
bool TryNode(Session& s, Statement& st, EvictionCause cause, TaskId task,
             const std::vector<TaskId>& on_node, size_t limit, const std::string& reason,
             NodeTrial* trial) {
  const ClusterState& c = s.cluster();
  const std::vector<NodeId> nodes = {trial->node};
  const SearchScope scope{&nodes, /*future=*/true};
  for (TaskId victim : on_node) {
    if (s.task_status(victim) != TaskStatus::kRunning) continue;  // gone with its gang
    const std::vector<TaskId> unit = UnitOf(s, cause, task, victim);
    if (unit.empty()) continue;
    if (trial->evicted.size() + unit.size() > limit) return false;
    for (TaskId t : unit) {
      if (!st.Evict(t, reason, c.task(task).job, cause).ok()) return false;
      trial->evicted.push_back(t);
      trial->top_priority = std::max(trial->top_priority, c.job(c.task(t).job).priority);
    }
    std::string why_not;
    if (s.FindPlacement(task, scope, &trial->placement, &why_not)) return true;
  }
  return false;
}

// Defragment's TryNode: units go largest GPU share first (`on_node` in SortForMoving
// order), but before each, the single unit that moves the least share and lets the task
// fit is looked for, and taken instead when there is one, so that no larger victim than
// needed goes last. Gives up once more than `limit` tasks would go.
bool TryNodeMoving(Session& s, Statement& st, TaskId task, const std::vector<TaskId>& on_node,
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
      const std::vector<TaskId> unit = UnitOf(s, cause, task, victim);
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
      const std::vector<TaskId> unit = UnitOf(s, cause, task, victim);
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

// Evicts for `task` on the best node of `scope` (see PlaceJobEvicting) and pipelines it
// there, adding the evictions to *evictions and the evicted tasks to *evicted. At most
// `budget` evictions. False with *why_not, the statement as it was, when no node makes
// room.
bool EvictFor(Session& s, Statement& st, EvictionCause cause, TaskId task,
              const std::vector<NodeId>* scope, int64_t budget, MoveCache* moves,
              int64_t* evictions, std::vector<TaskId>* evicted, std::string* why_not) {
  const ClusterState& c = s.cluster();
  const bool moving = cause == EvictionCause::kDefragment;
  std::vector<TaskId> victims = Candidates(s, cause, task);
  if (scope != nullptr) {
    std::erase_if(victims, [&](TaskId v) { return !InScope(scope, c.task(v).node); });
  }
  if (moving) {
    std::erase_if(victims,
                  [&](TaskId v) { return !CouldHold(s, c.spec_of(task), c.task(v).node); });
  }
  if (moving && moves != nullptr) {  // a task that fits nowhere now is moved nowhere
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
  std::map<NodeId, std::vector<TaskId>> by_node;  // in node id order, victims in order
  for (TaskId v : victims) by_node[c.task(v).node].push_back(v);
  if (moving) {  // nodes that moving every candidate would not free enough of are not tried
    std::erase_if(by_node, [&](const auto& entry) {
      return !MayFitMovingAll(s, c.spec_of(task), entry.first, entry.second);
    });
    if (by_node.empty()) {
      *why_not = "moving all it may move (" + std::to_string(victims.size()) +
                 " task(s)) would free room for it on no node";
      return false;
    }
  }
  // Defragment tries the nodes with the fewest candidates first, so that the limit below
  // cuts the rest short; the comparison, not this order, settles ties.
  std::vector<NodeId> order;
  for (auto& [node, on_node] : by_node) {
    order.push_back(node);
    if (moving) SortForMoving(c, &on_node);
  }
  if (moving) {
    std::stable_sort(order.begin(), order.end(),
                     [&](NodeId a, NodeId b) { return by_node[a].size() < by_node[b].size(); });
  }
  const std::string shared_reason = moving ? "" : EvictionReason(s, cause, task, kNone);
  NodeTrial best;
  bool found = false;
  int64_t unfit_nodes = 0;  // defragment: nodes whose moved tasks would not fit elsewhere
  std::string unfit_why;
  for (NodeId node : order) {
    const size_t checkpoint = st.Checkpoint();
    NodeTrial trial;
    trial.node = node;
    size_t limit = found ? best.evicted.size() : std::numeric_limits<size_t>::max();
    if (budget < kNoEvictionLimit) {
      limit = std::min(limit, static_cast<size_t>(std::max<int64_t>(0, budget)));
    }
    // Within the limit a trial evicts no more than the best so far: fewer wins, and of
    // as many, lower-priority victims (preempt, reclaim) or less GPU share moved
    // (defragment), then the lower node id.
    bool better = false;
    if (moving) {
      better = TryNodeMoving(s, st, task, by_node[node], limit,
                             EvictionReason(s, cause, task, node), &trial) &&
               (!found || trial.evicted.size() < best.evicted.size() ||
                (trial.evicted.size() == best.evicted.size() &&
                 (trial.moved_share < best.moved_share ||
                  (trial.moved_share == best.moved_share && node < best.node))));
      if (better) {
        // Its moved tasks must fit elsewhere at once, with the task pipelined here.
        const size_t check = st.Checkpoint();
        std::string why;
        better =
            st.Pipeline(task, trial.placement).ok() && MovedTasksFit(s, st, trial.evicted, &why);
        st.Rollback(check);
        if (!better && unfit_nodes++ == 0) unfit_why = why;
      }
    } else {
      better = TryNode(s, st, cause, task, by_node[node], limit, shared_reason, &trial) &&
               (!found || trial.evicted.size() < best.evicted.size() ||
                trial.top_priority < best.top_priority);
    }
    if (better) {
      best = std::move(trial);
      found = true;
    }
    st.Rollback(checkpoint);
  }
  if (!found) {
    if (!moving) {
      *why_not = "evicting what it may evict (" + std::to_string(victims.size()) +
                 " task(s)) makes room for it on no node";
      return false;
    }
    *why_not = "moving what it may move (" + std::to_string(victims.size()) +
               " task(s)) frees room for it on no node";
    if (budget < static_cast<int64_t>(victims.size())) {  // the budget may be what stopped it
      *why_not += " within the " + std::to_string(budget) + " eviction(s) its budget has left";
    }
    if (unfit_nodes > 0) {
      *why_not += "; on " + std::to_string(unfit_nodes) +
                  " node(s) the moved tasks would not all fit elsewhere (" + unfit_why + ")";
    }
    return false;
  }
  const std::string reason = moving ? EvictionReason(s, cause, task, best.node) : shared_reason;
  const size_t checkpoint = st.Checkpoint();
  for (TaskId v : best.evicted) {
    Status evicted_now = st.Evict(v, reason, c.task(task).job, cause);
    if (!evicted_now.ok()) {  // the trial evicted it in this very state: a bug, say so
      st.Rollback(checkpoint);
      *why_not = "internal error: " + evicted_now.message();
      return false;
    }
  }
  const ResourceVector accounted = ClusterState::Accounted(
      c.spec_of(task), static_cast<int32_t>(best.placement.gpus.devices.size()),
      best.placement.gpus.milli_each);
  if (!s.QueueAllocatable(c.job(c.task(task).job).queue, accounted, why_not)) {
    st.Rollback(checkpoint);
    return false;
  }
  Status pipelined = st.Pipeline(task, std::move(best.placement));
  if (!pipelined.ok()) {
    st.Rollback(checkpoint);
    *why_not = "internal error: " + pipelined.message();
    return false;
  }
  *evictions += static_cast<int64_t>(best.evicted.size());
  evicted->insert(evicted->end(), best.evicted.begin(), best.evicted.end());
  return true;
}

// Places the task on free room (future: on room being released) of `scope` without
// evicting.
bool PlaceWithoutEvicting(Session& s, Statement& st, TaskId task, const std::vector<NodeId>* scope,
                          bool future) {
  const ClusterState& c = s.cluster();
  Placement placement;
  std::string why_not;
  if (!s.FindPlacement(task, SearchScope{scope, future}, &placement, &why_not)) return false;
  const ResourceVector accounted =
      ClusterState::Accounted(c.spec_of(task), static_cast<int32_t>(placement.gpus.devices.size()),
                              placement.gpus.milli_each);
  if (!s.QueueAllocatable(c.job(c.task(task).job).queue, accounted, &why_not)) return false;
  return future ? st.Pipeline(task, std::move(placement)).ok()
                : st.Allocate(task, std::move(placement)).ok();
}

// One try at pipelining a job with evictions, inside `scope`, in the statement: what it
// placed, and when it fell short, the task that failed and why. The statement keeps what
// was done; the caller commits or rolls back.
struct JobTrial {
  bool pipelined = false;
  int32_t placed = 0;
  int64_t evictions = 0;
  std::vector<TaskId> evicted;
  TaskId failed = kNone;
  std::string why_not;
  bool unfit = false;  // defragment: it was pipelined, but its moved tasks would not all fit
};

JobTrial TryJob(Session& session, Statement& st, JobId job_id, EvictionCause cause,
                const std::vector<NodeId>* scope, int64_t max_evictions, MoveCache* moves) {
  const ClusterState& c = session.cluster();
  JobTrial trial;
  // Placing tasks does not change `unplaced` until the statement commits; a copy all the
  // same, since the statement's searches may make job entries.
  const std::vector<TaskId> unplaced = session.job(job_id).unplaced;
  for (TaskId task : unplaced) {
    if (session.JobPipelined(job_id)) break;
    if (PlaceWithoutEvicting(session, st, task, scope, /*future=*/false) ||
        PlaceWithoutEvicting(session, st, task, scope, /*future=*/true)) {
      ++trial.placed;
      continue;
    }
    if (c.spec_of(task).preemption_policy == PreemptionPolicy::kNever) {
      trial.why_not =
          "its preemptionPolicy is Never, so it evicts nothing, and no room is free for it";
      trial.failed = task;
      break;
    }
    const int64_t budget =
        max_evictions == kNoEvictionLimit ? max_evictions : max_evictions - trial.evictions;
    if (!EvictFor(session, st, cause, task, scope, budget, moves, &trial.evictions, &trial.evicted,
                  &trial.why_not)) {
      trial.failed = task;
      break;
    }
    ++trial.placed;
  }
  trial.pipelined = session.JobPipelined(job_id);
  // Defragment: every task it moves must fit elsewhere at once, all of them together (each
  // node's were checked alone). A check: the holds are rolled back.
  if (trial.pipelined && cause == EvictionCause::kDefragment && !trial.evicted.empty()) {
    const size_t checkpoint = st.Checkpoint();
    std::string why;
    const bool fit = MovedTasksFit(session, st, trial.evicted, &why);
    st.Rollback(checkpoint);
    if (!fit) {
      trial.pipelined = false;
      trial.unfit = true;
      trial.why_not = "the tasks it would move would not all fit elsewhere: " + why;
    }
  }
  return trial;
}

// The candidate domains of a required-topology gang: the one its running tasks are in (a
// growing job stays there), else every domain of its level.
std::vector<size_t> CandidateDomains(Session& session, JobId job_id, int level) {
  const ClusterState& c = session.cluster();
  for (TaskId t : c.job(job_id).tasks) {
    if (session.task_status(t) != TaskStatus::kRunning) continue;
    const int32_t d = session.topology().DomainOf(level, c.task(t).node);
    return d < 0 ? std::vector<size_t>{} : std::vector<size_t>{static_cast<size_t>(d)};
  }
  std::vector<size_t> all(session.topology().At(level).size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

const std::vector<NodeId>& DomainNodes(Session& session, JobId job_id, size_t domain) {
  const int level = session.topology().LevelOf(session.cluster().job(job_id).topology.level);
  return session.topology().At(level)[domain].nodes;
}

// A gang with a required topology evicts inside one domain of its level: each candidate
// domain is tried from a checkpoint and rolled back; the one that pipelines the gang with
// the fewest evictions wins (ties: the first by name). None: *why_not says so.
std::optional<size_t> BestDomainEvicting(Session& session, Statement& st, JobId job_id,
                                         EvictionCause cause, int64_t max_evictions,
                                         MoveCache* moves, std::string* why_not) {
  const Job& job = session.cluster().job(job_id);
  const int level = session.topology().LevelOf(job.topology.level);
  if (level < 0) {
    *why_not = "its required topology level " + job.topology.level + " is not a level";
    return std::nullopt;
  }
  const std::vector<size_t> domains = CandidateDomains(session, job_id, level);
  std::optional<size_t> best;
  int64_t best_evictions = 0;
  for (size_t d : domains) {
    const size_t checkpoint = st.Checkpoint();
    const JobTrial trial =
        TryJob(session, st, job_id, cause, &DomainNodes(session, job_id, d), max_evictions, moves);
    st.Rollback(checkpoint);
    if (trial.pipelined && (!best || trial.evictions < best_evictions)) {
      best = d;
      best_evictions = trial.evictions;
    }
  }
  if (!best) {
    *why_not = "a gang with a required topology (" + job.topology.level +
               ") evicts inside one of its domains, and in none of the " +
               std::to_string(domains.size()) +
               " would evicting what it may evict make room for its gang";
  }
  return best;
}

}  // namespace

int32_t PlaceJobEvicting(Session& session, JobId job_id, EvictionCause cause, int64_t max_evictions,
                         MoveCache* moves) {
  const ClusterState& c = session.cluster();
  const Job& job = c.job(job_id);
  const int64_t grace = session.config().preemption_grace_s;
  const std::string prefix = std::string(EvictionCauseName(cause)) + ": ";
  if (grace > 0 && session.WaitedSeconds(job_id) < grace) {
    std::string text = prefix + "it may evict once it has waited " + std::to_string(grace) +
                       " s (preemptionGraceSeconds), so that an autoscaler may add nodes first; " +
                       "it has waited " + std::to_string(session.WaitedSeconds(job_id)) + " s";
    const std::string& before = session.job(job_id).reason;
    session.SetJobReason(job_id, before.empty() ? text : before + "; " + text);
    return 0;
  }
  Statement st = session.NewStatement();
  JobTrial trial;
  if (job.topology.required) {
    std::string text;
    const std::optional<size_t> domain =
        BestDomainEvicting(session, st, job_id, cause, max_evictions, moves, &text);
    if (domain) {
      const std::vector<NodeId>& nodes = DomainNodes(session, job_id, *domain);
      trial = TryJob(session, st, job_id, cause, &nodes, max_evictions, moves);
      if (trial.pipelined) {
        st.Commit();
        return trial.placed;
      }
      // The same search on the same state pipelined it a moment ago: a bug, say so.
      text = "internal error: the gang no longer fits the domain its trial chose";
    }
    st.Discard();
    const std::string& before = session.job(job_id).reason;
    text = prefix + text;
    session.SetJobReason(job_id, before.empty() ? text : before + "; " + text);
    return 0;
  }
  trial = TryJob(session, st, job_id, cause, nullptr, max_evictions, moves);
  if (trial.pipelined) {
    st.Commit();
    return trial.placed;
  }
  const int32_t placed = trial.placed;
  const TaskId failed = trial.failed;
  const std::string& why_not = trial.why_not;
  st.Discard();
  std::string text = prefix;
  if (trial.unfit) {
    text += "nothing was evicted: " + why_not;
  } else if (job.min_member > 1) {
    text += "gang: " + std::to_string(session.job(job_id).ready + placed) + " of minMember " +
            std::to_string(job.min_member) +
            " tasks could be placed with evictions, so nothing was evicted; ";
  } else {
    text += "nothing was evicted; ";
  }
  if (failed != kNone) text += "task " + c.task(failed).name + ": " + why_not;
  const std::string& before = session.job(job_id).reason;
  session.SetJobReason(job_id, before.empty() ? text : before + "; " + text);
  return 0;
}

}  // namespace gantry
