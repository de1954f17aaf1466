// The daemon's view of the cluster: Kubernetes objects from the informers, applied one
// event at a time to a ClusterState that the engine schedules against (never rebuilt
// from scratch). Single-threaded: the scheduler thread owns it.
//
// The cache holds the cluster: pods, nodes, jobs, queues. Every other kind of state is a
// component it owns, which gets the objects of its kinds, answers with values (a Resync:
// the pods and nodes to sync again) and never calls back into the cache:
// - VolumeBinder (volume_binder.h): claims, volumes, classes, CSI objects; what a pending
//   pod's volumes require, and the binding of claims that wait for their first consumer;
// - DefaultSpreading (default_spreading.h): Services and controllers, and the selector
//   kube-scheduler's default topology spreading gives a pod without constraints;
// - EvictionTracker (eviction_tracker.h): evictions in flight and refused, nominated nodes;
// - StatusReporter (status_reporter.h): what was last written of pods' and PodGroups'
//   status, and which jobs changed since;
// - NodeTopology (node_topology.h): the topology levels, HyperNodes and NodeResourceTopology
//   objects, which give nodes their places;
// - DeviceClaims (device_claims.h): DRA's DeviceClasses, ResourceSlices, ResourceClaims and
//   DeviceTaintRules; a pod's claims, and the allocations assumed until they are written.
// A pod to place is resolved by the components in turn (ResolveSpec: volumes, then DRA
// claims, then default spreading); the first that keeps it pending says why. docs/architecture.md
// has the path of a pod from the watch to its bind.
//
// What becomes what:
// - a Node is a node (GPUs from nvidia.com/gpu, model and memory from GPU feature
//   discovery's labels; its CSI part, HyperNode labels, NUMA description and cached
//   datasets from the components and objects that give them). A node that cannot be read is refused
//   with an event, and taken out of scheduling like a deleted one; the pods bound to it still count
//   there, and pending pods' messages say that it was refused and why;
// - a pod bound to a node (by anyone) is a running task there: every bound pod counts,
//   however malformed, with what can be read of its requests; what cannot (an amount, a
//   resource name, its GPUs) counts as all the node has of it, with an event that says so;
// - a pending pod of ours (spec.schedulerName) is a pending task of its job, unless the
//   job is held (its PodGroup is missing or invalid, its queue cannot be made) or the pod
//   cannot be scheduled as written (it then waits with a PodScheduled=False message);
// - a job is a PodGroup (Volcano or scheduler-plugins) or a pod without one; its queue
//   is the group's spec.queue, else the alphabetically first gantry.dev/queue annotation
//   among its pods, else "default"; its priority is the group's PriorityClass, else the
//   highest of its pods'. Both are kept as per-job counts, so that an event about one pod
//   or the group costs no walk over all the job's pods (cluster_cache_jobs.cc). A Volcano
//   Queue object gives a queue its weight and limits (cluster_cache_queues.cc);
// - among equals, jobs go in line by metadata.creationTimestamp (the PodGroup's, else the
//   job's earliest pod's), then by key: the same line whatever order the informers
//   delivered the objects in, before a restart and after it;
// - pods of other schedulers live in one queue of their own, so that their resources
//   count without taking part in fair sharing.
//
// Nothing outlives its object: deleted pods, jobs, groups and refused nodes leave every
// index (the components' too), and specs are shared by pods of one shape and reused once no
// pod has it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/api_requests.h"
#include "daemon/cluster_cache_records.h"
#include "daemon/cluster_cache_tables.h"
#include "daemon/cluster_counts.h"
#include "daemon/default_spreading.h"
#include "daemon/device_claims.h"
#include "daemon/eviction_tracker.h"
#include "daemon/node_topology.h"
#include "daemon/pending_reasons.h"
#include "daemon/pod_groups.h"
#include "daemon/queue_objects.h"
#include "daemon/resync.h"
#include "daemon/status_reporter.h"
#include "daemon/volume_binder.h"
#include "engine/decisions.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "k8s/workloads.h"
#include "model/arrival_profile.h"
#include "model/cluster.h"

