// The daemon's view of the cluster: Kubernetes objects from the informers, applied one
// event at a time to a ClusterState that the engine schedules against (never rebuilt
// from scratch). Single-threaded: the scheduler thread owns it. cluster_cache.cc applies
// the events; cluster_cache_status.cc reports status and counts.
//
// What becomes what:
// - a Node is a node (GPUs from nvidia.com/gpu, model and memory from GPU feature
//   discovery's labels). A node that cannot be read is refused with an event, and taken
//   out of scheduling like a deleted one; the pods bound to it still count there, and
//   pending pods' messages say that it was refused and why;
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
//   or the group costs no walk over all the job's pods. A Volcano Queue object gives a
//   queue its weight and limits;
// - among equals, jobs go in line by metadata.creationTimestamp (the PodGroup's, else the
//   job's earliest pod's), then by key: the same line whatever order the informers
//   delivered the objects in, before a restart and after it;
// - pods of other schedulers live in one queue of their own, so that their resources
//   count without taking part in fair sharing;
// - a pending pod's PersistentVolumeClaims (and generic ephemeral volumes' claims) are
//   resolved as kube-scheduler's VolumeRestrictions, VolumeBinding and VolumeZone do
//   (cluster_cache_volumes.cc): a bound volume's node affinity and zone labels join its
//   spec; a claim that is missing, being deleted, lost, unbound with Immediate binding or
//   held (ReadWriteOncePod) by a bound or assumed pod keeps it pending with their words;
//   volumes that attach to a node count against its limit for their CSI driver (the
//   node's CSINode and VolumeAttachments; cluster_cache_csi.cc), for bound pods too. A claim
//   that waits for its first consumer (WaitForFirstConsumer) joins its spec with the
//   volumes that may be bound to it and whether and where its class provisions; once a
//   session places the pod, the choice is written as kube-scheduler writes it (the
//   volume's claimRef, or the claim's selected-node annotation), the pod stays assumed,
//   and it is bound only when its claims are (kube-scheduler's PreBind), or placed again
//   after a backoff when that fails or takes longer than the bind timeout. A claim,
//   volume or class that changes re-syncs only the pending pods that name (the claims
//   of) it, and a volume the pending pods of its class;
// - a pending pod without topology spread constraints of its own is spread by the
//   selector kube-scheduler's default spreading builds (helper.DefaultSelector, see
//   cluster_cache_spread.cc): the selectors of the Services in its namespace that select
//   it, with its controller's when that is a ReplicationController, ReplicaSet or
//   StatefulSet, when the engine's podtopologyspread plugin has default constraints. A
//   Service or controller that cannot be read keeps the pods it may spread pending,
//   saying why; a change re-syncs only the pending pods of its namespace (Services) or
//   those it controls.
//
// Nothing outlives its object: deleted pods, jobs, groups and refused nodes leave every
// index, and specs are shared by pods of one shape and reused once no pod has it.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/pending_reasons.h"
#include "engine/decisions.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "k8s/volumes.h"
#include "k8s/workloads.h"
#include "model/arrival_profile.h"
#include "model/cluster.h"
#include "model/hypernodes.h"

