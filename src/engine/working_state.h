// The working state of one session: everything a scheduling cycle can touch (every node,
// queue, job and task, running or pending), as the cycle has changed it so far. The
// ClusterState the session opened on is never changed; Statements change this copy, and
// undo their changes exactly.
//
// Room on a node is seen three ways (DESIGN.md, "Working state"):
//   idle    what is free now (a releasing task still holds its room until it ends);
//   future  what will be free once the releasing tasks end, less what is pipelined onto it;
//   free    what a task may be allocated now: the smaller of the two, so that an
//           allocation never takes room a pipelined task was promised.
// Until the session's first eviction or pipelined task all three are one table; the other
// two are made then, so that a session that evicts nothing copies nothing more.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gpu_placement.h"
#include "engine/id_slots.h"
#include "engine/node_index.h"
#include "engine/node_table.h"
#include "model/cluster.h"

namespace gantry {

// A task's state in a session.
enum class TaskStatus : uint8_t {
  kPending,    // waits for a node
  kAllocated,  // placed in this session on room free now; binds when its statement commits
  kPipelined,  // placed in this session on room being released; binds once that room is free
  kRunning,    // holds room on its node
  kReleasing,  // evicted (in this session or before: terminating); holds its room until it ends
  kDone,       // finished; holds nothing
};
std::string_view TaskStatusName(TaskStatus status);

// Where a task goes (or is).
struct Placement {
  NodeId node = kNone;
  GpuChoice gpus;
};

// A job's state in the session.
struct JobWork {
  bool inqueue = false;           // admitted (by the enqueue action, or already running)
  bool skipped_overused = false;  // allocate passed it over because its queue had its share
  bool attempted = false;
  int32_t ready = 0;            // running (not releasing) plus allocated in this session
  int32_t placed = 0;           // allocated in this session
  int32_t pipelined_tasks = 0;  // pipelined in this session
  int32_t releasing_tasks = 0;  // evicted, in this session or before
  ResourceVector allocated;     // what its ready tasks hold
  ResourceVector pipelined;     // what its pipelined tasks were promised
  ResourceVector releasing;     // what its evicted tasks still hold
  // Bumped whenever an amount above changes (and when it is undone), so that a plugin
  // may keep what it derives from them, such as a share, until the next change.
  uint64_t changes = 0;
  // Pending tasks that no committed statement has placed, in task order.
  std::vector<TaskId> unplaced;
  std::string reason;  // why it is (still) pending
};

struct QueueWork {
  ResourceVector allocated;  // held by ready tasks (running, not releasing, plus allocated)
  ResourceVector pipelined;
  ResourceVector releasing;
  ResourceVector request;  // allocated at the session's start plus its jobs' pending demand
  uint64_t changes = 0;    // as JobWork::changes, for allocated, pipelined and releasing
};

class WorkingState {
 public:
  // `cached`: the cluster's node table when the caller keeps one (else built here).
  // `jobs_wait_for_admission`: pending jobs start not inqueue (the policy has enqueue).
  WorkingState(const ClusterState& cluster, const NodeTable* cached, bool jobs_wait_for_admission);
  WorkingState(const WorkingState&) = delete;
  WorkingState& operator=(const WorkingState&) = delete;

  const ClusterState& cluster() const { return cluster_; }

  // ---- Nodes, as the current view sees them: `free` by default, `future` while a
  // search for pipelined placements looks (see FutureView). Read in every search's inner
  // loop, so the table shown is a member, not behind a pointer: FutureView swaps it.
  const NodeWork& node(NodeId id) const { return shown_.nodes[id]; }
  uint32_t resource_count() const { return shown_.resource_count; }
  const Milli* free_row(NodeId id) const {
    return shown_.free.data() + static_cast<size_t>(id) * shown_.resource_count;
  }
  Milli free(NodeId id, ResourceId r) const {
    return r < shown_.resource_count ? free_row(id)[r] : 0;
  }
  Milli allocatable(NodeId id, ResourceId r) const {
    return r < shown_.resource_count
               ? allocatable_[static_cast<size_t>(id) * shown_.resource_count + r]
               : 0;
  }
  std::span<const int32_t> gpu_free_milli(NodeId id) const {
    const NodeWork& w = shown_.nodes[id];
    return std::span<const int32_t>(shown_.gpu_free_milli)
        .subspan(static_cast<size_t>(w.gpu_begin), static_cast<size_t>(w.gpu_count));
  }
  std::span<const int64_t> gpu_free_memory(NodeId id) const {
    const NodeWork& w = shown_.nodes[id];
    return std::span<const int64_t>(shown_.gpu_free_memory)
        .subspan(static_cast<size_t>(w.gpu_begin), static_cast<size_t>(w.gpu_count));
  }
  bool viewing_future() const { return viewing_future_; }
  // Nodes by free whole GPUs, in the `free` view (the one allocation searches).
  const NodeIndex& index() const { return index_; }
  // Whatever the view: each of the three tables (all one until the first eviction or
  // pipeline), and what is idle now and free in the future on one node.
  const NodeTable& free_table() const { return viewing_future_ ? *future_ : shown_; }
  const NodeTable& idle_table() const { return now_ ? *now_ : free_table(); }
  const NodeTable& future_table() const {
    return viewing_future_ ? shown_ : (future_ ? *future_ : shown_);
  }
  Milli idle(NodeId id, ResourceId r) const { return Read(idle_table(), id, r); }
  Milli future_free(NodeId id, ResourceId r) const { return Read(future_table(), id, r); }