namespace gantry {

// What a ClusterCache and its components hold (ClusterCache::sizes()), for tests that check
// nothing outlives its object.
struct ClusterCacheSizes {
  size_t pods = 0, jobs = 0, groups = 0, specs = 0, refused_nodes = 0;
  size_t waiting_for_node = 0;  // pods waiting for a node, over all nodes
  size_t status_dirty = 0;      // jobs whose status is to be collected
  // VolumeBinder::Sizes and DefaultSpreading::Sizes.
  size_t claims = 0, volumes = 0, storage_classes = 0, claim_index = 0;
  size_t volume_waits = 0, volume_overlays = 0;
  size_t services = 0, spread_owners = 0, spread_index = 0;
  // What the components remember per pod and per job.
  size_t component_records = 0;
};

class ClusterCache {
 public:
  explicit ClusterCache(std::string scheduler_name);

  // ---- Settings. REQUIRES: before the first event.
  // See DefaultSpreading::Enable.
  void EnableDefaultSpreading(bool enabled) { spreading_.Enable(enabled); }
  // The topology levels' node label keys, outermost first (DaemonConfig::topology_keys):
  // they win over Kueue Topology objects' levels.
  void SetTopologyKeys(std::vector<std::string> keys) {
    topology_.Configure(keys);
    state_.SetTopologyKeys(std::move(keys));
  }
  void set_volume_bind_timeout(double seconds) { volumes_.set_bind_timeout(seconds); }
  // How long a pod whose devices have binding conditions waits for them (DynamicResources'
  // bindingTimeout, DaemonConfig::device_binding_timeout_s).
  void set_device_binding_timeout(double seconds) { device_binding_timeout_s_ = seconds; }
  // What DRA devices count as for queues (DaemonConfig::device_class_resources).
  void SetDeviceClassResources(std::vector<dra::ClassResource> map) {
    devices_.SetClassResources(std::move(map));
  }
  // The workload profile (model/arrival_profile.h): each pod of ours counts once, when it
  // first has a task, at its creation time. A half-life of 0 turns it off (empty profile).
  void SetProfileHalfLife(double seconds);
  WorkloadProfile ProfileAt(double now) const;

  ClusterState& state() { return state_; }
  const ClusterState& state() const { return state_; }

  // ---- The cluster's objects.
  void OnPod(k8s::EventType type, const nlohmann::json& object);
  void OnNode(k8s::EventType type, const nlohmann::json& object);
  void OnPodGroup(k8s::GroupApi api, k8s::EventType type, const nlohmann::json& object);
  void OnQueue(k8s::EventType type, const nlohmann::json& object);
  void OnPriorityClass(k8s::EventType type, const nlohmann::json& object);
  // A namespace's labels, for pod affinity terms with a namespaceSelector.
  void OnNamespace(k8s::EventType type, const nlohmann::json& object);
  // Fluid's Dataset objects (data.fluid.io/v1alpha1, where installed): each dataset's size
  // and uid into the model's table, for dataset locality.
  void OnFluidDataset(k8s::EventType type, const nlohmann::json& object);
  // PodDisruptionBudgets (policy/v1) into the model's budgets: status.disruptionsAllowed,
  // or none while the budget's status is older than its spec (as the Eviction API refuses).
  void OnDisruptionBudget(k8s::EventType type, const nlohmann::json& object);

