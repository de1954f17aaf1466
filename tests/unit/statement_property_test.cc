// A property test of statements: on random clusters (some tasks running, some pending),
// thousands of random sequences of Allocate, Pipeline, Evict, refused operations, Commit
// and Rollback to random checkpoints, checking after every step:
//   - no node over its allocatable in the free, idle or future view, no device over its
//     share or memory;
//   - every amount equals a recomputation from scratch (the cluster plus the operations
//     still applied): node rows, devices and pod counts in the three views, the node
//     index, each job's and queue's allocated, pipelined and releasing, each task's status;
//   - a rollback leaves the working state exactly as it was at that checkpoint;
//   - a "fits nowhere" answer is true (no node takes the task), whatever came and went;
// and at the end of each sequence, after Discard, that every pending task is placed
// exactly as a fresh session places it (the caches kept right both ways).
// A failure prints its seed; rerun one with GANTRY_STATEMENT_SEED=N.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/session.h"
#include "engine/statement.h"
#include "tests/unit/random_cluster.h"
#include "tests/unit/test_util.h"
#include "tests/unit/working_state_text.h"

namespace gantry {
namespace {

enum class Kind { kAllocate, kPipeline, kEvict };
struct AppliedOp {
  Kind kind;
  TaskId task;
  Placement placement;
};

// The tables and amounts recomputed from the cluster and the operations applied, with
// none of the engine's code: start from each node's allocatable minus what runs there.
class Recomputed {
 public:
  Recomputed(const ClusterState& c, const std::vector<AppliedOp>& ops) : c_(c) {
    idle_.resize(c.nodes().size());
    for (NodeId n = 0; n < c.nodes().size(); ++n) {
      const Node& node = c.node(n);
      NodeRoom& room = idle_[n];
      room.resources = node.allocatable;
      room.resources.Subtract(node.used);
      room.tasks = node.task_count;
      for (const GpuDevice& g : node.gpus) {
        room.milli.push_back(g.free_milli());
        room.memory.push_back(g.memory_mib - g.used_memory_mib);
      }
    }
    future_ = idle_;
    for (JobId j = 0; j < c.jobs().size(); ++j) {
      JobAmounts& a = jobs_[j];
      a.allocated = c.job(j).allocated;
      a.ready = c.job(j).running;
    }
    for (const AppliedOp& op : ops) {
      const ResourceVector accounted = ClusterState::Accounted(
          c.spec_of(op.task), static_cast<int32_t>(op.placement.gpus.devices.size()),
          op.placement.gpus.milli_each);
      JobAmounts& a = jobs_[c.task(op.task).job];
      switch (op.kind) {
        case Kind::kAllocate:
          Take(&idle_[op.placement.node], accounted, op.placement, +1);
          Take(&future_[op.placement.node], accounted, op.placement, +1);
          a.allocated.Add(accounted);
          a.ready++;
          status_[op.task] = TaskStatus::kAllocated;
          break;
        case Kind::kPipeline:
          Take(&future_[op.placement.node], accounted, op.placement, +1);
          a.pipelined.Add(accounted);
          status_[op.task] = TaskStatus::kPipelined;
          break;
        case Kind::kEvict:
          Take(&future_[op.placement.node], accounted, op.placement, -1);
          a.allocated.Subtract(accounted);
          a.releasing.Add(accounted);
          a.ready--;
          status_[op.task] = TaskStatus::kReleasing;
          break;
      }
    }
  }