namespace gantry {

inline constexpr const char* kOtherSchedulersQueue = "(other schedulers)";

// A bind to send: the pod, where, and the GPU devices to write on it first (shared GPUs).
struct BindRequest {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string node;
  std::vector<int32_t> gpus;
  bool write_devices = false;
  std::string job;  // its job's key, for messages
};

// An eviction to ask for (policy/v1 Eviction, which PodDisruptionBudgets may refuse).
struct EvictRequest {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string reason;  // the engine's: names the preemptor
  // ---- Why: the eviction metric's cause label and the pod event's reason.
  EvictionCause cause = EvictionCause::kPreempt;
};

// A pod's status.nominatedNodeName to write: the node whose room being released it waits
// for (empty: clear it).
struct NominatedNode {
  std::string namespace_;
  std::string name;
  std::string node;
};

// What to write so that a pod's delayed claims bind where the session placed it, in order
// (kube-scheduler's bindAPIUpdate): a volume's spec.claimRef, a claim's selected-node
// annotation. Each is a merge patch conditional on the resourceVersion it was chosen on.
struct VolumeWrite {
  std::string path;        // the object's API path
  std::string patch;       // JSON merge patch
  std::string what;        // `persistentvolume "pv-1"`, for messages
  std::string object_key;  // "pv/NAME" or "pvc/NAMESPACE/NAME"
};
struct VolumeWrites {
  std::string namespace_;  // the pod's
  std::string name;
  std::string uid;
  std::vector<VolumeWrite> writes;
};
struct VolumeWriteResult {
  std::string namespace_;  // the pod's
  std::string name;
  std::string uid;
  bool ok = false;
  std::string error;
  // Per object written (VolumeWrite::object_key), its resourceVersion after the write:
  // until the watch shows that version, the object is not judged.
  std::vector<std::pair<std::string, std::string>> versions;
};

// Something to tell users: a Kubernetes Event on an object.
struct ObjectEvent {
  std::string api_version;  // of the object: "v1", "scheduling.volcano.sh/v1beta1", ...
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string type;  // Normal or Warning
  std::string reason;
  std::string message;
};

// The PodScheduled=False condition for a pending pod.
// A PodScheduled=False condition to write.
struct PodCondition {
  std::string namespace_;
  std::string name;
  std::string message;
  std::string reason = "Unschedulable";  // or SchedulingGated
};

// kube-scheduler's words for a pod held back by its scheduling gates.
inline constexpr const char* kSchedulingGatedMessage =
    "Scheduling is blocked due to non-empty scheduling gates";

// A PodGroup's status.
struct GroupStatus {
  k8s::GroupApi api = k8s::GroupApi::kVolcano;
  std::string namespace_;
  std::string name;
  std::string phase;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::string unschedulable_message;  // empty: schedulable
};

class ClusterCache {
 public:
  explicit ClusterCache(std::string scheduler_name);

  // Whether pending pods get TaskSpec::default_spread_selector (the engine's
  // podtopologyspread plugin has default constraints: PodTopologySpreadHasDefaults). Set
  // before the first event.
  void EnableDefaultSpreading(bool enabled) { default_spreading_ = enabled; }
  // The topology levels' node label keys, outermost first (DaemonConfig::topology_keys):
  // they win over Kueue Topology objects' levels. REQUIRES: before the first event.
  void SetTopologyKeys(std::vector<std::string> keys) {
    configured_topology_keys_ = keys;
    state_.SetTopologyKeys(std::move(keys));
  }

  ClusterState& state() { return state_; }
  const ClusterState& state() const { return state_; }

  void OnPod(k8s::EventType type, const nlohmann::json& object);
  void OnNode(k8s::EventType type, const nlohmann::json& object);
  void OnPodGroup(k8s::GroupApi api, k8s::EventType type, const nlohmann::json& object);
  void OnQueue(k8s::EventType type, const nlohmann::json& object);
  // Kueue's Topology: with no configured topologyKeys, the levels of the first Topology by
  // name are the cluster's topology levels (the model's default when there is none).
  void OnKueueTopology(k8s::EventType type, const nlohmann::json& object);
  // Volcano's HyperNodes: with neither topologyKeys nor a Kueue Topology, their tiers are
  // the levels, and each node is labelled with the HyperNode of each tier that holds it
  // (cluster_cache_topology.cc). Problems (a cycle, a bad member) are events.
  void OnHyperNode(k8s::EventType type, const nlohmann::json& object);
  // Node Feature Discovery's NodeResourceTopology: its node's NUMA nodes and topology
  // manager policy (model/numa.h), kept by node name and given to the node whenever either
  // changes (cluster_cache_numa.cc). One that does not match its node is an event.
  void OnNodeResourceTopology(k8s::EventType type, const nlohmann::json& object);
  void OnPriorityClass(k8s::EventType type, const nlohmann::json& object);
  // A namespace's labels, for pod affinity terms with a namespaceSelector.
  void OnNamespace(k8s::EventType type, const nlohmann::json& object);
  void OnClaim(k8s::EventType type, const nlohmann::json& object);
  void OnPersistentVolume(k8s::EventType type, const nlohmann::json& object);
  void OnStorageClass(k8s::EventType type, const nlohmann::json& object);
  // CSI objects (cluster_cache_csi.cc): nodes' drivers and volume limits, attachments,
  // drivers' settings, storage capacity for provisioning.
  void OnCsiNode(k8s::EventType type, const nlohmann::json& object);
  void OnVolumeAttachment(k8s::EventType type, const nlohmann::json& object);
  void OnCsiDriver(k8s::EventType type, const nlohmann::json& object);
  void OnStorageCapacity(k8s::EventType type, const nlohmann::json& object);
  // Services and the controllers default spreading reads (cluster_cache_spread.cc).
  void OnService(k8s::EventType type, const nlohmann::json& object);
  void OnSpreadOwner(k8s::SpreadOwnerKind kind, k8s::EventType type, const nlohmann::json& object);

