// A Session is one scheduling cycle: it opens on a Snapshot, runs the policy's actions
// and returns Decisions. It is split by concern, each part in its own file:
//   WorkingState     (working_state.h)    everything the cycle can touch, as changed so far;
//   PluginSet        (plugin_set.h)       the plugins, asked through typed extension points;
//   PlacementSearch  (placement_search.h) finding the best node for a task;
//   (diagnosis.cc)   PlacementSearch::DiagnoseNoNode: why a task fits nowhere, in words;
//   Statement        (statement.h)        the only way actions change the working state,
//                                         through the few functions it holds a key to.
// The Session ties them together and is what actions and plugins see.
//
// Deterministic: the same snapshot, policy and options give the same decisions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/action.h"
#include "engine/config.h"
#include "engine/decisions.h"
#include "engine/gpu_placement.h"
#include "engine/placement_search.h"
#include "engine/plugin.h"
#include "engine/plugin_set.h"
#include "engine/policy.h"
#include "engine/random.h"
#include "engine/snapshot.h"
#include "engine/topology_domains.h"
#include "engine/working_state.h"

namespace gantry {

class Statement;

struct SessionOptions {
  int64_t now = 0;    // the session's clock (seconds); the engine reads no other
  uint64_t seed = 0;  // for any random choice
};

class Session {
 public:
  // REQUIRES: the snapshot and the policy outlive the session.
  Session(const Snapshot& snapshot, const Policy& policy, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the policy's actions once and returns their decisions.
  Decisions Run();

  // ---- The cluster and the session's working state.
  const ClusterState& cluster() const { return snapshot_.cluster(); }
  const SessionOptions& options() const { return options_; }
  // Dynamic Resource Allocation's inputs (Snapshot::devices).
  const DeviceInputs& devices() const { return snapshot_.devices(); }
  const SchedulerConfig& config() const { return policy_.config(); }
  const WorkingState& state() const { return state_; }
  // ---- The room a placement search reads (WorkingState, "Room on nodes"): the room a
  // task may take now, or during a search for a pipelined placement (searching_future)
  // the room once releasing tasks end. Predicates and scorers read these.
  const NodeWork& searched_node(NodeId id) const { return state_.searched_node(id); }
  Milli searched_free(NodeId id, ResourceId r) const { return state_.searched_free(id, r); }
  bool searching_future() const { return state_.searching_future(); }
  // The first resource of `requests` that the node has less of searched free, or -1: what
  // requests.FirstExceeding(free room as a vector, /*named_only=*/false) gives, without
  // building it.
  int64_t FirstShortInSearched(const ResourceVector& requests, NodeId id) const {
    const uint32_t n = state_.resource_count();
    const Milli* row = state_.searched_free_row(id);
    for (const ResourceVector::Entry& e : requests.entries()) {
      if (e.amount > (e.id < n ? row[e.id] : 0)) return e.id;
    }
    return -1;
  }
  NodeGpus searched_gpus(NodeId id) const { return state_.searched_gpus(id); }
  // A GPU node's used share of its GPUs, in milli-GPUs, in the searched room.
  Milli searched_gpu_used_milli(NodeId id) const { return state_.searched_node(id).gpu_used; }
  // Whether the node's GPUs are DRA devices: it has no GPU devices of the engine's, and
  // room for nvidia.com/gpu (Node::device_capacity, through the configured map from
  // DeviceClass to resource), which a task's claims take (DraGpuRequest).
  bool has_dra_gpus(NodeId id) const {
    return state_.searched_node(id).gpu_count == 0 && state_.allocatable(id, kGpu) > 0;
  }
  // ---- The room free now, whatever a search reads (actions and explanations, outside
  // searches).
  const NodeWork& free_node(NodeId id) const { return state_.free_table().nodes[id]; }
  Milli free_now(NodeId id, ResourceId r) const { return state_.free_now(id, r); }
  // All of a node's free resources as a vector (for tests and messages; not fast).
  ResourceVector free_vector(NodeId id) const;
  NodeGpus free_gpus(NodeId id) const { return state_.free_gpus(id); }
  Milli allocatable(NodeId id, ResourceId r) const { return state_.allocatable(id, r); }
  // Any job pending as the session opened, or one the session has changed or noted.
  // REQUIRES: as WorkingState::job's.
  const JobWork& job(JobId id) const { return state_.job(id); }
  // Any job's ready tasks (a victim's: WorkingState::ready_tasks).
  int32_t ready_tasks(JobId id) const { return state_.ready_tasks(id); }
  TaskStatus task_status(TaskId id) const { return state_.task_status(id); }
  const QueueWork& queue(QueueId id) const { return state_.queue(id); }
  // Jobs with pending tasks, in id order.
  const std::vector<JobId>& pending_jobs() const { return state_.pending_jobs(); }
  // Allocatable of all nodes (GPU in milli).
  const ResourceVector& capacity() const { return cluster().capacity(); }
  // How a scorer's packing preference orders candidates (the first configured scorer
  // that has one, else tight).
  GpuPacking packing() const { return plugins_.packing(); }
  // The cluster's topology domains, built per level on first use (for gangs that stay in
  // one domain); building changes the cache, hence mutable.
  TopologyDomains& topology() const { return topology_; }
  // The session's random generator (seeded from SessionOptions::seed). Plugins use it for
  // random choices; drawing changes its state, hence mutable.
  Rng& rng() const { return rng_; }

  // ---- Extension points: each asks the plugins in configured order.
  int CompareQueues(QueueId a, QueueId b) const { return plugins_.CompareQueues(*this, a, b); }
  int CompareJobs(JobId a, JobId b) const { return plugins_.CompareJobs(*this, a, b); }
  int CompareTasks(TaskId a, TaskId b) const { return plugins_.CompareTasks(*this, a, b); }
  bool JobReady(JobId job) const { return plugins_.JobReady(*this, job); }
  bool JobPipelined(JobId job) const { return plugins_.JobPipelined(*this, job); }
  bool QueueOverused(QueueId queue, std::string* reason) const {
    return plugins_.QueueOverused(*this, queue, reason);
  }
  bool QueueHoldsOwnShare(QueueId queue, std::string* reason) const {
    return plugins_.QueueHoldsOwnShare(*this, queue, reason);
  }
  bool QueueAllocatable(QueueId queue, const ResourceVector& request, std::string* reason) const {
    return plugins_.QueueAllocatable(*this, queue, request, reason);
  }
  // Whether the task's queue (and its ancestors) may take the task placed as `placement`:
  // QueueAllocatable for what it takes on the chosen devices, which for a GPU-memory
  // request is known only once they are chosen.
  bool QueueTakes(TaskId task, const Placement& placement, std::string* reason) const {
    const ClusterState& c = cluster();
    return QueueAllocatable(
        c.job(c.task(task).job).queue,
        ClusterState::Accounted(c.spec_of(task),
                                static_cast<int32_t>(placement.gpus.devices.size()),
                                placement.gpus.milli_each),
        reason);
  }
  FilterResult Filter(const TaskSpec& spec, SpecId spec_id, NodeId node) {
    return search_.Filter(spec, spec_id, node);
  }
  // Finds the best node for a task (over every node's free room, or as `scope` says), or
  // returns false and explains why none fits.
  bool FindPlacement(TaskId task, Placement* out, std::string* why_not) {
    return search_.Find(task, SearchScope{}, out, why_not);
  }
  bool FindPlacement(TaskId task, const SearchScope& scope, Placement* out, std::string* why_not) {
    return search_.Find(task, scope, out, why_not);
  }
  // The running tasks among `candidates` that every victim filter lets `preemptor` evict.
  std::vector<TaskId> Victims(EvictionCause cause, TaskId preemptor,
                              std::vector<TaskId> candidates) const {
    return plugins_.Victims(*this, cause, preemptor, std::move(candidates));
  }

  // ---- What actions note on a job (never its amounts: those change by Statements).
  // Asks the admission plugins; an admitted job is inqueue, a refused one keeps `reason`.
  bool AdmitJob(JobId job, std::string* reason);
  void SetJobReason(JobId job, std::string reason) { state_.SetJobReason(job, std::move(reason)); }
  // What holds it, when not a lack of room (PendingHold); kept until set again.
  void SetJobHold(JobId job, PendingHold hold) { state_.SetJobHold(job, hold); }
  void MarkAttempted(JobId job) { state_.MarkJobAttempted(job); }
  // Allocate passed the job over because its queue had its deserved share.
  void MarkSkippedOverused(JobId job, const std::string& reason) {
    state_.MarkJobSkippedOverused(job, reason);
  }

  // Opens a transaction of changes (see Statement; defined in statement.cc).
  Statement NewStatement();
  // The evictions committed so far in this session (the cluster's memory of who evicted
  // whom, Job::evicted_by, learns of them only after the session).
  const std::vector<EvictDecision>& committed_evictions() const { return decisions_.evictions; }

  // ---- What a Statement does to the session, and nothing else may: only a Statement can
  // make the key. Applies one change (+1) or undoes it (-1): the working state, then the
  // plugins told, then the search's verdicts that rested on room that came back forgotten.
  class StatementKey {
    friend class Statement;
    StatementKey() = default;
  };
  enum class Change : uint8_t { kAllocate, kPipeline, kEvict, kHold };
  void ApplyChange(StatementKey, Change change, TaskId task, const Placement& placement,
                   uint64_t unschedulable_mark, int sign);
  // The search's "fits nowhere" log length (PlacementSearch::UnschedulableMark).
  uint64_t UnschedulableMark(StatementKey) const { return search_.UnschedulableMark(); }
  // Where committed operations become decisions, and their jobs' placed tasks leave the
  // unplaced lists.
  Decisions& committed(StatementKey) { return decisions_; }
  void DropPlaced(StatementKey, JobId job) { state_.DropPlaced(job); }

  // ---- Reservations against starvation (the reserve action): a node held for a job
  // takes no other job's tasks for the rest of the session (WorkingState keeps them).
  JobId ReservedFor(NodeId node) const { return state_.ReservedFor(node); }
  bool HasReservations() const { return state_.HasReservations(); }
  // REQUIRES: the node is not held for another job.
  void Reserve(NodeId node, JobId job) { state_.Reserve(node, job); }
  // Why the job's nodes are held (or not): kept past later actions' reasons, and added
  // to the job's pending reason at the session's end.
  void NoteReservation(JobId job, std::string note);
  // How long the job has waited, by the session's clock.
  int64_t WaitedSeconds(JobId job) const { return options_.now - cluster().job(job).submitted; }

 private:
  const Snapshot& snapshot_;
  const Policy& policy_;
  SessionOptions options_;
  mutable Rng rng_;
  mutable TopologyDomains topology_;
  WorkingState state_;
  PluginSet plugins_;
  PlacementSearch search_;
  std::vector<std::pair<JobId, std::string>> reservation_notes_;
  Decisions decisions_;
};

}  // namespace gantry
