// The cluster model: nodes with GPU devices, queues, jobs (pod groups) and their tasks
// (pods), owned by ClusterState. Pure values and bookkeeping, no I/O.
//
// Ids are dense indexes into ClusterState's vectors and never change once given out.
// The daemon and the simulator change a ClusterState as the world changes (Place,
// Release); the engine only reads it, through a Session's private working copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/capacity_totals.h"
#include "model/dataset_table.h"
#include "model/defragment_evictions.h"
#include "model/disruption_budget.h"
#include "model/group_tree.h"
#include "model/int128.h"
#include "model/labels.h"
#include "model/node.h"
#include "model/node_stamps.h"
#include "model/numa.h"
#include "model/resources.h"
#include "model/shape_classes.h"
#include "model/status.h"
#include "model/task_spec.h"

namespace gantry {

using QueueId = uint32_t;
using JobId = uint32_t;
using TaskId = uint32_t;

// A kind of task in the workload and how many of them there are: the "target workload"
// that fragmentation is measured against (a GPU is fragmented when the tasks that
// typically arrive cannot use it).
struct TaskType {
  ResourceVector requests;
  GpuRequest gpu;
  int64_t count = 0;
};

struct WorkloadProfile {
  std::vector<TaskType> types;  // distinct shapes, most frequent first
  int64_t total = 0;            // sum of counts
};

enum class TaskState { kPending, kRunning, kDone };

struct Task {
  std::string name;
  JobId job = kNone;
  SpecId spec = kNone;
  TaskState state = TaskState::kPending;
  // Where it runs (kRunning): node, device indexes and the share taken on each device.
  NodeId node = kNone;
  std::vector<int32_t> gpus;
  int32_t gpu_milli_each = 0;
  int64_t gpu_memory_each = 0;
  // Its MIG devices on a mixed-strategy node (indexes into Node::mig.devices), chosen by
  // ClusterState when it is placed: the engine counts MIG resources, not devices.
  std::vector<int32_t> mig_devices;
  // On a node whose NUMA nodes align (NodeNuma::aligns): the zone (index into
  // Node::numa.zones) of each of its units (NumaUnitsOf), -1 for one no zone holds; chosen
  // by ClusterState as the kubelet's topology manager would. Empty elsewhere.
  std::vector<int32_t> numa_zones;
  // Running but terminating (its pod has a deletionTimestamp): see SetReleasing.
  bool releasing = false;
  // Its leaf in the job's group tree (an index into Job::groups), or -1.
  int32_t group = -1;

