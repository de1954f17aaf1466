#include "engine/actions/victims.h"

#include <algorithm>
#include <iterator>

#include "engine/group_readiness.h"

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

// How many queues `a` and `b` are both in (0: only the cluster). A walk up that meets a
// cycle (a tree the proportion plugin refuses) stops after as many steps as there are
// queues.
int CommonAncestors(const ClusterState& c, QueueId a, QueueId b) {
  auto path = [&](QueueId q) {
    std::vector<QueueId> up;
    for (; q != kNone && up.size() <= c.queues().size(); q = c.queue(q).parent) up.push_back(q);
    return up;
  };
  const std::vector<QueueId> pa = path(a), pb = path(b);
  int common = 0;
  for (auto x = pa.rbegin(), y = pb.rbegin(); x != pa.rend() && y != pb.rend() && *x == *y;
       ++x, ++y) {
    ++common;
  }
  return common;
}

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

}  // namespace

std::vector<TaskId> EvictionCandidates(const Session& s, EvictionCause cause, TaskId preemptor) {
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
  if (cause == EvictionCause::kReclaim) {
    // Nearer queues first: a queue takes from its own department before another, as
    // Volcano's hierarchical queues settle a child's claim inside its parent first; what a
    // sibling gives back also makes the room in the parent that a victim of another
    // department needs (the proportion plugin's rule). Flat queues are all as near: no sort.
    auto queue_of = [&](TaskId t) { return c.job(c.task(t).job).queue; };
    std::vector<int> nearness(c.queues().size(), -1);  // by queue; -1: not known yet
    bool differ = false;
    for (TaskId t : out) {
      const QueueId q = queue_of(t);
      if (nearness[q] < 0) nearness[q] = CommonAncestors(c, own_queue, q);
      differ |= nearness[q] != nearness[queue_of(out.front())];
    }
    if (differ) {
      std::stable_sort(out.begin(), out.end(), [&](TaskId a, TaskId b) {
        return nearness[queue_of(a)] > nearness[queue_of(b)];
      });
    }
  }
  return s.Victims(cause, preemptor, std::move(out));
}

std::vector<TaskId> EvictionUnit(const Session& s, EvictionCause cause, TaskId preemptor,
                                 TaskId victim) {
  const ClusterState& c = s.cluster();
  const JobId job = c.task(victim).job;
  std::vector<TaskId> unit;
  const TaskId alone[] = {victim};
  const bool tree = !c.job(job).groups.empty();
  if (!c.job(job).disrupt_whole && s.ready_tasks(job) - 1 >= c.job(job).min_member &&
      (!tree || GroupsStayReadyWithout(s, job, alone))) {
    unit.push_back(victim);
  } else if (std::vector<TaskId> leaf =
                 tree && !c.job(job).disrupt_whole && c.task(victim).group >= 0
                     ? RunningInLeafOf(s, victim)
                     : std::vector<TaskId>{};
             !leaf.empty() && GroupsStayReadyWithout(s, job, leaf)) {
    unit = std::move(leaf);  // its child group, which may go on its own
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

}  // namespace gantry