  // PodDisruptionBudgets (policy/v1) into the model's budgets (cluster_cache_evictions.cc):
  // status.disruptionsAllowed, or none while the budget's status is older than its spec
  // (as the Eviction API then refuses).
  void OnDisruptionBudget(k8s::EventType type, const nlohmann::json& object);
  // Fluid's Dataset objects (data.fluid.io/v1alpha1, where installed): each dataset's size
  // and uid into the model's table (cluster_cache_datasets.cc). Dataset locality.
  void OnFluidDataset(k8s::EventType type, const nlohmann::json& object);
  // The session's evictions to send, leaving out pods whose eviction is in flight. Each
  // defragment eviction sent is remembered at `now` (the session's clock,
  // SessionOptions::now), which the action's budget counts.
  std::vector<EvictRequest> TakeEvictions(const Decisions& decisions, int64_t now);
  // The answer to an eviction: an evicted pod's task counts as releasing at once (until
  // the watch shows the pod terminating or gone); a refused one is running as before, and
  // a later session may evict it again. Returns true for the first refusal in a row of
  // this pod (worth reporting), false otherwise.
  bool EvictionDone(const EvictRequest& request, bool evicted);
  // The session's pipelined pods whose nominated node changed.
  std::vector<NominatedNode> Nominations(const Decisions& decisions);

  // Records a session's binds as assumed (they count at once) and returns them to send.
  // A pod with delayed claims is not among them: its volume writes are queued
  // (TakeVolumeWrites), and it is bound once its claims are (TakeReadyBinds), or after
  // `now` plus the volume bind timeout it is given up on (ExpireVolumeBindings).
  std::vector<BindRequest> Assume(const Decisions& decisions, double now = 0);
  std::vector<VolumeWrites> TakeVolumeWrites() { return std::exchange(volume_writes_, {}); }
  // The answer to a pod's volume writes. A failure is a failed bind (see BindFailed).
  void VolumeWritesDone(const VolumeWriteResult& result, double now = 0);
  // Binds of pods whose claims are now bound.
  std::vector<BindRequest> TakeReadyBinds() { return std::exchange(ready_binds_, {}); }
  // Gives up on the volume bindings that failed (a volume lost its claimRef, provisioning
  // gave up) or did not complete by `now`: the pods are placed again after a backoff.
  // Returns how many.
  size_t ExpireVolumeBindings(double now);
  void set_volume_bind_timeout(double seconds) { volume_bind_timeout_s_ = seconds; }
  // A bind that did not happen: the pod is pending again, unless the API server has
  // told us meanwhile that it is bound; but it is not placed again before `now` plus a
  // backoff that doubles with each failure in a row (kBindBackoffInitial..Max seconds),
  // so that a bind the API server keeps refusing is not retried every cycle. `now` is in
  // seconds on the caller's clock. Returns the backoff.
  double BindFailed(const std::string& namespace_, const std::string& name, const std::string& uid,
                    double now = 0);
  // Pods whose backoff ended by `now` are pending again; returns how many.
  size_t ReleaseHeld(double now);
  static constexpr double kBindBackoffInitial = 1;
  static constexpr double kBindBackoffMax = 60;

  // What to write after a session: PodScheduled conditions for pending pods whose
  // message changed, and PodGroup statuses that changed. Reasons come from the session's
  // pending jobs, or from why a job is held.
  void CollectStatus(const Decisions& decisions, std::vector<PodCondition>* conditions,
                     std::vector<GroupStatus>* groups, std::vector<ObjectEvent>* events);
  // Events about objects that could not be read (a malformed PodGroup, a pod asking for
  // something impossible), collected since the last call.
  std::vector<ObjectEvent> TakeProblems();

  // ---- The workload profile (issue 14, model/arrival_profile.h): each pod of ours counts
  // once, at its creation time, the first time it has a task; the profile at `now` (wall
  // seconds) is what the scheduler gives the engine. A half-life of 0 turns it off (the
  // profile is empty, as before). REQUIRES: before the first event.
  void SetProfileHalfLife(double seconds);
  WorkloadProfile ProfileAt(double now) const;