  // Compares with the session; returns the first difference, or "".
  std::string Diff(const Session& s) const {
    const WorkingState& w = s.state();
    for (NodeId n = 0; n < c_.nodes().size(); ++n) {
      if (c_.node(n).removed) continue;
      const std::string node = "node " + c_.node(n).name;
      NodeRoom free = idle_[n];
      for (const auto& e : future_[n].resources.entries()) {
        free.resources.Set(e.id, std::min(free.resources.Get(e.id), e.amount));
      }
      for (const auto& e : idle_[n].resources.entries()) {
        free.resources.Set(e.id, std::min(e.amount, future_[n].resources.Get(e.id)));
      }
      free.tasks = std::max(idle_[n].tasks, future_[n].tasks);
      for (size_t d = 0; d < free.milli.size(); ++d) {
        free.milli[d] = std::min(idle_[n].milli[d], future_[n].milli[d]);
        free.memory[d] = std::min(idle_[n].memory[d], future_[n].memory[d]);
      }
      const NodeRoom& free_room = free;
      for (auto [name, table, room] : {std::tuple{"free", &w.free_table(), &free_room},
                                       std::tuple{"idle", &w.idle_table(), &idle_[n]},
                                       std::tuple{"future", &w.future_table(), &future_[n]}}) {
        const std::string where = node + " (" + name + ")";
        const NodeWork& nw = table->nodes[n];
        for (ResourceId r = 0; r < table->resource_count; ++r) {
          const Milli have = table->free[n * table->resource_count + r];
          if (have != room->resources.Get(r)) {
            return where + ": " + ResourceName(r) + " " + std::to_string(have) + ", recomputed " +
                   std::to_string(room->resources.Get(r));
          }
          if (have < 0 && c_.node(n).allocatable.Get(r) > 0)
            return where + ": over its allocatable";
        }
        if (nw.tasks != room->tasks) return where + ": tasks " + std::to_string(nw.tasks);
        int32_t whole = 0, partial = 0;
        for (int32_t d = 0; d < nw.gpu_count; ++d) {
          const auto slot = static_cast<size_t>(nw.gpu_begin + d);
          const int32_t milli = table->gpu_free_milli[slot];
          if (milli != room->milli[static_cast<size_t>(d)] ||
              table->gpu_free_memory[slot] != room->memory[static_cast<size_t>(d)]) {
            return where + ": device " + std::to_string(d) + " free " + std::to_string(milli);
          }
          // A device of unknown memory (0) is not sized by memory: what its tasks ask is
          // counted, and goes below zero.
          const bool sized = c_.node(n).gpus[static_cast<size_t>(d)].memory_mib > 0;
          if (milli < 0 || (sized && room->memory[static_cast<size_t>(d)] < 0)) {
            return where + ": device " + std::to_string(d) + " over its share or memory";
          }
          whole += milli == kGpuMilliWhole;
          partial += milli > 0 && milli < kGpuMilliWhole;
        }
        if (nw.whole_free != whole || nw.partial_count != partial) return where + ": device counts";
      }
      const NodeWork& nw = w.free_table().nodes[n];
      if (nw.gpu_count > 0) {
        const auto& bucket = w.index().with_whole_free(nw.whole_free);
        if (std::find(bucket.begin(), bucket.end(), n) == bucket.end() ||
            w.index().is_partial(n) != (nw.partial_count > 0)) {
          return node + ": not in the index bucket of its free room";
        }
      }
    }
    for (const auto& [j, a] : jobs_) {
      const JobWork have = s.state().CopyOfJob(j);  // an untouched job: as the cluster has it
      const std::string where = "job " + c_.job(j).name;
      if (have.allocated != a.allocated) return where + ": allocated " + have.allocated.ToString();
      if (have.pipelined != a.pipelined) return where + ": pipelined " + have.pipelined.ToString();
      if (have.releasing != a.releasing) return where + ": releasing " + have.releasing.ToString();
      if (have.ready != a.ready) return where + ": ready " + std::to_string(have.ready);
    }
    for (QueueId q = 0; q < c_.queues().size(); ++q) {
      ResourceVector allocated = c_.queue(q).allocated, pipelined, releasing;
      for (const auto& [j, a] : jobs_) {
        if (c_.job(j).queue != q) continue;
        allocated.Add(a.allocated);
        allocated.Subtract(c_.job(j).allocated);
        pipelined.Add(a.pipelined);
        releasing.Add(a.releasing);
      }
      const QueueWork& have = s.queue(q);
      if (have.allocated != allocated || have.pipelined != pipelined || have.releasing != releasing)
        return "queue " + c_.queue(q).name + ": amounts";
    }
    for (TaskId t = 0; t < c_.tasks().size(); ++t) {
      auto it = status_.find(t);
      TaskStatus want = it != status_.end()                       ? it->second
                        : c_.task(t).state == TaskState::kRunning ? TaskStatus::kRunning
                        : c_.task(t).state == TaskState::kPending ? TaskStatus::kPending
                                                                  : TaskStatus::kDone;
      if (s.task_status(t) != want) {
        return "task " + c_.task(t).name + ": " + std::string(TaskStatusName(s.task_status(t)));
      }
    }
    return "";
  }

 private:
  struct NodeRoom {
    ResourceVector resources;
    int32_t tasks = 0;
    std::vector<int32_t> milli;
    std::vector<int64_t> memory;
  };
  struct JobAmounts {
    ResourceVector allocated, pipelined, releasing;
    int32_t ready = 0;
  };
  static void Take(NodeRoom* room, const ResourceVector& accounted, const Placement& p, int sign) {
    if (sign > 0) {
      room->resources.Subtract(accounted);
    } else {
      room->resources.Add(accounted);
    }
    room->tasks += sign;
    for (int32_t d : p.gpus.devices) {
      room->milli[static_cast<size_t>(d)] -= sign * p.gpus.milli_each;
      room->memory[static_cast<size_t>(d)] -= sign * p.gpus.memory_each;
    }
  }