  // ---- Defragmentation (the defragment action, docs/engine.md).
  // It may be moved: evicted so that a job needing whole GPUs gets a node, when it fits
  // elsewhere at once (its pod's annotation gantry.dev/movable: "true"). On the task, not
  // its spec: where a task may go does not depend on it, and specs stay shared.
  bool movable = false;
};

// A gang's topology constraint: its tasks stay inside one domain of a topology level (the
// nodes sharing that level's label value and the values of the levels above it).
struct TopologyRequest {
  std::string level;      // a label key of ClusterState::topology_keys(); empty: none
  bool required = false;  // else preferred: the tightest level that fits, then the next up
  bool operator==(const TopologyRequest&) const = default;
};

struct Job {
  std::string name;
  QueueId queue = 0;
  int32_t priority = 0;
  int32_t min_member = 1;
  int64_t creation = 0;  // creation order; earlier first among equals
  // When it was created, on the session clock (SessionOptions::now, seconds): how long it
  // has waited decides the preemption grace and reservations against starvation.
  int64_t submitted = 0;
  // Every job that evicted one of its tasks, directly or through a chain (A evicted B,
  // B evicted this one, before or after): sorted. Kept by ClusterState::NoteEviction.
  std::vector<JobId> evicted_by;
  // The jobs it evicted a task of, directly: sorted. What a new eviction of this job
  // adds to its evicted_by goes down these to every job it reaches.
  std::vector<JobId> evicted;
  // Its eviction memory passed kMaxEvictionChain, or that of a job that evicted it
  // through a chain did: it is never evicted again, nor evicts.
  bool eviction_memory_full = false;
  TopologyRequest topology;
  // Preempt, reclaim and defragment take every running task of it or none (a native
  // PodGroup's disruptionMode: all); else a task at a time while it keeps min_member.
  bool disrupt_whole = false;
  // A CompositePodGroup's tree (model/group_tree.h): the job is ready when its root is, and
  // min_member is then MinimumTasks. Empty for any other job.
  std::vector<TaskGroup> groups;
  std::vector<TaskId> tasks;
  // Kept by ClusterState:
  int32_t running = 0;
  int32_t pending = 0;
  ResourceVector allocated;
};

struct Queue {
  std::string name;
  int64_t weight = 1;
  ResourceVector guarantee;   // always available to this queue when it asks
  ResourceVector capability;  // never exceeded; a resource it does not name is unlimited
  // An explicit deserved amount per resource it names (Volcano's spec.deserved): the queue
  // deserves that much (up to its demand) instead of a share by weight.
  ResourceVector deserved;
  // The queue tree (model/queue_tree.h): kNone for a top-level queue. Jobs belong to leaf
  // queues only.
  QueueId parent = kNone;
  // Set by a loader when the queue names a parent it does not know: the queue and what is
  // below it are out of the tree, and their jobs wait, until the parent appears.
  std::string missing_parent;
  bool reclaimable = true;  // false: reclaim never takes back what it borrowed
  // Fair share with memory, set on a top-level queue for its whole tree (0: off): the
  // half-life in seconds of the usage that UsageMemory (model/usage_memory.h) keeps.
  int64_t usage_half_life_s = 0;
  // What the queue held on average lately (its allocation, decayed with its tree's
  // half-life), set between sessions by whoever keeps the time (SetQueueUsage). With
  // memory on, siblings are ordered by the mean of this and what they hold now.
  ResourceVector usage;
  // Kept by ClusterState:
  ResourceVector allocated;

  // ---- Defragmentation: every task of its jobs may be moved (as Task::movable says).
  bool movable = false;
};

class ClusterState {
 public:
  ClusterState();

  // Label keys, outermost first, whose values form each node's topology path. Nodes
  // already added get their paths again.
  void SetTopologyKeys(std::vector<std::string> keys);
  const std::vector<std::string>& topology_keys() const { return topology_keys_; }

  // Each Add returns an error naming the object when its name is taken or it is invalid
  // (a node with more than kMaxGpusPerNode devices is refused).
  Result<NodeId> AddNode(Node node);
  Result<QueueId> AddQueue(Queue queue);
  // A spec that reads a node label key no spec read before re-classes the nodes that
  // carry it (see ShapeClassTable).
  SpecId AddSpec(TaskSpec spec);
  // A job with no tasks yet; `queue` must exist.
  Result<JobId> AddJob(Job job);
  Result<TaskId> AddTask(JobId job, SpecId spec, std::string name);

  // Marks a pending task as running on `node` with these GPU devices, after checking
  // that it fits there. For a shared-GPU task `gpus` has one device.
  Status Place(TaskId task, NodeId node, std::span<const int32_t> gpus);
  // Marks a running task done and returns its resources. REQUIRES: task is running.
  void Release(TaskId task);

  // ---- World changes the daemon applies as watch events arrive (cluster_update.cc).
  // Ids of removed tasks and jobs are reused by later Adds. A removed node keeps its slot
  // (and its name) while tasks are still recorded on it, so that their accounting holds
  // and a node of the same name that comes back takes it again; once none remain, the
  // slot is freed (no memory kept, the name forgotten) and a later AddNode may reuse it.