  // Counts for metrics.
  int64_t pending_pods() const;  // ours, not yet placed
  int64_t assumed_pods() const { return assumed_; }
  std::map<std::string, int64_t> PendingPodsByQueue() const;
  // Nodes in the cluster (removed ones left out) and their GPUs, in milli-GPUs.
  struct NodeCounts {
    int64_t nodes = 0;
    Milli gpus_capacity = 0;
    Milli gpus_allocated = 0;
  };
  NodeCounts CountNodes() const;
  // Our waiting pods by the kind of what keeps them waiting: what the cache itself knows
  // (gates, a spec it cannot read, volumes, a missing group, a bind backoff) first, else
  // the kind of their job's reason in the last session (`job_kinds`, by job id), else
  // not_considered. Walks every pod (cluster_cache_pending.cc).
  std::map<PendingKind, int64_t> PendingPodsByKind(
      const std::unordered_map<JobId, PendingKind>& job_kinds) const;

  // Pod records visited by walks over a job's pods, since the start: a measure of work
  // that tests hold to linear bounds.
  int64_t pod_records_visited() const { return pod_records_visited_; }
  // What the cache holds, for tests that check nothing outlives its object.
  struct Sizes {
    size_t pods = 0;
    size_t jobs = 0;
    size_t groups = 0;
    size_t waiting_for_node = 0;  // pods waiting for a node, over all nodes
    size_t specs = 0;
    size_t status_dirty = 0;
    size_t refused_nodes = 0;
    size_t claims = 0;           // PersistentVolumeClaims, read or not
    size_t volumes = 0;          // PersistentVolumes, read or not
    size_t storage_classes = 0;  // read or not
    size_t claim_index = 0;      // entries of the indexes from pods and objects to claims
    size_t volume_waits = 0;     // pods waiting for their delayed claims to bind
    size_t volume_overlays = 0;  // choices assumed on volumes and claims (claimRef, node)
    size_t services = 0;         // read or not
    size_t spread_owners = 0;    // ReplicationControllers, ReplicaSets, StatefulSets, read or not
    size_t spread_index = 0;     // entries of the indexes of pods by namespace and owner
  };
  Sizes sizes() const;

 private:
  // Messages we keep and write are bounded, whatever the text they quote.
  static constexpr size_t kMaxMessage = 1024;
  static std::string Bounded(std::string text, size_t limit) {
    if (text.size() > limit) text = text.substr(0, limit) + "...";
    return text;
  }
  static std::string ApiVersionOf(k8s::GroupApi api) {
    return api == k8s::GroupApi::kCoscheduling ? "scheduling.x-k8s.io/v1alpha1"
                                               : "scheduling.volcano.sh/v1beta1";
  }

  struct PodRecord {
    k8s::PodInfo info;             // what could be read of it
    std::string problem;           // why we cannot schedule it as written; empty when we can
    std::string job_key;           // the job whose pods it is in; empty when none
    int32_t counted_priority = 0;  // what it adds to that job's counts
    std::string counted_queue;
    int64_t counted_created = 0;
    TopologyRequest counted_topology;
    std::string waiting_for;  // the node it is bound to and that we do not know yet
    TaskId task = kNone;
    bool assumed = false;         // placed by us; the API server has not yet shown it bound
    bool adjusted = false;        // counted as more than it asks (unreadable, or too many GPUs)
    bool profiled = false;        // counted in the workload profile
    std::string written_message;  // PodScheduled message we last wrote
    std::string accounting_note;  // the last event about how it is counted on its node
    int32_t bind_failures = 0;    // in a row; 0 once it is seen bound
    double held_until = 0;        // after a failed bind: not placed again before this
    std::string volume_problem;   // why its volumes keep it pending; empty when they do not
    bool holds_claims = false;    // bound and not finished, or assumed: its claims are in use
    std::vector<std::string> indexed_claims;  // its keys in pods_by_claim_
    // Assumed, with delayed claims being bound: what was chosen, and the bind to send
    // once its claims are bound.
    struct VolumeWait {
      std::string node;
      std::vector<std::pair<std::string, std::string>> bindings;  // claim name, volume
      std::vector<std::string> provisions;                        // claim names
      double deadline = 0;
      bool written = false;                         // the API server took the writes
      std::map<std::string, std::string> versions;  // see VolumeWriteResult
      std::string failure;                          // why it failed; "" while it has not
      BindRequest bind;
    };
    std::optional<VolumeWait> volume_wait;
    // Why default spreading keeps it pending (an unreadable Service or controller), or "".
    std::string spread_problem;
    // The Services that selected it when its default selector was last made (sorted), or
    // none when it was not made.
    std::vector<std::string> spread_services;
    bool spread_indexed = false;    // in spread_pods_by_namespace_ (and by owner, if any)
    std::string spread_owner_key;   // its key in spread_pods_by_owner_; "": none
    bool evicting = false;          // an eviction is in flight
    bool evicted = false;           // the API server took its eviction
    int32_t eviction_refusals = 0;  // in a row
    std::string nominated_node;     // the nominatedNodeName we last wrote
  };
  struct JobRecord {
    std::string key;
    k8s::GroupApi api = k8s::GroupApi::kNone;
    std::string namespace_;
    std::string group;  // empty for a pod without a group
    bool ours = true;   // false: a pod of another scheduler
    std::set<std::string> pods;
    // Over its pods: how many have each priority, each queue annotation and each
    // creation time (seconds).
    std::map<int32_t, int32_t> priorities;
    std::map<std::string, int32_t> queues;
    std::map<int64_t, int32_t> created;
    // (level, required) of the pods' Kueue topology annotations.
    std::map<std::pair<std::string, bool>, int32_t> topologies;
    JobId id = kNone;
    std::string written_phase;
    std::string written_message;
    int32_t written_running = -1;
  };