  const ClusterState& c_;
  std::vector<NodeRoom> idle_, future_;
  std::map<JobId, JobAmounts> jobs_;
  std::map<TaskId, TaskStatus> status_;
};

// Whether some live node takes the task now (every predicate, and devices for it).
bool FitsSomewhere(Session& s, TaskId task) {
  const SpecId spec_id = s.cluster().task(task).spec;
  const TaskSpec& spec = s.cluster().spec(spec_id);
  for (NodeId n = 0; n < s.cluster().nodes().size(); ++n) {
    if (s.free_node(n).removed || !s.Filter(spec, spec_id, n).ok()) continue;
    GpuChoice choice;
    if (ChooseGpus(spec.gpu, s.free_gpus(n), GpuPacking::kTight, &choice)) return true;
  }
  return false;
}

template <typename Pred>
TaskId PickTask(Generator& gen, const ClusterState& c, Pred wanted) {
  std::vector<TaskId> tasks;
  for (TaskId t = 0; t < c.tasks().size(); ++t) {
    if (wanted(t)) tasks.push_back(t);
  }
  if (tasks.empty()) return kNone;
  return tasks[static_cast<size_t>(gen.Between(0, static_cast<int64_t>(tasks.size()) - 1))];
}

std::string PlacementText(Session& s, TaskId t) {
  Placement p;
  std::string why;
  if (!s.FindPlacement(t, &p, &why)) return "none: " + why;
  std::string out = std::to_string(p.node) + ":";
  for (int32_t d : p.gpus.devices) out += std::to_string(d) + ",";
  return out + "x" + std::to_string(p.gpus.milli_each);
}

void RunSeed(uint64_t seed, int sequences, int steps) {
  const std::string where = "seed " + std::to_string(seed);
  SCOPED_TRACE(where + " (rerun with GANTRY_STATEMENT_SEED=" + std::to_string(seed) + ")");
  Generator gen(seed);
  ClusterState c;
  gen.MakeCluster(&c);
  gen.AddJobs(&c, gen.Between(2, 10));
  SchedulerConfig config = gen.MakeConfig();
  config.tie_break = SchedulerConfig::TieBreak::kLowest;  // no random draws: comparable
  config.actions = {"allocate"};
  WorkloadProfile profile;
  for (const TaskSpec& spec : c.specs())
    profile.types.push_back(TaskType{spec.requests, spec.gpu, 1});
  profile.total = static_cast<int64_t>(profile.types.size());
  c.SetWorkloadProfile(profile);
  // The random policy draws from the session's generator: no two sessions place alike.
  const bool random_scores = std::any_of(config.plugins.begin(), config.plugins.end(),
                                         [](const PluginConfig& p) { return p.name == "random"; });
  // A search that stops after a few feasible nodes depends on the order of nodes with equal
  // room, which a rollback need not restore (WorkingState::Allocate): compare only
  // searches that see every feasible node.
  const bool order_matters =
      config.nodes_to_score > 0 && config.nodes_to_score < static_cast<int32_t>(c.nodes().size());
  const Policy policy = MustCompile(config);
  {  // Some tasks run: a first session's binds.
    Snapshot snapshot(c);
    for (const BindDecision& b : Session(snapshot, policy).Run().binds) {
      ASSERT_TRUE(c.Place(b.task, b.node, b.gpus).ok());
    }
  }
  gen.AddJobs(&c, gen.Between(1, 8));  // and some wait
  profile.types.clear();
  for (const TaskSpec& spec : c.specs())
    profile.types.push_back(TaskType{spec.requests, spec.gpu, 1});
  profile.total = static_cast<int64_t>(profile.types.size());
  c.SetWorkloadProfile(profile);
  config.actions.clear();
  const Policy no_actions = MustCompile(config);
  Snapshot snapshot(c);
  std::vector<std::string> fresh;  // each pending task's placement in a fresh session
  {
    Session s(snapshot, no_actions);
    for (TaskId t = 0; t < c.tasks().size(); ++t) {
      if (c.task(t).state == TaskState::kPending) fresh.push_back(PlacementText(s, t));
    }
  }
  for (int sequence = 0; sequence < sequences; ++sequence) {
    Session s(snapshot, no_actions);
    const std::string initial = WorkingStateText(s);
    Statement st = s.NewStatement();
    std::vector<AppliedOp> ops;               // what the statement holds, oldest first
    std::vector<AppliedOp> committed;         // what earlier commits applied
    std::vector<std::string> at = {initial};  // the state at each checkpoint
    for (int step = 0; step < steps; ++step) {
      const std::string here =
          where + " sequence " + std::to_string(sequence) + " step " + std::to_string(step);
      const int64_t choice = gen.Between(0, 9);
      auto pending = [&](TaskId t) { return s.task_status(t) == TaskStatus::kPending; };
      if (choice <= 2) {  // allocate where the search says
        const TaskId t = PickTask(gen, c, pending);
        Placement p;
        std::string why;
        if (t != kNone && s.FindPlacement(t, &p, &why)) {
          const Status allocated = st.Allocate(t, p);
          ASSERT_TRUE(allocated.ok()) << here << ": " << allocated.message();
          ops.push_back({Kind::kAllocate, t, p});
        } else if (t != kNone) {
          ASSERT_FALSE(FitsSomewhere(s, t)) << here << ": \"fits nowhere\" is wrong: " << why;
        }
      } else if (choice <= 4) {  // pipeline onto room being released
        const TaskId t = PickTask(gen, c, pending);
        SearchScope future;
        future.future = true;
        Placement p;
        std::string why;
        if (t != kNone && s.FindPlacement(t, future, &p, &why)) {
          ASSERT_TRUE(st.Pipeline(t, p).ok()) << here;
          ops.push_back({Kind::kPipeline, t, p});
        }
      } else if (choice <= 6) {  // evict
        const TaskId t =
            PickTask(gen, c, [&](TaskId x) { return s.task_status(x) == TaskStatus::kRunning; });
        if (t != kNone) {
          ASSERT_TRUE(st.Evict(t, "test").ok()) << here;
          ops.push_back({Kind::kEvict, t, s.state().placement_of(t)});
        }
      } else if (choice == 7) {  // an arbitrary placement: refused unless it fits
        const TaskId t = PickTask(gen, c, [](TaskId) { return true; });
        Placement p;
        p.node = static_cast<NodeId>(gen.Between(0, static_cast<int64_t>(c.nodes().size()) - 1));
        const int32_t gpus = static_cast<int32_t>(c.node(p.node).gpus.size());
        const TaskSpec& spec = c.spec_of(t);
        if (spec.gpu.wants_gpu() && gpus > 0) {
          const int32_t count = spec.gpu.shared() ? 1 : spec.gpu.count;
          for (int32_t k = 0; k < count; ++k)
            p.gpus.devices.push_back(static_cast<int32_t>(gen.Between(0, gpus - 1)));
          p.gpus.milli_each =
              spec.gpu.shared() ? std::max<int32_t>(spec.gpu.milli, 1) : kGpuMilliWhole;
          p.gpus.memory_each = spec.gpu.memory_mib;
        }
        const bool into_future = gen.OneIn(2);
        const std::string before = WorkingStateText(s);
        const Status done = into_future ? st.Pipeline(t, p) : st.Allocate(t, p);
        if (done.ok()) {
          ops.push_back({into_future ? Kind::kPipeline : Kind::kAllocate, t, p});
        } else {
          ASSERT_EQ(WorkingStateText(s), before)
              << here << ": refused but changed: " << done.message();
        }
      } else if (choice == 8 && !ops.empty()) {  // roll back to a random checkpoint
        const size_t cp = static_cast<size_t>(gen.Between(0, static_cast<int64_t>(ops.size())));
        st.Rollback(cp);
        ops.resize(cp);
        ASSERT_EQ(WorkingStateText(s), at[cp]) << here << ": rollback to " << cp;
      } else if (choice == 9 && gen.OneIn(4)) {
        st.Commit();
        committed.insert(committed.end(), ops.begin(), ops.end());
        ops.clear();
      }
      at.resize(ops.size() + 1);
      at[ops.size()] = WorkingStateText(s);
      std::vector<AppliedOp> all = committed;
      all.insert(all.end(), ops.begin(), ops.end());
      const std::string diff = Recomputed(c, all).Diff(s);
      ASSERT_EQ(diff, "") << here;
    }
    if (!committed.empty() || random_scores || order_matters) continue;  // not comparable
    st.Discard();
    ASSERT_EQ(WorkingStateText(s), initial) << where << " sequence " << sequence;
    size_t k = 0;
    for (TaskId t = 0; t < c.tasks().size(); ++t) {
      if (c.task(t).state != TaskState::kPending) continue;
      ASSERT_EQ(PlacementText(s, t), fresh[k++])
          << where << " sequence " << sequence << ": task " << c.task(t).name
          << " is placed otherwise than by a fresh session";
    }
  }
}

TEST(StatementPropertyTest, RandomOperationsAndRollbacksKeepTheWorkingStateExact) {
  // 20 sequences of 40 steps per seed.
  ForEachSeed("GANTRY_STATEMENT_SEED", 200, 20, [](uint64_t seed) { RunSeed(seed, 20, 40); });
}

}  // namespace
}  // namespace gantry
