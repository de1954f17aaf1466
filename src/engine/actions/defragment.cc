// The defragment action: a pending job that needs whole GPUs (or a whole topology domain)
// and does not fit, although the cluster's free room in total would hold it, gets a node
// (or a domain) freed by moving movable tasks elsewhere: evicted, with the job pipelined
// onto their room, when they all fit elsewhere at once, within a budget of evictions per
// hour. The eviction search is preempt's and reclaim's (place_job_evicting.h), each
// task's room made by moving (make_room.h: MakeRoomByMoving).
#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "engine/actions/actions.h"
#include "engine/actions/job_allocation.h"
#include "engine/actions/place_job_evicting.h"

namespace gantry {
namespace {

// The resources the gate below compares: GPU milli, CPU milli, memory.
constexpr ResourceId kGated[] = {kGpu, kCpu, kMemory};

// What a job needs before it is pipelined: its unplaced tasks, up to its gang minimum
// (one at least), in each of kGated.
struct Need {
  Milli amount[3] = {0, 0, 0};
  std::vector<SpecId> specs;  // of those tasks, in task order
};

// What makes two jobs' searches the same, while nothing is committed between them: the
// specs of the tasks they need, their priority and queue, their topology request.
using SearchKey = std::tuple<std::vector<SpecId>, int32_t, QueueId, std::string, bool>;

// Whether defragment is for the job (some task of its minimum asks for whole GPUs, or its
// gang must stay inside one topology domain), and what it needs.
bool NeedOf(const Session& s, JobId job, Need* need) {
  const ClusterState& c = s.cluster();
  const JobWork& work = s.job(job);
  const int32_t short_by = c.job(job).min_member - work.ready - work.pipelined_tasks;
  const size_t count = std::min(work.unplaced.size(), static_cast<size_t>(std::max(1, short_by)));
  bool whole = false;
  for (size_t i = 0; i < count; ++i) {
    const TaskSpec& spec = c.spec_of(work.unplaced[i]);
    need->specs.push_back(c.task(work.unplaced[i]).spec);
    if (spec.gpu.count >= 1) {
      whole = true;
      need->amount[0] += Milli{spec.gpu.count} * kGpuMilliWhole;
    } else if (spec.gpu.wants_gpu()) {
      need->amount[0] += c.EstimatedGpuShare(spec.gpu);
    }
    need->amount[1] += spec.requests.Get(kCpu);
    need->amount[2] += spec.requests.Get(kMemory);
  }
  return whole || c.job(job).topology.required;
}

// The free room of each of kGated over the nodes that take tasks, in the allocation view.
void FreeTotals(const Session& s, Milli (&out)[3]) {
  const ClusterState& c = s.cluster();
  for (size_t r = 0; r < 3; ++r) out[r] = 0;
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    if (c.node(n).removed || c.node(n).unschedulable) continue;
    for (size_t r = 0; r < 3; ++r) out[r] += std::max<Milli>(0, s.free_now(n, kGated[r]));
  }
}

void AddToReason(Session& s, JobId job, const std::string& text) {
  const std::string& before = s.job(job).reason;
  s.SetJobReason(job, before.empty() ? text : before + "; " + text);
}

class DefragmentAction : public Action {
 public:
  std::string_view name() const override { return "defragment"; }

  // One job at a time from the queue that goes next (queue order, then job order), as
  // allocate and reclaim take them. A job the free room in total (GPUs, CPU, memory)
  // would not hold is not fragmentation's doing: it is left to the other actions, and to
  // its reason. A search
  // that found no plan is not done again this session for a job that needs the same (see
  // SearchKey), until something is committed: a backlog of like jobs costs one search.
  void Execute(Session& s) const override {
    const int64_t budget = s.config().defragment_evictions_per_hour;
    const int64_t earlier =
        s.cluster().defragment_evictions().Since(s.options().now - kDefragmentBudgetWindowS);
    int64_t made = 0;  // this session
    auto jobs =
        JobsByQueue(s, [&](JobId j) { return s.job(j).inqueue && !s.job(j).unplaced.empty(); });
    std::vector<size_t> next(jobs.size(), 0);
    Milli free[3] = {0, 0, 0};  // of kGated: computed on first need, again after a move
    bool free_known = false;
    std::map<SearchKey, std::string> failed;  // what the job said, since the last move
    MoveCache moves;                          // since the last move
    for (QueueId q = NextQueue(s, jobs, next); q != kNone; q = NextQueue(s, jobs, next)) {
      const JobId job = jobs[q][next[q]++];
      Need need;
      if (s.JobPipelined(job) || !NeedOf(s, job, &need)) continue;
      if (!free_known) FreeTotals(s, free);
      free_known = true;
      if (need.amount[0] > free[0] || need.amount[1] > free[1] || need.amount[2] > free[2]) {
        continue;
      }
      if (earlier + made >= budget) {
        AddToReason(s, job,
                    "defragment: its budget of " + std::to_string(budget) +
                        " eviction(s) per hour is spent (" + std::to_string(earlier + made) +
                        " in the last hour)");
        continue;
      }
      const ClusterState& c = s.cluster();
      const TopologyRequest& topology = c.job(job).topology;
      SearchKey key{std::move(need.specs), c.job(job).priority, c.job(job).queue, topology.level,
                    topology.required};
      if (auto same = failed.find(key); same != failed.end()) {
        AddToReason(s, job, same->second);
        continue;
      }
      const size_t before = s.committed_evictions().size();
      const size_t reason_before = s.job(job).reason.size();
      PlaceJobEvicting(s, job, EvictionCause::kDefragment, budget - earlier - made, &moves);
      const auto moved = static_cast<int64_t>(s.committed_evictions().size() - before);
      if (moved > 0) {
        made += moved;
        free_known = false;
        failed.clear();
        moves.fits_now.clear();
        continue;
      }
      // Another job's search is the same only if this one's was whole: it had no running
      // task of its own (not a candidate), no job it may not evict, and its grace passed.
      const int64_t grace = s.config().preemption_grace_s;
      if (c.job(job).running == 0 && c.job(job).evicted_by.empty() && !c.EvictionChainFull(job) &&
          (grace == 0 || s.WaitedSeconds(job) >= grace)) {
        const std::string& reason = s.job(job).reason;
        std::string said = reason.substr(std::min(reason_before, reason.size()));
        if (said.rfind("; ", 0) == 0) said.erase(0, 2);
        failed.emplace(std::move(key), std::move(said));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewDefragmentAction() {
  return std::make_unique<DefragmentAction>();
}

}  // namespace gantry