  std::set<std::pair<double, std::string>> held_;  // (held_until, pod key)

  bool Ours(const k8s::PodInfo& pod) const { return pod.scheduler_name == scheduler_name_; }
  std::string JobKeyOf(const PodRecord& pod) const;
  // Its gang's topology request: its Volcano PodGroup's networkTopology, else its pods'
  // Kueue annotations.
  TopologyRequest TopologyOf(const JobRecord& job) const;
  // The levels from the sources in their order (cluster_cache_topology.cc); jobs that
  // read a Volcano tier read it again when they change.
  void ApplyTopologyKeys();
  // A node's labels for the HyperNodes that hold it, added to those it has.
  void AddHyperNodeLabels(Node& node) const;
  // Gives a node the NUMA description of its NodeResourceTopology, when there is one and it
  // matches the node's devices; otherwise none, and says why once.
  void AttachNuma(Node& node);
  // Every node's HyperNode labels again, after the HyperNodes changed.
  void RelabelNodes();
  // Puts the pod in its job's pods (leaving the one it was in) with up-to-date counts.
  JobRecord& JobFor(PodRecord& pod);
  void LeaveJob(PodRecord& pod);
  // What a pod adds to its job's counts, and takes away.
  static void Count(JobRecord& job, PodRecord& pod);
  static void Uncount(JobRecord& job, const PodRecord& pod);
  // Why a job's pending pods are not scheduled; empty when they are.
  std::string HoldReason(const JobRecord& job) const;
  const k8s::PodGroupInfo* GroupOf(const JobRecord& job) const;
  std::string QueueNameOf(const JobRecord& job) const;
  // The queue's id, made on first use; kNone when a queue named by a workload (not by a
  // Queue object) would go beyond kMaxQueuesFromWorkloads.
  QueueId QueueFor(const std::string& name, bool from_workload);
  // Links every Queue object to its parent (spec.parent, by name, among Queue objects;
  // "root" with no Queue of that name is the top level, as Volcano's implicit root), and
  // reports each queue that is out of the tree (a missing parent, a cycle, a guarantee
  // that does not fit its parent's) with a Warning. Their jobs wait with that reason.
  void RelinkQueues();
  bool QueueRefused(const std::string& name) const;
  // Makes the job exist in ClusterState with its current gang size, priority, queue and
  // place in line.
  JobId EnsureStateJob(JobRecord& job);
  void RefreshJob(JobRecord& job);
  // When the job was created: its PodGroup's creationTimestamp, else its earliest pod's.
  int64_t CreatedOf(const JobRecord& job) const;
  // Puts a ClusterState job in line at `created` (see job_order_), or takes it out.
  void FileJob(JobId id, int64_t created);
  void UnfileJob(JobId id);
  void RemoveStateJob(JobId id);
  // Makes ClusterState agree with what the pod record says, and the claims it holds.
  void SyncPod(const std::string& key);
  void SyncPodTask(const std::string& key);
  void DropTask(PodRecord& pod);
  void WaitFor(PodRecord& pod, const std::string& key, const std::string& node);
  // What a bound pod counts as on its node (see the top of this file); `*note` says how
  // that differs from what it asks, empty when it does not.
  TaskSpec BoundSpec(const PodRecord& pod, const Node& node, std::string* note) const;
  // Specs shared by pods of one shape, counted, and their slots reused once unused.
  SpecId AcquireSpec(const TaskSpec& spec);
  void ReleaseSpec(SpecId id);
  SpecId FindSpec(const TaskSpec& spec) const;
  std::vector<int32_t> DevicesFor(const PodRecord& pod, NodeId node, const TaskSpec& spec) const;
  void Problem(ObjectEvent event);
  void ForgetJobIfEmpty(const std::string& key);
  void RefuseNode(const k8s::ObjectMeta& meta, const std::string& why);
  // "; gantry refused 2 node(s): ..." for pending pods' messages, or "".
  std::string RefusedNodesNote() const;