  // Records a task that something else already placed (a pod bound by another scheduler,
  // or one bound before a restart): like Place, but trusts the caller that it fits, since
  // the API server has already accepted it. Device indexes must still exist on the node.
  Status PlaceBound(TaskId task, NodeId node, std::span<const int32_t> gpus);
  // Takes back a placement that did not happen (a failed bind): the task is pending again.
  // REQUIRES: task is running.
  void Unplace(TaskId task);
  // Marks a running task as terminating, or no longer: it holds its room until it ends,
  // but sessions see that room as being released (what preemptors wait for) and never
  // evict it again. A task that is not running is left as it is; one that stops running
  // is no longer releasing.
  void SetReleasing(TaskId task, bool releasing);
  // Running tasks marked releasing, in id order.
  const std::set<TaskId>& releasing_tasks() const { return releasing_tasks_; }
  // Forgets a task (its pod was deleted or finished), returning its resources if running.
  void RemoveTask(TaskId task);
  // Forgets a job. REQUIRES: it has no tasks left.
  void RemoveJob(JobId job);
  // Records that a task of `victim` was evicted for `preemptor`: the preemptor and its
  // own evicted_by join the evicted_by of the victim and of every job the victim evicted,
  // directly or through a chain. The engine never evicts a task of a job in the
  // preemptor's evicted_by, so no eviction loops back, directly or through a chain. A job
  // whose memory would pass kMaxEvictionChain is full, and so is every job it reaches:
  // such a job is never evicted again, nor evicts (see EvictionChainFull), so no loop
  // can pass through the part of the chain no longer remembered.
  void NoteEviction(JobId victim, JobId preemptor);
  bool EvictionChainFull(JobId job) const;
  // Changes a job's gang size, priority and queue; what its running tasks hold moves to
  // the new queue.
  Status UpdateJob(JobId job, int32_t min_member, int32_t priority, QueueId queue);
  // The topology domain its gang must (or would rather) stay in.
  void SetJobDisruptsWhole(JobId job, bool whole) { jobs_[job].disrupt_whole = whole; }
  // Gives a job its group tree (ValidateGroupTree's error if it is not one; empty: none),
  // and its minimum (MinimumTasks). Its tasks' groups are forgotten: set them again.
  Status SetJobGroups(JobId job, std::vector<TaskGroup> groups);
  // Puts a task in a leaf of its job's tree (-1: none).
  Status SetTaskGroup(TaskId task, int32_t group);
  void SetJobTopology(JobId job, TopologyRequest topology) {
    jobs_[job].topology = std::move(topology);
  }
  // Moves a job in creation order (Job::creation): the daemon orders jobs by their
  // objects' creation times, which can put a new job before ones it already has.
  void SetJobCreation(JobId job, int64_t creation) { jobs_[job].creation = creation; }
  void SetJobSubmitted(JobId job, int64_t submitted) { jobs_[job].submitted = submitted; }
  // Replaces a node's static description (allocatable, labels, taints, devices), keeping
  // what runs on it. A removed node of that name comes back.
  Status UpdateNode(NodeId id, Node node);
  // Marks a node removed: it leaves the capacity and takes no new tasks; tasks still
  // recorded on it keep their accounting until they are removed, and then it is freed.
  void RemoveNode(NodeId id);
  // Gives the slot of a spec that no task uses any more to another spec, so that a caller
  // whose tasks come in ever new shapes (the daemon's pods) keeps as many specs as there
  // are shapes alive. REQUIRES: no task refers to `id`.
  void ReplaceSpec(SpecId id, TaskSpec spec);
  Status UpdateQueue(QueueId id, int64_t weight, ResourceVector guarantee,
                     ResourceVector capability);
  // Sets the tree links and the rest of a queue's description (cycles are found by
  // BuildQueueTree, not here, a queue that is its own parent included). `parent` is kNone
  // or an existing queue.
  Status SetQueueTree(QueueId id, QueueId parent, std::string missing_parent, bool reclaimable,
                      ResourceVector deserved);
  // Fair share with memory: the half-life (>= 0; read from a top-level queue) and the
  // decayed usage of a queue.
  void SetQueueUsageHalfLife(QueueId id, int64_t seconds) {
    queues_[id].usage_half_life_s = seconds;
  }
  void SetQueueUsage(QueueId id, ResourceVector usage) { queues_[id].usage = std::move(usage); }