  // ---- The components' objects: each answers with what the cache applies.
  void OnClaim(k8s::EventType type, const nlohmann::json& object);
  void OnPersistentVolume(k8s::EventType type, const nlohmann::json& object);
  void OnStorageClass(k8s::EventType type, const nlohmann::json& object);
  void OnCsiNode(k8s::EventType type, const nlohmann::json& object);
  void OnVolumeAttachment(k8s::EventType type, const nlohmann::json& object);
  void OnCsiDriver(k8s::EventType type, const nlohmann::json& object);
  void OnStorageCapacity(k8s::EventType type, const nlohmann::json& object);
  void OnKueueTopology(k8s::EventType type, const nlohmann::json& object);
  void OnHyperNode(k8s::EventType type, const nlohmann::json& object);
  void OnNodeResourceTopology(k8s::EventType type, const nlohmann::json& object);
  void OnService(k8s::EventType type, const nlohmann::json& object);
  void OnSpreadOwner(k8s::SpreadOwnerKind kind, k8s::EventType type, const nlohmann::json& object);
  // DRA (resource.k8s.io/v1): see DeviceClaims.
  void OnDeviceClass(k8s::EventType type, const nlohmann::json& object);
  void OnResourceSlice(k8s::EventType type, const nlohmann::json& object);
  void OnResourceClaim(k8s::EventType type, const nlohmann::json& object);
  void OnDeviceTaintRule(k8s::EventType type, const nlohmann::json& object);
  // What a session's Snapshot needs of DRA, valid until the cache next changes. Call it
  // before the Snapshot is made: a changed inventory first updates what the nodes' devices
  // and the pods' claims count as (Node::device_capacity, TaskSpec::device_requests).
  DeviceInputs DeviceInputsForSession();
  // The DRA component, read-only: its device counts for the metrics and the live page.
  const DeviceClaims& devices() const { return devices_; }

  // ---- A session's decisions (cluster_cache_assume.cc, cluster_cache_evictions.cc).
  // Records a session's binds as assumed (they count at once) and returns them to send.
  // A pod's DRA allocations are assumed too, and its bind carries the claim writes to do
  // before it (BindRequest::claims); a failed bind forgets them (BindFailed).
  // A pod with delayed claims is not among them: its volume writes are queued
  // (TakeVolumeWrites), and it is bound once its claims are (TakeReadyBinds), or after
  // `now` plus the volume bind timeout it is given up on (ExpireVolumeBindings).
  std::vector<BindRequest> Assume(const Decisions& decisions, double now = 0);
  std::vector<VolumeWrites> TakeVolumeWrites() { return volumes_.TakeWrites(); }
  // The answer to a pod's volume writes. A failure is a failed bind (see BindFailed).
  void VolumeWritesDone(const VolumeWriteResult& result, double now = 0);
  // Binds of pods whose claims are now bound.
  std::vector<BindRequest> TakeReadyBinds() { return volumes_.TakeReadyBinds(); }
  // Gives up on the volume bindings that failed or did not complete by `now`: the pods are
  // placed again after a backoff. Returns how many.
  size_t ExpireVolumeBindings(double now);
  // A bind that did not happen: the pod is pending again (unless the watch showed it bound),
  // but not placed before `now` (seconds, the caller's clock) plus a backoff that doubles
  // with each failure in a row (kBindBackoffInitial..Max seconds). Returns the backoff.
  double BindFailed(const std::string& namespace_, const std::string& name, const std::string& uid,
                    double now = 0);
  // DRA binding conditions (device_claims_binding.cc): the claims of a bind that waits for
  // them are written (BindResult::waiting); the pod stays assumed and waits from `now`.
  void BindingConditionsPending(const BindRequest& request, double now);
  // Adds to *binds the binds of pods whose binding conditions are all True; gives up on
  // those with a failure condition, a claim gone, or past the timeout by `now`: their
  // claims are to be released (TakeClaimReleases) and they are placed again after a
  // backoff. Returns how many were given up.
  size_t PollBindingConditions(double now, std::vector<BindRequest>* binds);
  // Claim writes to take back (ApiWriter::ReleaseClaims).
  std::vector<BindRequest> TakeClaimReleases() { return std::exchange(claim_releases_, {}); }
  // Claims left for pods' extended resources, to delete (DeviceClaims::DeleteLeftExtendedClaim).
  auto TakeLeftClaimDeletes(double now) { return devices_.TakeLeftClaimDeletes(now); }
  bool WaitingForBindingConditions(const std::string& pod_key) const {
    return devices_.WaitingForBinding(pod_key);
  }
  // Pods whose backoff ended by `now` are pending again; returns how many.
  size_t ReleaseHeld(double now);
  static constexpr double kBindBackoffInitial = 1;
  static constexpr double kBindBackoffMax = 60;
  // The session's evictions to send, leaving out pods whose eviction is in flight. Each
  // eviction sent is remembered (engine/eviction_memory.h) at `now`, the session's clock.
  std::vector<EvictRequest> TakeEvictions(const Decisions& decisions, int64_t now);
  // The answer to an eviction: an evicted pod's task counts as releasing at once (until
  // the watch shows the pod terminating or gone); a refused one is running as before, and
  // a later session may evict it again. Returns true for the first refusal in a row of
  // this pod (worth reporting), false otherwise.
  bool EvictionDone(const EvictRequest& request, bool evicted);
  // The session's pipelined pods whose nominated node changed.
  std::vector<NominatedNode> Nominations(const Decisions& decisions);