  // Volumes (cluster_cache_volumes.cc). Claims are keyed "namespace/name".
  // The spec a pending pod is placed with: its own, with what its volumes require (see
  // the top of this file). Returns why its volumes keep it pending, or "".
  std::string ResolveVolumes(const PodRecord& pod, TaskSpec* spec) const;
  // Keeps pods_by_claim_ in step with the claims the pod names (none once it is gone).
  void IndexPodClaims(PodRecord& pod, const std::string& key, bool gone);
  // Whether the pod holds its claims now; when that changes, the pending pods that want
  // one of its ReadWriteOncePod claims are synced again (`gone`: it is being deleted).
  void UpdateClaimUse(PodRecord& pod, const std::string& key, bool gone = false);
  // A pod other than `except` that holds the claim through a persistentVolumeClaim
  // volume (what kube-scheduler counts), or nullptr.
  const PodRecord* ClaimHolder(const std::string& claim_key, const std::string& except) const;
  // Syncs the pending pods of ours that name the claim, but `except`.
  void ResyncClaimPods(const std::string& claim_key, const std::string& except = "");
  // Moves a claim in claims_by_volume_ and claims_by_class_.
  void IndexClaim(const std::string& key, const k8s::ClaimInfo* before,
                  const k8s::ClaimInfo* after);
  // Delayed binding (cluster_cache_binding.cc).
  // What VolumeBinding may do with the claim, as TaskSpec::delayed_claims holds it.
  DelayedClaim DelayedClaimOf(const k8s::ClaimInfo& claim) const;
  // The claimRef of a volume, as assumed by a binding in flight if one is.
  const std::optional<k8s::ClaimRef>& ClaimRefOf(const k8s::PersistentVolumeInfo& pv) const;
  // Records the choices of a placed pod with delayed claims: its writes and its wait.
  // False (with a Problem) when they cannot be made. The claims and classes whose
  // pending pods must see the choice are added to *resync_claims and *resync_classes,
  // for the caller to sync once it no longer holds task ids of the session.
  bool AssumeVolumes(PodRecord& pod, const std::string& key, const BindDecision& decision,
                     const TaskSpec& spec, BindRequest bind, double now,
                     std::vector<std::string>* resync_claims,
                     std::vector<std::string>* resync_classes);
  // Takes back the choices assumed for a pod's wait (not what was written: kube-scheduler
  // reverts its assume cache only), and ends the wait.
  void EndVolumeWait(PodRecord& pod, const std::string& key);
  // Checks a waiting pod's claims: moves its bind to ready_binds_ when they are all bound,
  // or returns why the binding failed; "" while it goes on.
  std::string CheckVolumeWait(PodRecord& pod, const std::string& key);
  // Gives up a pod's volume binding: a failed bind, with a Warning event saying why.
  void FailVolumeWait(const std::string& key, const std::string& why, double now);
  // Syncs the pending pods that could use a volume of the class.
  void ResyncClassPods(const std::string& storage_class);