  // ---- Defragmentation (the defragment action; its budget's memory: DefragmentEvictions).
  void SetTaskMovable(TaskId task, bool movable) { tasks_[task].movable = movable; }
  void SetQueueMovable(QueueId queue, bool movable) { queues_[queue].movable = movable; }
  // Whether the defragment action may move the task: its own opt-in or its queue's.
  bool Movable(TaskId task) const {
    return tasks_[task].movable || queues_[jobs_[tasks_[task].job].queue].movable;
  }
  // Records that the defragment action evicted a task at `at`: whoever applies decisions
  // does. Its budget counts them (DefragmentEvictions).
  void NoteDefragmentEviction(int64_t at) { defragment_evictions_.Note(at); }
  const DefragmentEvictions& defragment_evictions() const { return defragment_evictions_; }

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Queue>& queues() const { return queues_; }
  const std::vector<Job>& jobs() const { return jobs_; }
  const std::vector<Task>& tasks() const { return tasks_; }
  const std::vector<TaskSpec>& specs() const { return specs_; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  const Queue& queue(QueueId id) const { return queues_[id]; }
  const Job& job(JobId id) const { return jobs_[id]; }
  const Task& task(TaskId id) const { return tasks_[id]; }
  const TaskSpec& spec(SpecId id) const { return specs_[id]; }
  const TaskSpec& spec_of(TaskId id) const { return specs_[tasks_[id].spec]; }

  // kNone when absent.
  NodeId FindNode(std::string_view name) const;
  QueueId FindQueue(std::string_view name) const;
  JobId FindJob(std::string_view name) const;

  // Changes whenever the node does, and the counter stamps come from (NodeStamps).
  uint64_t node_stamp(NodeId id) const { return stamps_.of(id); }
  const std::shared_ptr<std::atomic<uint64_t>>& stamp_counter() const { return stamps_.counter(); }
  // The running tasks on a node, in no particular order.
  const std::vector<TaskId>& tasks_on(NodeId node) const { return tasks_on_node_[node]; }
  // Jobs that have at least one pending task, in id order.
  const std::set<JobId>& jobs_with_pending() const { return jobs_with_pending_; }
  // What the live nodes add up to (CapacityTotals): their allocatable capped, for
  // comparing with allocations, and exact, for ratios; how many, and how many align NUMA.
  const ResourceVector& capacity() const { return totals_.capped(); }
  Int128 exact_capacity(ResourceId id) const { return totals_.exact(id); }
  size_t live_node_count() const { return totals_.live_nodes(); }
  size_t numa_node_count() const { return totals_.numa_nodes(); }
  // The nodes' shape classes (Node::shape_class).
  const ShapeClassTable& shape_classes() const { return shape_classes_; }

  // Namespaces' labels, for pod affinity terms with a namespaceSelector. A namespace
  // never set has none.
  void SetNamespaceLabels(const std::string& ns, Labels labels);
  void RemoveNamespace(const std::string& ns) { namespace_labels_.erase(ns); }
  const Labels& namespace_labels(const std::string& ns) const;

  // The PodDisruptionBudgets the preempt and reclaim actions honour, in the caller's order.
  void SetDisruptionBudgets(std::vector<DisruptionBudget> budgets) {
    disruption_budgets_ = std::move(budgets);
  }
  const std::vector<DisruptionBudget>& disruption_budgets() const { return disruption_budgets_; }

  // The workload's task types (see WorkloadProfile); empty unless a caller sets it.
  void SetWorkloadProfile(WorkloadProfile profile) { profile_ = std::move(profile); }
  const WorkloadProfile& workload_profile() const { return profile_; }

  // The GPU share a pending task is expected to take, for accounting before it is placed:
  // its milli, or its memory over the largest device of an allowed model; 1000 for whole.
  int32_t EstimatedGpuShare(const GpuRequest& gpu) const;
  // What a task placed with `gpu_milli_each` on `n_gpus` devices counts against its
  // queue: its requests plus the GPU milli, plus what its DRA devices count as.
  static ResourceVector Accounted(const TaskSpec& spec, int32_t n_gpus, int32_t gpu_milli_each);

  // ---- Dataset locality (issue 13, model/datasets.h).
  // What loaders know of datasets: the table, replaced whole or a dataset at a time.
  const DatasetTable& datasets() const { return datasets_; }
  Status SetDatasets(std::vector<DatasetInfo> all) { return datasets_.SetAll(std::move(all)); }
  Status SetDataset(DatasetInfo dataset) { return datasets_.Set(std::move(dataset)); }
  void RemoveDataset(std::string_view name) { datasets_.Remove(name); }
  // Replaces the datasets a node caches by its loader's word (Node::cached_datasets),
  // checked as AddNode checks them; moves the node's stamp.
  Status SetCachedDatasets(NodeId id, std::vector<std::string> datasets);
  // Specs (live or not) that name a dataset, kept by AddSpec and ReplaceSpec: a session
  // with none leaves the datalocality plugin out.
  size_t specs_with_datasets() const { return specs_with_datasets_; }

 private:
  // Counts (+1) or uncounts (-1) the label keys a spec reads in the shape class table,
  // moving the stamps of the nodes it classed again.
  void CountLabelKeys(const TaskSpec& spec, int sign);
  // Frees a removed node's slot once no task is recorded on it.
  void FreeNodeIfUnused(NodeId id);
  // Rebuilds a node's usage (used, task count, devices) from the tasks on it: after a sum
  // saturated, subtracting would no longer give the exact remainder.
  void RecountNode(NodeId id);
  // The same for a job's and a queue's allocated, leaving out task `leaving` (kNone: none).
  void RecountJob(JobId id, TaskId leaving);
  void RecountQueue(QueueId id, TaskId leaving);
  ResourceVector AccountedOf(const Task& task) const;
  // Fills a node's derived fields (GPU allocatable, topology, shape class) and checks it.
  Status PrepareNode(Node& node);
  // Every task on the node takes its MIG devices and NUMA zones again (model/task_devices.h):
  // after an update changed the node's layout, or a recount.
  void RetakeMig(NodeId id);
  void RetakeNuma(NodeId id);
  // Checks device indexes and returns the share each takes; with `check_room`, also that
  // the task fits there.
  Status CheckPlacement(const Task& task, const Node& node, std::span<const int32_t> gpus,
                        bool check_room, int32_t* share, int64_t* memory_each) const;
  // Place, with or without the room check (PlaceBound).
  Status PlaceChecked(TaskId task_id, NodeId node_id, std::span<const int32_t> gpus,
                      bool check_room);
  void Account(TaskId task_id, NodeId node_id, std::span<const int32_t> gpus, int32_t share,
               int64_t memory_each);
  // Returns what a running task holds to its node, job and queue.
  void Unaccount(TaskId task);

  std::vector<std::string> topology_keys_;
  std::vector<Node> nodes_;
  std::vector<Queue> queues_;
  std::vector<Job> jobs_;
  std::vector<Task> tasks_;
  std::vector<TaskSpec> specs_;
  std::unordered_map<std::string, NodeId> node_ids_;
  std::unordered_map<std::string, QueueId> queue_ids_;
  std::unordered_map<std::string, JobId> job_ids_;
  ShapeClassTable shape_classes_;
  std::vector<NodeId> free_node_ids_;
  std::set<JobId> jobs_with_pending_;
  std::set<JobId> jobs_evicted_;  // those in an eviction: evicted_by or evicted not empty
  std::vector<TaskId> free_task_ids_;
  std::vector<JobId> free_job_ids_;
  std::vector<std::vector<TaskId>> tasks_on_node_;
  NodeStamps stamps_;
  CapacityTotals totals_;
  WorkloadProfile profile_;
  std::unordered_map<std::string, Labels> namespace_labels_;
  Labels no_labels_;  // what namespace_labels() gives for a namespace never set
  std::vector<DisruptionBudget> disruption_budgets_;
  std::set<TaskId> releasing_tasks_;
  std::vector<GpuDevice> largest_devices_;  // per GPU model, the one with most memory
  DatasetTable datasets_;
  size_t specs_with_datasets_ = 0;
  DefragmentEvictions defragment_evictions_;
};

}  // namespace gantry
