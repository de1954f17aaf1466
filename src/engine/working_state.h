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

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decisions.h"
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
  std::string reason;                     // why it is (still) pending
  PendingHold hold = PendingHold::kNone;  // what holds it, when not a lack of room
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

  // ---- Room on nodes. A search for a placement reads the room it searches: the `free`
  // table, or during a search for a pipelined placement the `future` one. Every reader that
  // depends on which says so by its name (searched_*); only PlacementSearch switches it
  // (FutureSearch), and no change is made meanwhile. Read in every search's inner loop, so
  // the table searched is a member, not behind a pointer: FutureSearch swaps it in.
  const NodeWork& searched_node(NodeId id) const { return shown_.nodes[id]; }
  uint32_t resource_count() const { return shown_.resource_count; }
  const Milli* searched_free_row(NodeId id) const {
    return shown_.free.data() + static_cast<size_t>(id) * shown_.resource_count;
  }
  Milli searched_free(NodeId id, ResourceId r) const {
    return r < shown_.resource_count ? searched_free_row(id)[r] : 0;
  }
  std::span<const int32_t> searched_gpu_free_milli(NodeId id) const {
    const NodeWork& w = shown_.nodes[id];
    return std::span<const int32_t>(shown_.gpu_free_milli)
        .subspan(static_cast<size_t>(w.gpu_begin), static_cast<size_t>(w.gpu_count));
  }
  std::span<const int64_t> searched_gpu_free_memory(NodeId id) const {
    const NodeWork& w = shown_.nodes[id];
    return std::span<const int64_t>(shown_.gpu_free_memory)
        .subspan(static_cast<size_t>(w.gpu_begin), static_cast<size_t>(w.gpu_count));
  }
  // A node's devices with their searched free share and memory.
  NodeGpus searched_gpus(NodeId id) const {
    return GpusIn(shown_.nodes[id], searched_gpu_free_milli(id), searched_gpu_free_memory(id), id);
  }
  // Whether the search running now is one for a pipelined placement.
  bool searching_future() const { return searching_future_; }
  Milli allocatable(NodeId id, ResourceId r) const {
    return r < shown_.resource_count
               ? allocatable_[static_cast<size_t>(id) * shown_.resource_count + r]
               : 0;
  }
  // Nodes by free whole GPUs, in the `free` table (the one allocation searches).
  const NodeIndex& index() const { return index_; }
  // Whatever is searched: each of the three tables (all one until the first eviction or
  // pipeline), and what is free, idle now and free in the future on one node.
  const NodeTable& free_table() const { return searching_future_ ? *future_ : shown_; }
  const NodeTable& idle_table() const { return now_ ? *now_ : free_table(); }
  const NodeTable& future_table() const {
    return searching_future_ ? shown_ : (future_ ? *future_ : shown_);
  }
  Milli free_now(NodeId id, ResourceId r) const { return Read(free_table(), id, r); }
  NodeGpus free_gpus(NodeId id) const;
  Milli idle(NodeId id, ResourceId r) const { return Read(idle_table(), id, r); }
  Milli future_free(NodeId id, ResourceId r) const { return Read(future_table(), id, r); }

  // While one made with `future` lives, the searched_* readers read the `future` table.
  // Only the placement search makes one, around a search for a pipelined placement.
  class FutureSearch {
   public:
    ~FutureSearch() {
      if (future_) state_->SearchFuture(false);
    }
    FutureSearch(const FutureSearch&) = delete;
    FutureSearch& operator=(const FutureSearch&) = delete;

   private:
    friend class PlacementSearch;
    FutureSearch(WorkingState* state, bool future) : state_(state), future_(future) {
      if (future_) state_->SearchFuture(true);
    }
    WorkingState* state_;
    bool future_;
  };

  // ---- Jobs, tasks and queues. Every task has a state, running or pending. A job has an
  // entry once the session needs one: every job pending as the session opens, and a job
  // whose task a change touches or that gets a note (EnterJob: made then, from the
  // cluster). Readers of a job the session may not have touched (a victim's) read
  // ready_tasks, which falls back to the cluster.
  // REQUIRES: the job has an entry (checked: otherwise the process stops, naming the job).
  // Inline, and one probe and one load on a hit: job order comparisons ask for it. Orders
  // ask for two jobs in turn (a, b, a, b), actions for one many times in a row: the two
  // most recent lookups are kept (a cache of where entries are; it changes none).
  const JobWork& job(JobId id) const {
    if (id == recent_job_[0]) return *recent_work_[0];
    if (id != recent_job_[1]) {
      const uint32_t slot = job_slots_.Find(id);
      if (slot == IdSlots::kAbsent) NoJobEntry(id);
      recent_work_[1] = job_at_[slot];
      recent_job_[1] = id;
    }
    std::swap(recent_job_[0], recent_job_[1]);
    std::swap(recent_work_[0], recent_work_[1]);
    return *recent_work_[0];
  }
  // The job's ready tasks (running, not releasing, plus allocated): its entry's, or the
  // cluster's running count for a job the session has not touched.
  int32_t ready_tasks(JobId id) const {
    const uint32_t slot = job_slots_.Find(id);
    return slot != IdSlots::kAbsent ? job_at_[slot]->ready : cluster_.job(id).running;
  }
  // A copy of the job's entry, or of the entry it would get now if it has none (for tests
  // and messages that look at every job; not fast).
  JobWork CopyOfJob(JobId id) const {
    const uint32_t slot = job_slots_.Find(id);
    return slot != IdSlots::kAbsent ? *job_at_[slot] : MakeJobWork(id);
  }
  TaskStatus task_status(TaskId id) const;
  // Where an allocated, pipelined, running or releasing task is; node kNone otherwise.
  Placement placement_of(TaskId id) const;
  const QueueWork& queue(QueueId id) const { return queues_[id]; }
  // Jobs with pending tasks when the session opened, in id order.
  const std::vector<JobId>& pending_jobs() const { return pending_jobs_; }

  // ---- Reservations against starvation (the reserve action): a node held for a job
  // takes no other job's tasks for the rest of the session.
  JobId ReservedFor(NodeId node) const { return reserved_.empty() ? kNone : reserved_[node]; }
  bool HasReservations() const { return !reserved_.empty(); }
  // REQUIRES: the node is not held for another job.
  void Reserve(NodeId node, JobId job);

  // ---- The session's notes on a job (never its amounts: those change by the changes
  // below). Each makes the job's entry when it has none.
  void SetJobReason(JobId job, std::string reason) { EnterJob(job).reason = std::move(reason); }
  void SetJobHold(JobId job, PendingHold hold) { EnterJob(job).hold = hold; }
  void AdmitJob(JobId job) { EnterJob(job).inqueue = true; }
  void MarkJobAttempted(JobId job) { EnterJob(job).attempted = true; }
  // Allocate passed the job over because its queue had its deserved share.
  void MarkJobSkippedOverused(JobId job, std::string reason);
  // Orders the job's unplaced tasks (the session does, by the plugins' task order).
  template <typename Less>
  void SortUnplaced(JobId job, Less less) {
    std::vector<TaskId>& unplaced = EnterJob(job).unplaced;
    std::stable_sort(unplaced.begin(), unplaced.end(), less);
  }
  // Takes the tasks that are no longer pending out of the job's unplaced list (a
  // statement's commit does, once per job placed).
  void DropPlaced(JobId job);

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
  NodeGpus GpusIn(const NodeWork& work, std::span<const int32_t> free_milli,
                  std::span<const int64_t> free_memory, NodeId id) const {
    // The devices' static properties live in the Node, far from the session's arrays:
    // where they are is looked up once per node (devices_of_).
    const GpuDevice*& devices = devices_of_[id];
    if (devices == nullptr) devices = cluster_.node(id).gpus.data();
    return NodeGpus{std::span<const GpuDevice>(devices, static_cast<size_t>(work.gpu_count)),
                    free_milli, free_memory, work.one_nvlink_domain};
  }
  // The job's entry, made from the cluster when it has none yet. Inline for the two most
  // recent lookups (job()'s cache): the actions write notes on the job they just read.
  JobWork& EnterJob(JobId id) {
    if (id == recent_job_[0]) return *recent_work_[0];
    if (id == recent_job_[1]) return *recent_work_[1];
    return EnterJobLookedUp(id);
  }
  // EnterJob past the cache: finds or makes the entry, and keeps it as the most recent.
  JobWork& EnterJobLookedUp(JobId id);
  JobWork MakeJobWork(JobId id) const;
  [[noreturn]] void NoJobEntry(JobId id) const;
  TaskWork& MutableTask(TaskId id);
  // Makes the idle and future tables (copies of free) on first need.
  NodeTable& Future();
  // Swaps the future table into shown_ (true) or back (false).
  void SearchFuture(bool search);
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
  // The `free` table, or while a FutureSearch lives the `future` one (swapped with future_).
  NodeTable shown_;
  const Milli* allocatable_;        // the table's (shared by the three views), one load away
  std::unique_ptr<NodeTable> now_;  // idle; null until the first eviction or pipeline
  std::unique_ptr<NodeTable> future_;
  bool searching_future_ = false;
  NodeIndex index_;
  // Entries only for the jobs and tasks used so far; stable, so that references to an
  // entry stay valid as others are made.
  StableVector<JobWork> jobs_;
  std::vector<JobWork*> job_at_;  // by slot: the entries, one load away
  IdSlots job_slots_;
  // The two most recent lookups (job(), EnterJob), most recent first: where entries are,
  // not entries (job() is const and changes no entry; it moves these).
  mutable JobId recent_job_[2] = {kNone, kNone};
  mutable JobWork* recent_work_[2] = {nullptr, nullptr};
  StableVector<TaskWork> tasks_;
  std::vector<TaskWork*> task_at_;  // by slot
  IdSlots task_slots_;
  std::vector<QueueWork> queues_;
  std::vector<JobId> pending_jobs_;
  std::vector<JobId> reserved_;  // by node once some node is held; empty until then
  // Per node, where its devices are in the cluster, once looked up: a cache of addresses.
  mutable std::vector<const GpuDevice*> devices_of_;
};

}  // namespace gantry