  // CSI (cluster_cache_csi.cc).
  // Adds to spec->attachable_volumes what the pod's claims attach as (CSILimits'
  // filterAttachableVolumes: a claim not found counts nothing), then sorts them and keeps
  // each once. For a pod to place (`to_place`), marks those whose driver must be on the node.
  void AddClaimVolumes(const k8s::PodInfo& info, bool to_place, TaskSpec* spec) const;
  // What the node's CSINode and the VolumeAttachments naming it say.
  NodeCsi NodeCsiOf(const std::string& node) const;
  // Gives the node in state_ (if there) what NodeCsiOf says now.
  void RefreshNodeCsi(const std::string& node);
  // The nodes whose attachments name the persistent volume, refreshed after it changed.
  void RefreshAttachmentsOf(const std::string& volume);
  // What storage capacity tracking adds to a delayed claim of class `sc`.
  void AddStorageCapacity(const k8s::ClaimInfo& claim, const k8s::StorageClassInfo& sc,
                          DelayedClaim* out) const;

  // Default spreading (cluster_cache_spread.cc). Sets spec->default_spread_selector for a
  // pod to place, as kube-scheduler's DefaultSelector builds it; returns why an object it
  // needs cannot be read (the pod then waits), or "".
  std::string ResolveDefaultSpread(PodRecord& pod, TaskSpec* spec);
  // Keeps the pod in the indexes a Service's or a controller's change reads (pods of ours
  // not bound, without constraints of their own); out of them once `gone`.
  void IndexSpreadPod(PodRecord& pod, const std::string& key, bool gone);
  // Syncs the pods in `keys` that wait to be placed.
  void ResyncSpreadPods(const std::vector<std::string>& keys);

