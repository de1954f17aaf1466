// reserve: no gang starves behind a stream of smaller jobs. The job at the head of each
// queue that has waited the configuration's starvationSeconds, and still does not fit,
// gets the nodes it needs held for it: for the rest of the session no other job's tasks
// go there, so the room its tasks there release is left for it. Durations are not known
// to the engine, so nothing backfills onto held nodes. Held nodes are chosen again each
// session by the same rule (the fewest running tasks to wait for); since they take no
// new work, they are the ones chosen again until the job fits. A gang that must stay
// inside one topology domain gets its nodes in one domain: the one where it waits for the
// fewest tasks (its own domain when some of its tasks run already).
#include <algorithm>
#include <map>

#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"
#include "engine/actions/victims.h"
#include "engine/statement.h"

namespace gantry {
namespace {

constexpr size_t kNodesNamed = 5;  // in the job's reason; the rest are counted

class ReserveAction : public Action {
 public:
  std::string_view name() const override { return "reserve"; }

  void Execute(Session& session) const override {
    const int64_t starvation = session.config().starvation_s;
    if (starvation <= 0) return;
    // Jobs not started yet (their gang minimum short), in each queue's job order.
    const auto jobs = JobsByQueue(session, [&](JobId j) {
      return session.job(j).inqueue && !session.JobReady(j) && !session.JobPipelined(j);
    });
    for (QueueId q = 0; q < jobs.size(); ++q) {
      if (jobs[q].empty()) continue;
      const JobId head = jobs[q].front();
      // A queue that has its deserved share waits fairly, not from starvation.
      if (session.WaitedSeconds(head) < starvation || session.QueueOverused(q, nullptr)) continue;
      if (AllocateJob(session, head, JobStep::kOneTurn).placed > 0) continue;
      Reserve(session, head, starvation);
    }
  }

 private:
  // The running tasks of other jobs, by node, each node's in victim order (the order in
  // which they would be waited for), leaving out nodes held for another job.
  static std::map<NodeId, std::vector<TaskId>> RunningByNode(const Session& s, JobId job) {
    const ClusterState& c = s.cluster();
    std::map<NodeId, std::vector<TaskId>> by_node;
    for (JobId j = 0; j < c.jobs().size(); ++j) {
      if (j == job || c.job(j).running == 0) continue;
      for (TaskId t : c.job(j).tasks) {
        if (s.task_status(t) != TaskStatus::kRunning) continue;
        const JobId holder = s.ReservedFor(c.task(t).node);
        if (holder == kNone || holder == job) by_node[c.task(t).node].push_back(t);
      }
    }
    for (auto& [node, tasks] : by_node) {
      std::sort(tasks.begin(), tasks.end(),
                [&](TaskId a, TaskId b) { return VictimGoesFirst(c, a, b); });
    }
    return by_node;
  }

  // Takes `task`'s room in the statement, on the nodes of `scope` (null: any): free room,
  // else room being released, else on the node where the fewest running tasks must end for
  // it (they are evicted in the statement, which the caller rolls back: a reservation
  // evicts nothing), the lower node id among equals. Returns the node, kNone when it fits
  // nowhere even then; *waits counts the tasks it waits for.
  static NodeId TakeRoom(Session& s, Statement& st, TaskId task,
                         const std::map<NodeId, std::vector<TaskId>>& running,
                         const std::vector<NodeId>* scope, int32_t* waits) {
    Placement placement;
    std::string why_not;
    for (bool future : {false, true}) {
      if (s.FindPlacement(task, SearchScope{scope, future}, &placement, &why_not)) {
        const NodeId node = placement.node;
        Status taken = future ? st.Pipeline(task, std::move(placement))
                              : st.Allocate(task, std::move(placement));
        return taken.ok() ? node : kNone;
      }
    }
    NodeId best = kNone;
    size_t fewest = SIZE_MAX;
    for (const auto& [node, tasks] : running) {
      if (scope != nullptr && !std::binary_search(scope->begin(), scope->end(), node)) continue;
      const size_t checkpoint = st.Checkpoint();
      const std::vector<NodeId> only = {node};
      size_t ended = 0;
      for (TaskId t : tasks) {
        if (ended + 1 >= fewest) break;
        if (s.task_status(t) != TaskStatus::kRunning || !st.Evict(t, "reserve").ok()) continue;
        ++ended;
        if (s.FindPlacement(task, SearchScope{&only, true}, &placement, &why_not)) {
          best = node, fewest = ended;
          break;
        }
      }
      st.Rollback(checkpoint);
    }
    if (best == kNone) return kNone;
    const std::vector<NodeId> only = {best};
    size_t ended = 0;
    for (TaskId t : running.at(best)) {
      if (ended == fewest) break;
      if (s.task_status(t) == TaskStatus::kRunning && st.Evict(t, "reserve").ok()) ++ended;
    }
    if (!s.FindPlacement(task, SearchScope{&only, true}, &placement, &why_not) ||
        !st.Pipeline(task, std::move(placement)).ok()) {
      return kNone;
    }
    *waits += static_cast<int32_t>(fewest);
    return best;
  }