  // While one lives, the node accessors above read the `future` table. No change may be
  // made meanwhile (a search only reads).
  class FutureView {
   public:
    explicit FutureView(WorkingState* state) : state_(state) { state_->ShowFuture(true); }
    ~FutureView() { state_->ShowFuture(false); }
    FutureView(const FutureView&) = delete;
    FutureView& operator=(const FutureView&) = delete;

   private:
    WorkingState* state_;
  };

  // ---- Jobs, tasks and queues. Every job and task has a state, running or pending; a
  // job's entry is made from the cluster on first use.
  // Inline, and one probe and one load on a hit: job order comparisons ask for it.
  // An action asks for the job it works on many times in a row: the last one is kept.
  const JobWork& job(JobId id) const {
    // Orders ask for two jobs in turn (a, b, a, b), actions for one many times: the two
    // most recent are kept.
    if (id == recent_job_[0]) return *recent_work_[0];
    if (id != recent_job_[1]) {
      const uint32_t slot = job_slots_.Find(id);
      recent_work_[1] = slot != IdSlots::kAbsent ? job_at_[slot] : &NewJob(id);
      recent_job_[1] = id;
    }
    std::swap(recent_job_[0], recent_job_[1]);
    std::swap(recent_work_[0], recent_work_[1]);
    return *recent_work_[0];
  }
  TaskStatus task_status(TaskId id) const;
  // Where an allocated, pipelined, running or releasing task is; node kNone otherwise.
  Placement placement_of(TaskId id) const;
  const QueueWork& queue(QueueId id) const { return queues_[id]; }
  // Jobs with pending tasks when the session opened, in id order.
  const std::vector<JobId>& pending_jobs() const { return pending_jobs_; }
  // For the session's notes on a job (reason, inqueue, ...), never its amounts.
  JobWork& mutable_job(JobId id) { return const_cast<JobWork&>(job(id)); }

  // Whether the task placed like this fits the node's free room (or, `future`, the room
  // it will have once releasing tasks end): every request, the pod count, and the share
  // and memory on each of the devices.
  bool Fits(TaskId task, const Placement& placement, bool future) const;

  // ---- Changes, each undone exactly by the same call with sign -1 (Statement). Exactly:
  // every amount, view and task state as before, and each node in the index bucket of
  // its room; the order of nodes inside a bucket (the order candidates of equal room are
  // visited in) is left as the moves made it, as the engine always has (see DESIGN.md).
  // REQUIRES: the task is pending (sign +1) or allocated there (-1); it fits `free`.
  void Allocate(TaskId task, const Placement& placement, int sign);
  // REQUIRES: the task is pending (+1) or pipelined there (-1); it fits `future`.
  void Pipeline(TaskId task, const Placement& placement, int sign);
  // REQUIRES: the task is running (+1) or releasing (-1).
  void Evict(TaskId task, int sign);
  // Takes (+1) or gives back (-1) room free now on the placement's node for a task that
  // stays as it is (running or releasing elsewhere): Statement::Hold.
  // REQUIRES: (+1) it fits `free`.
  void Hold(TaskId task, const Placement& placement, int sign);

 private:
  struct TaskWork {
    TaskStatus status = TaskStatus::kPending;
    Placement placement;  // allocated or pipelined: where
  };
  static Milli Read(const NodeTable& t, NodeId id, ResourceId r) {
    return r < t.resource_count ? t.free[static_cast<size_t>(id) * t.resource_count + r] : 0;
  }
  // The job's slot, its entry made from the cluster when it has none yet.
  JobWork& NewJob(JobId id) const;
  JobWork MakeJobWork(JobId id) const;
  TaskWork& MutableTask(TaskId id);
  // Makes the idle and future tables (copies of free) on first need.
  NodeTable& Future();
  // Swaps the future table into shown_ (true) or back (false).
  void ShowFuture(bool show);
  // free = min(idle, future) for one node, after either changed.
  void RecomputeFree(NodeId node);
  // After a node's free room changed: moves it to the index bucket of its room.
  void Reindex(NodeId node);
  // Takes (sign +1) or gives back room now on the placement's node, in every table.
  void TakeNow(const Placement& p, const ResourceVector& accounted, int sign);
  // What a task placed like this counts: its requests plus the GPU share.
  ResourceVector AccountedOf(TaskId task, const Placement& placement) const;
  void ChargeJob(TaskId task, ResourceVector JobWork::*field,
                 ResourceVector QueueWork::*queue_field, const ResourceVector& amount, int sign);

  const ClusterState& cluster_;
  const bool jobs_wait_for_admission_;
  // The `free` table, or while a FutureView lives the `future` one (swapped with future_).
  NodeTable shown_;
  const Milli* allocatable_;        // the table's (shared by the three views), one load away
  std::unique_ptr<NodeTable> now_;  // idle; null until the first eviction or pipeline
  std::unique_ptr<NodeTable> future_;
  bool viewing_future_ = false;
  NodeIndex index_;
  // Entries only for the jobs and tasks used so far; stable, so that references to an
  // entry stay valid as others are made.
  mutable StableVector<JobWork> jobs_;
  mutable std::vector<JobWork*> job_at_;          // by slot: the entries, one load away
  mutable JobId recent_job_[2] = {kNone, kNone};  // most recent first
  mutable JobWork* recent_work_[2] = {nullptr, nullptr};
  mutable IdSlots job_slots_;
  StableVector<TaskWork> tasks_;
  std::vector<TaskWork*> task_at_;  // by slot
  IdSlots task_slots_;
  std::vector<QueueWork> queues_;
  std::vector<JobId> pending_jobs_;
};

}  // namespace gantry
