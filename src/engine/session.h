// A Session is one scheduling cycle: it opens on a Snapshot, runs the configured actions
// and returns Decisions. It owns a private working copy of everything a cycle changes
// (free resources per node and GPU device, what each job and queue has been given), so
// that trial placements never touch the shared ClusterState.
//
// Deterministic: the same snapshot, configuration and options give the same decisions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/action.h"
#include "engine/config.h"
#include "engine/decisions.h"
#include "engine/gpu_placement.h"
#include "engine/node_index.h"
#include "engine/node_table.h"
#include "engine/plugin.h"
#include "engine/random.h"
#include "engine/snapshot.h"

namespace gantry {

class Statement;

struct SessionOptions {
  int64_t now = 0;    // the session's clock (seconds); the engine reads no other
  uint64_t seed = 0;  // for any random choice
};

// A job's state in the session.
struct JobWork {
  bool inqueue = false;          // admitted (by the enqueue action, or already running)
  bool skipped_overused = false;  // allocate passed it over because its queue had its share
  bool attempted = false;
  int32_t ready = 0;   // running before the session plus placed in it
  int32_t placed = 0;  // placed in this session
  ResourceVector allocated;
  std::vector<TaskId> unplaced;  // pending tasks not yet placed, in task order
  std::string reason;  // why it is (still) pending
};

struct QueueWork {
  ResourceVector allocated;  // running plus placed in this session
  ResourceVector request;    // allocated plus the pending demand of its jobs
};

// Where a task goes.
struct Placement {
  NodeId node = kNone;
  GpuChoice gpus;
};

class Session {
 public:
  // REQUIRES: ValidateSchedulerConfig(config).ok()
  Session(const Snapshot& snapshot, const SchedulerConfig& config, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the configured actions once and returns their decisions.
  Decisions Run();

  // ---- The cluster and the session's working state.
  const ClusterState& cluster() const { return snapshot_.cluster(); }
  const SessionOptions& options() const { return options_; }
  const NodeWork& node(NodeId id) const { return table_.nodes[id]; }
  // What is free of a resource on a node: its allocatable minus what is placed there.
  Milli free(NodeId id, ResourceId r) const {
    const uint32_t n = table_.resource_count;
    return r < n ? table_.free[static_cast<size_t>(id) * n + r] : 0;
  }
  // All of a node's free resources as a vector (for tests and messages; not fast).
  ResourceVector free_vector(NodeId id) const;
  // The first resource of `requests` that the node has less of free, or -1: the same as
  // requests.FirstExceeding(free_vector(id), /*named_only=*/false), without building it.
  int64_t FirstShort(const ResourceVector& requests, NodeId id) const {
    const uint32_t n = table_.resource_count;
    const Milli* row = table_.free.data() + static_cast<size_t>(id) * n;
    for (const ResourceVector::Entry& e : requests.entries()) {
      if (e.amount > (e.id < n ? row[e.id] : 0)) return e.id;
    }
    return -1;
  }
  NodeGpus node_gpus(NodeId id) const;
  // REQUIRES: the job has pending tasks (is in pending_jobs()).
  const JobWork& job(JobId id) const { return jobs_[SlotOf(id)]; }
  const QueueWork& queue(QueueId id) const { return queues_[id]; }
  // Jobs with pending tasks, in id order.
  const std::vector<JobId>& pending_jobs() const { return pending_jobs_; }
  // Allocatable of all nodes (GPU in milli).
  const ResourceVector& capacity() const { return cluster().capacity(); }
  // A GPU node's used share of its GPUs, in milli-GPUs.
  Milli gpu_used_milli(NodeId id) const { return table_.nodes[id].gpu_used; }
  // How a scorer's packing preference should order candidates (the first configured
  // scorer that has one, else tight).
  GpuPacking packing() const { return packing_; }
  // The session's random generator (seeded from SessionOptions::seed). Plugins use it for
  // random choices; drawing changes its state, hence mutable.
  Rng& rng() const { return rng_; }

  // ---- Extension points: each asks the plugins in configured order.
  int CompareQueues(QueueId a, QueueId b) const;
  int CompareJobs(JobId a, JobId b) const;
  int CompareTasks(TaskId a, TaskId b) const;
  bool AdmitJob(JobId job, std::string* reason);
  bool JobReady(JobId job) const;
  bool QueueOverused(QueueId queue, std::string* reason) const;
  bool QueueAllocatable(QueueId queue, const ResourceVector& request, std::string* reason) const;
  FilterResult Filter(const TaskSpec& spec, SpecId spec_id, NodeId node);
  // Finds the best node for a task now, or returns false and explains why none fits
  // ("0/5000 nodes are available: 4000 insufficient nvidia.com/gpu, ...").
  bool FindPlacement(TaskId task, Placement* out, std::string* why_not);

  // ---- Bookkeeping for actions.
  void SetInqueue(JobId job) { mutable_job(job).inqueue = true; }
  JobWork& mutable_job(JobId job) { return jobs_[SlotOf(job)]; }
  // Opens a transaction of placements (see Statement).
  Statement NewStatement();

 private:
  friend class Statement;
  // Applies (sign = +1) or reverts (sign = -1) a placement in the working state.
  void ApplyPlacement(TaskId task, const Placement& placement, int sign);
  void RecordBind(TaskId task, const Placement& placement);
  // Unschedulable verdicts made after `mark` (a size of unschedulable_log_) may be wrong
  // once a statement gives its room back; earlier ones stay right, since room only
  // shrinks otherwise.
  size_t UnschedulableMark() const { return unschedulable_log_.size(); }
  void ForgetUnschedulableSince(size_t mark);
  template <typename Fn>
  void ForEachCandidate(const TaskSpec& spec, Fn&& fn) const;
  bool ChooseDevicesFor(const TaskSpec& spec, NodeId node, GpuChoice* out) const;
  // Picks among candidates by score (and tie-break); used when scorers normalize.
  bool PickNormalized(const TaskSpec& spec, Placement* out);
  std::string Diagnose(const TaskSpec& spec, SpecId spec_id);
  void BuildWorkingState();

  const Snapshot& snapshot_;
  const SchedulerConfig& config_;
  SessionOptions options_;

  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<std::unique_ptr<Action>> actions_;
  // The plugins by extension point, in configured order (pointers into plugins_).
  std::vector<const QueueOrder*> queue_orders_;
  std::vector<const JobOrder*> job_orders_;
  std::vector<const TaskOrder*> task_orders_;
  std::vector<JobAdmission*> admissions_;
  std::vector<const NodePredicate*> predicates_;
  std::vector<const NodeScorer*> scorers_;
  std::vector<const JobReadiness*> readiness_;
  std::vector<const QueueLimits*> queue_limits_;
  std::vector<PlacementListener*> listeners_;
  bool normalizing_ = false;  // some scorer normalizes: score all candidates, then choose
  mutable Rng rng_;
  std::vector<uint32_t> tie_rank_;  // per node, for TieBreak::kShuffled
  GpuPacking packing_ = GpuPacking::kTight;

  NodeTable table_;  // the session's own copy: placements change it
  mutable std::vector<const GpuDevice*> devices_of_;  // per node, once looked up
  NodeIndex index_;
  std::vector<JobWork> jobs_;  // one per pending job, same order as pending_jobs_
  // A job's slot in jobs_. Looked up in every job comparison, so it must be one probe,
  // and filled every period for every pending job, so without a heap node per entry
  // (std::unordered_map) or a table as large as all jobs ever seen: open addressing over
  // twice the pending jobs. Throws std::out_of_range for a job without pending tasks.
  size_t SlotOf(JobId id) const {
    const size_t mask = slot_keys_.size() - 1;
    for (size_t i = SlotHash(id) & mask;; i = (i + 1) & mask) {
      if (slot_keys_[i] == kNone) throw std::out_of_range("job has no pending tasks");
      if (slot_keys_[i] == id) return slot_values_[i];
    }
  }
  static size_t SlotHash(JobId id) {
    return static_cast<size_t>((id * 0x9e3779b97f4a7c15ULL) >> 32);
  }
  std::vector<JobId> slot_keys_;  // kNone: empty
  std::vector<uint32_t> slot_values_;
  std::vector<QueueWork> queues_;
  std::vector<JobId> pending_jobs_;

  // Per (spec, node shape class): the static verdict, once known. The detail (which
  // taint) is the same for the whole class, since taints are part of its key.
  struct StaticVerdict {
    bool known = false;
    FilterResult result;
  };
  std::vector<std::vector<StaticVerdict>> static_verdicts_;
  // The spec's verdicts, one slot per shape class.
  std::vector<StaticVerdict>& StaticVerdictsOf(SpecId spec_id);
  // The static predicates' verdict on the node's class, worked out on first use.
  const FilterResult& StaticResult(const TaskSpec& spec, std::vector<StaticVerdict>& verdicts,
                                   NodeId node);
  // Filter(...).ok(), for the hot loop: no result to copy, verdicts already at hand.
  bool Passes(const TaskSpec& spec, std::vector<StaticVerdict>& verdicts, NodeId node);
  // Per spec: 1 when it found no node, so that its other tasks fail fast.
  std::vector<uint8_t> unschedulable_;
  std::vector<std::string> unschedulable_why_;
  std::vector<SpecId> unschedulable_log_;  // specs in the order they were marked
  uint64_t rotation_ = 0;  // start offset for unordered candidate scans
  // Candidates of the task being placed, when scores are normalized.
  std::vector<NodeId> candidate_nodes_;
  std::vector<GpuChoice> candidate_gpus_;
  std::vector<std::vector<int64_t>> candidate_scores_;  // per scorer

  Decisions decisions_;
};

}  // namespace gantry
