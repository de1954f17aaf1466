#include "engine/actions/job_allocation.h"

#include <algorithm>
#include <numeric>

#include "engine/group_readiness.h"
#include "engine/statement.h"

namespace gantry {
namespace {

// What placing a run of tasks did: how many went into the statement, and the task that
// did not fit, with why.
struct TaskRun {
  int32_t placed = 0;
  TaskId failed = kNone;
  std::string why_not;
  bool queue_refused = false;  // the failed task found room, but its queue would not take it
};

// Places one task on the nodes of `scope` into `statement`, if it fits there and its queue
// takes it. With `groups` (node groups of the scope, in the order to fill them), it goes
// to the first group, from *group on, that has room for it, else anywhere in `scope`.
bool PlaceTask(Session& session, Statement& statement, TaskId task, const SearchScope& scope,
               const std::vector<const std::vector<NodeId>*>* groups, size_t* group,
               std::string* why_not, bool* queue_refused) {
  Placement placement;
  bool found = false;
  for (; groups != nullptr && *group < groups->size() && !found; ++*group) {
    found = session.FindPlacement(task, SearchScope{(*groups)[*group], scope.future}, &placement,
                                  why_not);
    if (found) break;
  }
  if (!found && !session.FindPlacement(task, scope, &placement, why_not)) return false;
  if (!session.QueueTakes(task, placement, why_not)) {
    *queue_refused = true;
    return false;
  }
  Status allocated = statement.Allocate(task, std::move(placement));
  if (!allocated.ok()) {  // the search found it room, so this is a bug: say so, place nothing
    *why_not = "internal error: " + allocated.message();
    return false;
  }
  return true;
}

// A job with a group tree (Job::groups, Kubernetes' CompositePodGroup), placed as
// kube-scheduler places one: each leaf's unplaced tasks in task order, kept only if the
// leaf is then ready (each leaf is all or nothing); an inner group's children in order,
// kept only if `min` of them are ready. The first task that did not fit is the one named.
class GroupTreePlacement {
 public:
  GroupTreePlacement(Session& s, Statement& st, JobId job, const SearchScope& scope)
      : s_(s),
        st_(st),
        job_(s.cluster().job(job)),
        scope_(scope),
        start_(st.size()),
        counts_(ReadyPerLeaf(s, job_)),
        unplaced_(job_.groups.size()) {
    const ClusterState& c = s.cluster();
    for (TaskId t : s.job(job).unplaced) {
      if (c.task(t).group >= 0) unplaced_[static_cast<size_t>(c.task(t).group)].push_back(t);
    }
  }

  TaskRun Place() {
    Place(0);
    run_.placed = static_cast<int32_t>(st_.size() - start_);
    return std::move(run_);
  }

 private:
  // Whether group g is ready once placed; if not, what it placed is taken back.
  bool Place(size_t g) {
    const TaskGroup& group = job_.groups[g];
    const size_t checkpoint = st_.Checkpoint();
    const std::vector<int32_t> counts_before = counts_;
    int32_t ready = 0;
    if (group.leaf) {
      size_t node_group = 0;
      for (TaskId t : unplaced_[g]) {
        std::string why_not;
        bool queue_refused = false;
        if (!PlaceTask(s_, st_, t, scope_, nullptr, &node_group, &why_not, &queue_refused)) {
          if (run_.failed == kNone) run_ = TaskRun{0, t, std::move(why_not), queue_refused};
          break;
        }
        ++counts_[g];
      }
      ready = counts_[g];
    } else {
      int32_t remaining = Children(g);
      for (size_t child = g + 1; child < job_.groups.size() && ready + remaining >= group.min;
           ++child) {
        if (job_.groups[child].parent != static_cast<int32_t>(g)) continue;
        --remaining;
        if (Place(child)) ++ready;
      }
    }
    if (ready >= group.min) return true;
    st_.Rollback(checkpoint);
    counts_ = counts_before;
    return false;
  }

  int32_t Children(size_t g) const {
    return static_cast<int32_t>(
        std::count_if(job_.groups.begin(), job_.groups.end(),
                      [&](const TaskGroup& c) { return c.parent == static_cast<int32_t>(g); }));
  }