  std::string scheduler_name_;
  ClusterState state_;
  std::optional<ArrivalProfile> arrival_profile_;  // none: off
  std::unordered_map<std::string, PodRecord> pods_;
  std::unordered_map<std::string, JobRecord> jobs_;
  std::vector<std::string> pod_of_task_;  // TaskId -> pod key
  // PodDisruptionBudgets by "namespace/name", as the model has them (in this order).
  std::map<std::string, DisruptionBudget> budgets_;
  std::vector<std::string> job_of_id_;  // JobId -> job key
  // ClusterState's jobs in line: by creation time, then key (then id, for a key that two
  // live jobs share for a moment). Job::creation is created * kOrderSlots + the job's slot
  // among those created in that second, so that the session's order (Job::creation, then
  // JobId) is this one whatever order the objects came in.
  static constexpr int64_t kOrderSlots = int64_t{1} << 24;
  std::set<std::tuple<int64_t, std::string, JobId>> job_order_;
  std::vector<int64_t> filed_at_;  // JobId -> its creation time in job_order_
  std::vector<bool> filed_;        // JobId -> whether it is in job_order_
  // PodGroups by "api|namespace/name": read, or why they could not be.
  std::vector<std::string> configured_topology_keys_;
  std::vector<std::string> default_topology_keys_ = ClusterState().topology_keys();
  std::map<std::string, std::vector<std::string>> kueue_topologies_;         // by name: levels
  std::map<std::string, std::pair<k8s::ObjectMeta, HyperNode>> hypernodes_;  // by name
  HyperNodeTree hypernode_tree_;
  std::set<std::string> hypernode_problems_;  // said already, while they last
  // NodeResourceTopology objects by name (their node's): what was read of each, and the
  // problem last said of it (empty when none).
  struct NumaRecord {
    k8s::ObjectMeta meta;
    NodeNuma numa;
    std::string problem;
  };
  std::map<std::string, NumaRecord> node_numa_;
  std::unordered_map<std::string, k8s::PodGroupInfo> groups_;
  std::unordered_map<std::string, std::string> bad_groups_;
  std::unordered_map<std::string, k8s::QueueInfo> queues_;
  size_t queues_from_workloads_ = 0;  // queues made for a name no Queue object had
  // By Queue object name: the tree problem last reported for it, so that each is
  // reported once (see RelinkQueues).
  std::unordered_map<std::string, std::string> queue_problems_;
  std::unordered_map<std::string, int32_t> priority_classes_;
  std::unordered_map<std::string, std::set<std::string>> waiting_for_node_;
  std::map<std::string, std::string> refused_nodes_;             // node name -> why
  std::unordered_map<TaskSpec, SpecId, TaskSpecHash> spec_ids_;  // live specs
  std::vector<int32_t> spec_uses_;                               // SpecId -> tasks using it
  std::vector<SpecId> free_specs_;
  std::vector<ObjectEvent> problems_;
  // Volumes: as read, or why they could not be; and who names what.
  std::unordered_map<std::string, k8s::ClaimInfo> claims_;
  std::unordered_map<std::string, std::string> bad_claims_;
  std::unordered_map<std::string, k8s::PersistentVolumeInfo> volumes_;
  std::unordered_map<std::string, std::string> bad_volumes_;
  std::unordered_map<std::string, k8s::StorageClassInfo> storage_classes_;
  std::unordered_map<std::string, std::string> bad_storage_classes_;
  std::unordered_map<std::string, std::set<std::string>> pods_by_claim_;     // claim -> pods
  std::unordered_map<std::string, std::set<std::string>> claims_by_volume_;  // PV -> claims
  std::unordered_map<std::string, std::set<std::string>> claims_by_class_;   // class -> claims
  std::unordered_map<std::string, std::set<std::string>> volumes_by_class_;  // class -> PVs
  // CSI objects: as last read (an object that cannot be read keeps what was read of it
  // before, with an event), and indexes of attachments by node and by volume.
  std::unordered_map<std::string, k8s::CsiNodeInfo> csi_nodes_;
  std::unordered_map<std::string, k8s::VolumeAttachmentInfo> volume_attachments_;
  std::unordered_map<std::string, std::set<std::string>> attachments_by_node_;
  std::unordered_map<std::string, std::set<std::string>> attachments_by_volume_;
  std::unordered_map<std::string, k8s::CsiDriverInfo> csi_drivers_;
  std::unordered_map<std::string, k8s::StorageCapacityInfo> storage_capacities_;  // ns/name
  std::unordered_map<std::string, std::set<std::string>> capacities_by_class_;
  std::unordered_map<std::string, std::string> bad_csi_objects_;  // "kind/key" -> what was said
  // Delayed binding: choices of bindings in flight, as kube-scheduler's assume cache keeps
  // them, counted by the waits that made them.
  struct AssumedRef {
    std::optional<k8s::ClaimRef> ref;
    int32_t uses = 0;
  };
  struct AssumedNode {
    std::string node;
    int32_t uses = 0;
  };
  std::unordered_map<std::string, AssumedRef> assumed_claim_refs_;       // PV -> claimRef
  std::unordered_map<std::string, AssumedNode> assumed_selected_nodes_;  // claim -> node
  std::set<std::pair<double, std::string>> volume_waits_;                // (deadline, pod key)
  std::set<std::string> volume_failures_;  // pods whose wait failed, for ExpireVolumeBindings
  std::vector<VolumeWrites> volume_writes_;
  std::vector<BindRequest> ready_binds_;
  double volume_bind_timeout_s_ = 600;  // kube-scheduler's bindTimeoutSeconds
  // Default spreading: Services by namespace then name (their selectors, or why they could
  // not be read), the controllers by "kind|namespace/name", and the pods their changes
  // re-sync.
  bool default_spreading_ = false;
  std::unordered_map<std::string, std::map<std::string, Labels>> services_;
  std::unordered_map<std::string, std::map<std::string, std::string>> bad_services_;
  std::unordered_map<std::string, k8s::SpreadOwnerInfo> spread_owners_;
  std::unordered_map<std::string, std::string> bad_spread_owners_;
  std::unordered_map<std::string, std::set<std::string>> spread_pods_by_namespace_;
  std::unordered_map<std::string, std::set<std::string>> spread_pods_by_owner_;
  int64_t assumed_ = 0;
  int64_t pod_records_visited_ = 0;
  // Jobs whose pods or group changed since the last CollectStatus: with the session's
  // pending jobs, the only ones whose status can have changed. Only live jobs' keys.
  std::set<std::string> status_dirty_;

  // ---- Dataset locality (issue 13, cluster_cache_datasets.cc).
  // What a node's gantry.dev/cached-datasets annotation lists; one that cannot be read is
  // left out (the node is still scheduled: the annotation is a hint) with a Warning
  // event, once while it lasts (bad_node_datasets_: node name -> what was said).
  std::vector<std::string> NodeCachedDatasets(const k8s::ObjectMeta& meta,
                                              const nlohmann::json& object);
  // Adds the Fluid datasets of the volumes of the pod's bound claims to spec->datasets;
  // returns why the pod cannot be scheduled (more than kMaxDatasetsPerTask), or "".
  std::string AddClaimDatasets(const k8s::PodInfo& info, TaskSpec* spec) const;
  std::map<std::string, std::string> bad_node_datasets_;
  std::map<std::string, std::string> bad_fluid_datasets_;  // "ns/name" -> what was said
};

}  // namespace gantry