  // The nodes the job would hold, on the nodes of `scope` (null: any).
  struct Plan {
    bool fits = false;
    int32_t waits = 0;  // running tasks to wait for
    std::vector<NodeId> nodes;
    TaskId failed = kNone;  // the task that fits nowhere even then
  };
  static Plan MakePlan(Session& s, JobId job, const std::map<NodeId, std::vector<TaskId>>& running,
                       const std::vector<NodeId>* scope) {
    Plan plan;
    Statement st = s.NewStatement();
    const std::vector<TaskId> unplaced = s.job(job).unplaced;
    for (TaskId task : unplaced) {
      if (s.JobPipelined(job)) break;
      const NodeId node = TakeRoom(s, st, task, running, scope, &plan.waits);
      if (node == kNone) {
        plan.failed = task;
        break;
      }
      if (std::find(plan.nodes.begin(), plan.nodes.end(), node) == plan.nodes.end()) {
        plan.nodes.push_back(node);
      }
    }
    plan.fits = s.JobPipelined(job);
    st.Discard();  // a reservation evicts and places nothing
    return plan;
  }

  // A gang that must stay inside one domain: the plan of the domain where it waits for the
  // fewest tasks (its own when some of its tasks run or are placed), *domain its name.
  static Plan PlanInOneDomain(Session& s, JobId job,
                              const std::map<NodeId, std::vector<TaskId>>& running,
                              std::string* domain) {
    const ClusterState& c = s.cluster();
    const int level = s.topology().LevelOf(c.job(job).topology.level);
    if (level < 0) return {};
    std::vector<const TopologyDomain*> candidates;
    for (TaskId t : c.job(job).tasks) {
      const NodeId node = s.state().placement_of(t).node;
      if (node == kNone) continue;
      if (const TopologyDomain* d = s.topology().DomainOfNode(level, node)) candidates = {d};
      break;
    }
    if (candidates.empty()) {
      for (const TopologyDomain& d : s.topology().At(level)) candidates.push_back(&d);
    }
    Plan best;
    for (const TopologyDomain* d : candidates) {
      Plan plan = MakePlan(s, job, running, &d->nodes);
      if (!plan.fits || (best.fits && plan.waits >= best.waits)) {
        if (!best.fits && best.failed == kNone) best.failed = plan.failed;
        continue;
      }
      best = std::move(plan);
      *domain = d->name;
    }
    return best;
  }

  static void Reserve(Session& s, JobId job, int64_t starvation) {
    const ClusterState& c = s.cluster();
    const auto running = RunningByNode(s, job);
    const TopologyRequest& topology = c.job(job).topology;
    std::string domain;
    const Plan plan = topology.required ? PlanInOneDomain(s, job, running, &domain)
                                        : MakePlan(s, job, running, nullptr);
    const bool fits = plan.fits;
    const int32_t waits = plan.waits;
    std::vector<NodeId> nodes = plan.nodes;
    const TaskId failed = plan.failed;
    std::string text = "waited " + std::to_string(s.WaitedSeconds(job)) +
                       " s at the head of its queue (starvationSeconds " +
                       std::to_string(starvation) + "): ";
    if (!fits) {
      text += "no reservation: it would not fit even once every other job's tasks ended";
      if (topology.required) text += " inside one " + topology.level + " domain";
      if (failed != kNone) text += " (task " + c.task(failed).name + ")";
    } else {
      std::sort(nodes.begin(), nodes.end());
      for (NodeId n : nodes) s.Reserve(n, job);
      text += "reserved node(s) ";
      for (size_t i = 0; i < std::min(nodes.size(), kNodesNamed); ++i) {
        text += (i ? ", " : "") + c.node(nodes[i]).name;
      }
      if (nodes.size() > kNodesNamed) {
        text += " and " + std::to_string(nodes.size() - kNodesNamed) + " more";
      }
      if (!domain.empty()) text += " in " + topology.level + " " + domain;
      text += " for it, which take no other job's tasks until it fits, once " +
              std::to_string(waits) + " running task(s) there end";
    }
    s.NoteReservation(job, std::move(text));
  }
};

}  // namespace

std::unique_ptr<Action> NewReserveAction() {
  return std::make_unique<ReserveAction>();
}

}  // namespace gantry