  Session& s_;
  Statement& st_;
  const Job& job_;
  const SearchScope& scope_;
  const size_t start_;                         // the statement's size before
  std::vector<int32_t> counts_;                // per leaf: running and placed tasks
  std::vector<std::vector<TaskId>> unplaced_;  // per leaf, in task order
  TaskRun run_;
};

// Places the job's unplaced tasks in task order into `statement`, on the nodes of `scope`,
// until one does not fit or the step ends. With `groups` (node groups of the scope, in the
// order to fill them), each task goes to the first group, from the one the previous task
// went to, that has room for it, else anywhere in `scope`. A job with a group tree is
// placed by its tree, whole in one step.
TaskRun PlaceTasks(Session& session, Statement& statement, JobId job_id, JobStep step,
                   bool ready_before, const SearchScope& scope,
                   const std::vector<const std::vector<NodeId>*>* groups = nullptr) {
  if (!session.cluster().job(job_id).groups.empty()) {
    return GroupTreePlacement(session, statement, job_id, scope).Place();
  }
  TaskRun run;
  size_t group = 0;
  // Placing tasks does not change `unplaced` until the statement commits.
  for (TaskId task : session.job(job_id).unplaced) {
    if (!PlaceTask(session, statement, task, scope, groups, &group, &run.why_not,
                   &run.queue_refused)) {
      run.failed = task;
      break;
    }
    ++run.placed;
    // One turn: the gang minimum in one go, then one task at a time, so that the job's
    // further tasks go back into the queue order like any other job's.
    if (step == JobStep::kOneTurn && (ready_before || session.JobReady(job_id))) break;
  }
  return run;
}

// ---- Gangs that stay inside one topology domain (Job::topology).

// What a domain is measured in: GPUs for a gang that asks for them, else CPU.
ResourceId MeasureOf(const Session& s, JobId job) {
  const std::vector<TaskId>& unplaced = s.job(job).unplaced;
  return !unplaced.empty() && s.cluster().spec_of(unplaced.front()).gpu.wants_gpu() ? kGpu : kCpu;
}

Milli NeedOf(const ClusterState& c, TaskId task, ResourceId measure) {
  const TaskSpec& spec = c.spec_of(task);
  if (measure == kCpu) return spec.requests.Get(kCpu);
  return spec.gpu.count > 0 ? Milli{spec.gpu.count} * kGpuMilliWhole : Milli{spec.gpu.milli};
}

// The domain the job's tasks already run or are placed in at `level`, or -1.
int32_t DomainOfPlacedTasks(Session& s, JobId job, int level) {
  for (TaskId t : s.cluster().job(job).tasks) {
    const TaskStatus status = s.task_status(t);
    if (status == TaskStatus::kPending || status == TaskStatus::kDone) continue;
    const NodeId node = s.state().placement_of(t).node;
    if (node != kNone) return s.topology().DomainOf(level, node);
  }
  return -1;
}

// The free measure over some nodes.
Milli FreeOver(const Session& s, const std::vector<NodeId>& nodes, ResourceId measure) {
  Milli free = 0;
  for (NodeId n : nodes) free += s.free_now(n, measure);
  return free;
}

// What the job's gang minimum still needs of the measure.
Milli GangNeed(const Session& s, JobId job, ResourceId measure) {
  const std::vector<TaskId>& unplaced = s.job(job).unplaced;
  const size_t minimum =
      static_cast<size_t>(std::max<int32_t>(0, s.cluster().job(job).min_member - s.job(job).ready));
  Milli need = 0;
  for (size_t i = 0; i < std::min(minimum, unplaced.size()); ++i) {
    need += NeedOf(s.cluster(), unplaced[i], measure);
  }
  return need;
}

// Places the job's tasks inside one domain, in NVLink order where its nodes carry
// GPU feature discovery's clique label: inside the one clique the gang fills best, else
// clique by clique, the one with most room first, so that it spans as few as it can.
TaskRun PlaceInDomain(Session& s, Statement& st, JobId job, JobStep step, bool ready_before,
                      const TopologyDomain& domain) {
  const SearchScope scope{&domain.nodes, /*future=*/false};
  if (domain.cliques.empty()) return PlaceTasks(s, st, job, step, ready_before, scope);
  const ResourceId measure = MeasureOf(s, job);
  const Milli need = GangNeed(s, job, measure);
  std::vector<std::pair<Milli, size_t>> order;  // (free, clique index)
  for (size_t k = 0; k < domain.cliques.size(); ++k) {
    order.emplace_back(FreeOver(s, domain.cliques[k], measure), k);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [free, k] : order) {
    if (free < need) continue;
    const size_t checkpoint = st.Checkpoint();
    TaskRun run = PlaceTasks(s, st, job, step, ready_before,
                             SearchScope{&domain.cliques[k], /*future=*/false});
    if (s.JobReady(job)) return run;
    st.Rollback(checkpoint);
  }
  std::vector<const std::vector<NodeId>*> groups;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    groups.push_back(&domain.cliques[it->second]);
  return PlaceTasks(s, st, job, step, ready_before, scope, &groups);
}

// Tries the level's domains in the order that fills best (least of the measure free
// first: what the gang takes is the same in each, so what stays free is least there),
// skipping those with less free than the gang's minimum needs, and keeps the first where
// the job becomes ready. True with the tasks in the statement; else the statement as it
// was, and *closest the most tasks one domain took (with its name).
bool PlaceInBestDomain(Session& s, Statement& st, JobId job, JobStep step, bool ready_before,
                       int level, TaskRun* run, std::pair<int32_t, std::string>* closest) {
  const std::vector<TopologyDomain>& domains = s.topology().At(level);
  const ResourceId measure = MeasureOf(s, job);
  const Milli need = GangNeed(s, job, measure);
  std::vector<std::pair<Milli, size_t>> order;  // (free, domain index)
  for (size_t d = 0; d < domains.size(); ++d) {
    const Milli free = FreeOver(s, domains[d].nodes, measure);
    if (free >= need) order.emplace_back(free, d);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [free, d] : order) {
    const size_t checkpoint = st.Checkpoint();
    TaskRun trial = PlaceInDomain(s, st, job, step, ready_before, domains[d]);
    if (s.JobReady(job)) {
      *run = std::move(trial);
      return true;
    }
    if (trial.placed > closest->first) *closest = {trial.placed, domains[d].name};
    st.Rollback(checkpoint);
  }
  return false;
}

// Places the job's tasks as its topology request says: a job with tasks placed already
// stays in their domain (a required request), or tries it first (preferred); a new gang
// goes to the best domain of its level, for a preferred request else of the levels above,
// else anywhere. A required request that fits no domain fails with a reason naming the
// level and the closest domain.
TaskRun PlaceWithTopology(Session& s, Statement& st, JobId job, JobStep step, bool ready_before) {
  if (s.job(job).unplaced.empty()) return {};  // the reasons below name a task
  const ClusterState& c = s.cluster();
  const TopologyRequest& request = c.job(job).topology;
  const int level = s.topology().LevelOf(request.level);
  const SearchScope anywhere;
  if (level < 0) {
    if (!request.required) return PlaceTasks(s, st, job, step, ready_before, anywhere);
    TaskRun run;
    run.failed = s.job(job).unplaced.front();
    run.why_not = "topology: no node has the label " + request.level;
    return run;
  }
  const int32_t placed_in = DomainOfPlacedTasks(s, job, level);
  if (placed_in >= 0) {
    const TopologyDomain& domain = s.topology().At(level)[static_cast<size_t>(placed_in)];
    const size_t checkpoint = st.Checkpoint();
    TaskRun run = PlaceInDomain(s, st, job, step, ready_before, domain);
    if (request.required || run.failed == kNone) {
      if (run.failed != kNone) {
        run.why_not = "topology: its tasks stay in " + request.level + " " + domain.name +
                      " (required), where: " + run.why_not;
      }
      return run;
    }
    st.Rollback(checkpoint);
    return PlaceTasks(s, st, job, step, ready_before, anywhere);
  }
  TaskRun run;
  std::pair<int32_t, std::string> closest{0, ""};
  // A preferred request goes up the levels above; a job's own label key has none.
  const int outermost = request.required || s.topology().Standalone(level) ? level : 0;
  for (int l = level; l >= outermost; --l) {
    if (PlaceInBestDomain(s, st, job, step, ready_before, l, &run, &closest)) return run;
  }
  if (!request.required) return PlaceTasks(s, st, job, step, ready_before, anywhere);
  run = TaskRun{};
  run.failed = s.job(job).unplaced.front();
  const size_t domains = s.topology().At(level).size();
  if (domains == 0) {
    run.why_not = "topology: no node has the label " + request.level;
    return run;
  }
  run.why_not = "topology: its gang must stay inside one " + request.level + " domain " +
                "(required), and none of the " + std::to_string(domains) + " has room for it";
  if (!closest.second.empty()) {
    run.why_not += " (the closest, " + closest.second + ", took " + std::to_string(closest.first) +
                   " of its tasks)";
  }
  return run;
}

}  // namespace

JobStepResult AllocateJob(Session& session, JobId job_id, JobStep step, int32_t placed_before) {
  const ClusterState& cluster = session.cluster();
  const Job& job = cluster.job(job_id);
  const JobWork& work = session.job(job_id);
  session.MarkAttempted(job_id);
  Statement statement = session.NewStatement();
  const bool ready_before = session.JobReady(job_id);
  const int32_t unplaced_before = static_cast<int32_t>(work.unplaced.size());
  const TaskRun run =
      job.topology.level.empty()
          ? PlaceTasks(session, statement, job_id, step, ready_before, SearchScope{})
          : PlaceWithTopology(session, statement, job_id, step, ready_before);
  const int32_t placed = static_cast<int32_t>(statement.size());
  const int32_t ready = session.job(job_id).ready;
  // A job of one task is the pod itself: its reason is kube-scheduler's words alone, as
  // its PodScheduled condition says them. A task of a larger job is named.
  std::string task_reason = run.failed == kNone ? ""
                            : job.tasks.size() == 1
                                ? run.why_not
                                : "task " + cluster.task(run.failed).name + ": " + run.why_not;
  // Where its queue refused a task that found room, more nodes would not help it.
  session.SetJobHold(job_id, run.queue_refused ? PendingHold::kQueueLimit : PendingHold::kNone);
  if (session.JobReady(job_id)) {
    statement.Commit();
    const int32_t total = placed_before + placed;
    if (run.failed != kNone) {
      session.SetJobReason(job_id, total > 0 ? "placed " + std::to_string(total) +
                                                   " task(s); the rest wait: " + task_reason
                                             : task_reason);
    } else {
      session.SetJobReason(job_id, "");
    }
    return {placed, run.failed == kNone && placed > 0 && placed < unplaced_before};
  }
  statement.Discard();
  if (!job.groups.empty()) {
    const std::string at_least = std::to_string(job.min_member);
    session.SetJobReason(job_id, "gang: its groups could not all reach their minimums (at least " +
                                     at_least + " tasks), so none were placed; " + task_reason);
  } else if (job.min_member > 1) {
    int32_t short_by = job.min_member - ready;
    session.SetJobReason(job_id, "gang: " + std::to_string(ready) + " of minMember " +
                                     std::to_string(job.min_member) + " tasks could be placed (" +
                                     std::to_string(short_by) + " short), so none were; " +
                                     task_reason);
  } else {
    session.SetJobReason(job_id, task_reason);
  }
  return {};
}

QueueId NextQueue(const Session& session, const std::vector<std::vector<JobId>>& jobs,
                  const std::vector<size_t>& next) {
  QueueId best = kNone;
  for (QueueId q = 0; q < jobs.size(); ++q) {
    if (next[q] >= jobs[q].size()) continue;
    if (best == kNone || session.CompareQueues(q, best) < 0) best = q;
  }
  return best;
}

}  // namespace gantry
