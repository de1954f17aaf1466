#include "engine/actions/place_job_evicting.h"

#include <optional>

#include "engine/actions/moved_tasks.h"
#include "engine/statement.h"

namespace gantry {
namespace {

// Places the task on free room (future: on room being released) of `scope` without
// evicting.
bool PlaceWithoutEvicting(Session& s, Statement& st, TaskId task, const std::vector<NodeId>* scope,
                          bool future) {
  Placement placement;
  std::string why_not;
  if (!s.FindPlacement(task, SearchScope{scope, future}, &placement, &why_not)) return false;
  if (!s.QueueTakes(task, placement, &why_not)) return false;
  return future ? st.Pipeline(task, std::move(placement)).ok()
                : st.Allocate(task, std::move(placement)).ok();
}

// One try at pipelining a job with evictions, inside `scope`, in the statement: what it
// placed, and when it fell short, the task that failed and why. The statement keeps what
// was done; the caller commits or rolls back.
struct JobTrial {
  bool pipelined = false;
  int32_t placed = 0;
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
    const int64_t evictions = static_cast<int64_t>(trial.evicted.size());
    const RoomSearch room{
        session, st, task, scope,
        max_evictions == kNoEvictionLimit ? max_evictions : max_evictions - evictions};
    const bool made = cause == EvictionCause::kDefragment
                          ? MakeRoomByMoving(room, moves, &trial.evicted, &trial.why_not)
                          : MakeRoomByEvicting(room, cause, &trial.evicted, &trial.why_not);
    if (!made) {
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
  size_t best_evictions = 0;
  for (size_t d : domains) {
    const size_t checkpoint = st.Checkpoint();
    const JobTrial trial =
        TryJob(session, st, job_id, cause, &DomainNodes(session, job_id, d), max_evictions, moves);
    st.Rollback(checkpoint);
    if (trial.pipelined && (!best || trial.evicted.size() < best_evictions)) {
      best = d;
      best_evictions = trial.evicted.size();
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