  // ---- What to tell users (cluster_cache_status.cc).
  // After a session: PodScheduled conditions of pending pods and PodGroup statuses that
  // changed, with the reasons of the session's pending jobs, or why a job is held.
  void CollectStatus(const Decisions& decisions, std::vector<PodCondition>* conditions,
                     std::vector<GroupStatus>* groups, std::vector<ObjectEvent>* events);
  // Events about objects that could not be read, collected since the last call.
  std::vector<ObjectEvent> TakeProblems() { return std::exchange(problems_, {}); }

  // ---- Counts, for metrics and tests.
  int64_t pending_pods() const { return CountPendingPods(state_); }  // ours, not yet placed
  int64_t assumed_pods() const { return assumed_; }
  // Our waiting pods by kind: the cache's first, else their job's (`job_kinds`, by id).
  std::map<PendingKind, int64_t> PendingPodsByKind(
      const std::unordered_map<JobId, PendingKind>& job_kinds) const;
  // Pod records visited by walks over pods since the start (tests hold it to linear bounds).
  int64_t pod_records_visited() const;
  using Sizes = ClusterCacheSizes;
  Sizes sizes() const;

 private:
  using PodRecord = cache::PodRecord;
  using JobRecord = cache::JobRecord;

  // ---- Pods (cluster_cache_pods.cc).
  bool Ours(const k8s::PodInfo& pod) const { return pod.scheduler_name == scheduler_name_; }
  // Makes ClusterState agree with what the pod record says, and the claims it uses.
  void SyncPod(const std::string& key);
  void SyncPodTask(const std::string& key);
  // The spec a pod to place is placed with: its own, as its components resolve it (see the
  // top of this file). False when one keeps it pending (pod.resolve_problem says why).
  bool ResolveSpec(PodRecord& pod, const std::string& key, TaskSpec* spec);
  // Tells the volume binder whether the pod uses its claims now (bound or assumed).
  void UpdateClaimUse(const std::string& key);
  void DropTask(PodRecord& pod);
  void WaitFor(PodRecord& pod, const std::string& key, const std::string& node);
  // What a bound pod counts as on its node (see the top of this file); `*note` says how
  // that differs from what it asks, empty when it does not.
  TaskSpec BoundSpec(const PodRecord& pod, const Node& node, std::string* note) const;
  std::vector<int32_t> DevicesFor(const PodRecord& pod, NodeId node, const TaskSpec& spec) const;
  // Applies what a component answered: its events, then the pods and nodes to sync.
  void Apply(const Resync& resync);
  void Problem(ObjectEvent event) { problems_.push_back(std::move(event)); }
  // Gives up a pod's volume binding: a failed bind, with a Warning event saying why.
  void FailVolumeWait(const std::string& key, const std::string& why, double now);

  // ---- Jobs (cluster_cache_jobs.cc).
  std::string JobKeyOf(const PodRecord& pod) const;
  // Puts the pod in its job's pods (leaving the one it was in) with up-to-date counts.
  JobRecord& JobFor(PodRecord& pod);
  void LeaveJob(PodRecord& pod);
  void ForgetJobIfEmpty(const std::string& key);
  // What a pod adds to its job's counts, and takes away.
  static void Count(JobRecord& job, PodRecord& pod);
  static void Uncount(JobRecord& job, const PodRecord& pod);
  // Why a job's pending pods are not scheduled ("" when they are); *hold: what holds it.
  std::string HoldReason(const JobRecord& job, PendingHold* hold = nullptr) const;
  // Syncs the job's pods again when whether it is held changed (a pod or group changed).
  void ReconsiderHold(const std::string& job_key);
  const k8s::PodGroupInfo* GroupOf(const JobRecord& job) const;
  std::string QueueNameOf(const JobRecord& job) const;
  // Makes the job exist in ClusterState with its current gang size, priority, queue and
  // place in line.
  JobId EnsureStateJob(JobRecord& job);
  void RefreshJob(JobRecord& job);
  // When the job was created: its PodGroup's creationTimestamp, else its earliest pod's.
  int64_t CreatedOf(const JobRecord& job) const;
  // Puts a ClusterState job in line at `created` (see cache::JobLine).
  void FileJob(JobId id, int64_t created) { job_line_.File(id, job_of_id_[id], created, state_); }
  void RemoveStateJob(JobId id);
  // ---- CompositePodGroups (cluster_cache_composite.cc): a job's tree, built again if its
  // groups changed; its tasks put in leaves; pods of a namespace's trees synced again.
  bool BuildTree(JobRecord& job);
  void SetTaskGroups(const JobRecord& job);
  void ResyncTrees(const std::string& namespace_);
  // Its gang's topology request: its native PodGroup's topology constraint, its Volcano
  // PodGroup's networkTopology, else its pods' Kueue annotations (cluster_cache_topology.cc).
  TopologyRequest TopologyOf(const JobRecord& job) const;

  // ---- Nodes (cluster_cache_nodes.cc, cluster_cache_topology.cc, cluster_cache_datasets.cc).
  void RefuseNode(const k8s::ObjectMeta& meta, const std::string& why);
  // "; gantry refused 2 node(s): ..." for pending pods' messages, or "".
  std::string RefusedNodesNote() const;
  // Gives the node in state_ (if there) what the volume binder says of its CSI part now.
  void RefreshNodeCsi(const std::string& node);
  // What a change of the nodes' places means: events, every node's HyperNode labels again,
  // the levels again (jobs that read a Volcano tier read it again), a node's NUMA part.
  void Apply(NodeTopology::Change change);
  void RelabelNodes();
  void ApplyTopologyKeys();
  // What a node's gantry.dev/cached-datasets annotation lists; one that cannot be read is
  // left out (the node is still scheduled: the annotation is a hint) with a Warning event,
  // once while it lasts.
  std::vector<std::string> NodeCachedDatasets(const k8s::ObjectMeta& meta,
                                              const nlohmann::json& object);

  std::string scheduler_name_;
  ClusterState state_;
  // The components (see the top of this file).
  VolumeBinder volumes_;
  DefaultSpreading spreading_;
  EvictionTracker evictions_;
  StatusReporter status_;
  NodeTopology topology_;
  DeviceClaims devices_;
  double device_binding_timeout_s_ = 600;  // DynamicResources' bindingTimeout default
  std::vector<BindRequest> claim_releases_;
  std::optional<ArrivalProfile> arrival_profile_;  // none: off

  // Pods and jobs, and the ids ClusterState gave them.
  std::unordered_map<std::string, PodRecord> pods_;
  std::unordered_map<std::string, JobRecord> jobs_;
  std::vector<std::string> pod_of_task_;  // TaskId -> pod key
  std::vector<std::string> job_of_id_;    // JobId -> job key
  std::unordered_map<std::string, std::set<std::string>> waiting_for_node_;
  std::set<std::pair<double, std::string>> held_;  // (held_until, pod key)
  int64_t assumed_ = 0;
  int64_t pod_records_visited_ = 0;
  cache::SpecTable specs_;
  cache::JobLine job_line_;
  PodGroups groups_;
  QueueObjects queues_;
  // Priority classes and disruption budgets as read.
  std::unordered_map<std::string, int32_t> priority_classes_;
  std::map<std::string, DisruptionBudget> budgets_;  // by "namespace/name", in this order
  // Nodes: refused ones (name -> why), and what decorates them.
  std::map<std::string, std::string> refused_nodes_;
  std::map<std::string, std::string> bad_node_datasets_;   // node name -> what was said
  std::map<std::string, std::string> bad_fluid_datasets_;  // "ns/name" -> what was said
  std::vector<ObjectEvent> problems_;
};

}  // namespace gantry
