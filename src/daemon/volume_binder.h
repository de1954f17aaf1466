// Volume binding in the daemon, as kube-scheduler's VolumeBinding plugin owns it beside the
// scheduler cache: the PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSI
// objects from the watch, what a pending pod's volumes mean for where it may run, and the
// binding of claims that wait for their first consumer, with its own assume cache.
//
// - Resolve: a pending pod's claims are resolved as kube-scheduler's VolumeRestrictions,
//   VolumeBinding and VolumeZone do (volume_binder_resolve.cc): a bound volume's node
//   affinity and zone labels join its spec; a claim that is missing, being deleted, lost,
//   unbound with Immediate binding or held (ReadWriteOncePod) by a bound or assumed pod keeps
//   it pending with their words; volumes that attach to a node count against its limit for
//   their CSI driver (the node's CSINode and VolumeAttachments, volume_binder_csi.cc), for
//   bound pods too. A claim that waits for its first consumer (WaitForFirstConsumer) joins
//   the spec with the volumes that may be bound to it and whether and where its class
//   provisions.
// - Assume: once a session places such a pod, the choice is assumed (other pods see the
//   volume taken, the claim's node selected) and written as kube-scheduler writes it (the
//   volume's claimRef, or the claim's selected-node annotation); the pod's bind waits until
//   its claims are bound (kube-scheduler's PreBind), then comes out of TakeReadyBinds.
//   Forget takes the assumption back; Poll says which waits failed or timed out.
//
// The binder never calls back into the cache: each change answers with a Resync (the pods
// whose claims, volumes or classes changed, the nodes whose CSI part did), which the cache
// applies. A change that can end a pod's wait for its claims is given the cluster
// (`cluster`): the wait checks its volumes' node affinity against its node's labels there.
// Nothing is written there. Claims are keyed "namespace/name", pods "namespace/name".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/api_requests.h"
#include "daemon/resync.h"
#include "engine/decisions.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "k8s/volumes.h"
#include "model/cluster.h"

namespace gantry {

class VolumeBinder {
 public:
  // How long a pod's bind waits for its claims to be bound (kube-scheduler's
  // bindTimeoutSeconds), counted from when its writes are done.
  void set_bind_timeout(double seconds) { bind_timeout_s_ = seconds; }

  // ---- Objects from the watch (volume_binder.cc, volume_binder_csi.cc). Each returns the
  // pods whose spec the change may alter (those that name a claim it touches; a volume's
  // change, the pending pods of its class) and the nodes whose CSI part changed.
  Resync OnClaim(k8s::EventType type, const nlohmann::json& object, const ClusterState& cluster);
  Resync OnPersistentVolume(k8s::EventType type, const nlohmann::json& object,
                            const ClusterState& cluster);
  Resync OnStorageClass(k8s::EventType type, const nlohmann::json& object,
                        const ClusterState& cluster);
  Resync OnCsiNode(k8s::EventType type, const nlohmann::json& object);
  Resync OnVolumeAttachment(k8s::EventType type, const nlohmann::json& object);
  // Whether a driver must be on the node, and whether its classes track capacity: every
  // pod to place that has volumes reads both (Resync::pods_with_volumes).
  Resync OnCsiDriver(k8s::EventType type, const nlohmann::json& object);
  Resync OnStorageCapacity(k8s::EventType type, const nlohmann::json& object,
                           const ClusterState& cluster);

  // ---- The pods that name claims.
  // Follows the claims `pod` names, as it is now (a pod that names none is not followed).
  void TrackPod(const std::string& key, const k8s::PodInfo& pod);
  // Whether the pod uses its claims now (bound and not finished, or assumed). When that
  // changes, the pods that want one of its ReadWriteOncePod claims are to be synced.
  Resync SetClaimsInUse(const std::string& key, bool in_use, const ClusterState& cluster);
  // The pod is gone: it names and uses no claim any more.
  Resync ForgetPod(const std::string& key, const ClusterState& cluster);

  // ---- What a pod's volumes mean for where it may run (volume_binder_resolve.cc).
  // The spec a pending pod is placed with: its own, with what its volumes require, and the
  // Fluid datasets its bound claims read. Returns why its volumes keep it pending, or "".
  std::string Resolve(const k8s::PodInfo& pod, TaskSpec* spec) const;
  // Adds to spec->attachable_volumes what the pod's claims attach as (CSILimits'
  // filterAttachableVolumes: a claim not found counts nothing), then sorts them and keeps
  // each once. For a pod to place (`to_place`), marks those whose driver must be on the node.
  void AddAttachableVolumes(const k8s::PodInfo& pod, bool to_place, TaskSpec* spec) const;
  // What the node's CSINode and the VolumeAttachments naming it say.
  NodeCsi NodeCsiOf(const std::string& node) const;

  // ---- Delayed binding (volume_binder_wait.cc).
  // The claims and classes whose pending pods must see what Assume chose.
  struct Touched {
    std::vector<std::string> claims;
    std::vector<std::string> classes;
  };
  // Assumes the volumes a session chose for the delayed claims of a pod it placed
  // (`decision`, `spec` its task's) and queues their writes (TakeWrites); `bind` is sent once
  // the claims are bound (TakeReadyBinds), or the wait is given up after `now` plus the bind
  // timeout (Poll). Returns why the choice cannot be assumed ("" when it is); what it touched
  // is added to *touched, for ResyncAfterAssume once the session's binds are all assumed.
  std::string Assume(const std::string& key, const BindDecision& decision, const TaskSpec& spec,
                     BindRequest bind, double now, Touched* touched);
  Resync ResyncAfterAssume(const Touched& touched, const ClusterState& cluster);
  // Whether the pod's bind waits for its claims.
  bool Waiting(const std::string& key) const { return waits_.count(key) > 0; }
  // Takes back what was assumed for the pod's wait (not what was written: kube-scheduler
  // reverts its assume cache only), and ends the wait.
  Resync Forget(const std::string& key, const ClusterState& cluster);
  // The API server's answer to a pod's volume writes. Returns why its binding failed, for
  // the caller to give it up (Forget, and a failed bind); nothing while it goes on, or once
  // its claims are bound (its bind is then ready). *resync: what the end of the wait changed.
  std::optional<std::string> WritesDone(const VolumeWriteResult& result, double now,
                                        const ClusterState& cluster, Resync* resync);
  // The waits to give up at `now`, in order: those whose binding failed (a volume lost its
  // claimRef, provisioning gave up), then those past their deadline, as (pod key, why). The
  // caller gives each up in turn, unless the end of an earlier one ended it (Waiting).
  std::vector<std::pair<std::string, std::string>> Poll(double now);
  std::vector<VolumeWrites> TakeWrites() { return std::exchange(writes_, {}); }
  std::vector<BindRequest> TakeReadyBinds() { return std::exchange(ready_binds_, {}); }

  // Pod keys visited by walks over the pods that name a claim, since the start: a measure
  // of work that tests hold to linear bounds.
  int64_t pods_visited() const { return pods_visited_; }
  struct Sizes {
    size_t claims = 0;           // PersistentVolumeClaims, read or not
    size_t volumes = 0;          // PersistentVolumes, read or not
    size_t storage_classes = 0;  // read or not
    size_t claim_index = 0;      // entries of the indexes from pods and objects to claims
    size_t volume_waits = 0;     // pods waiting for their delayed claims to bind
    size_t volume_overlays = 0;  // choices assumed on volumes and claims (claimRef, node)
    size_t pods = 0;             // pods followed for their claims
  };
  Sizes sizes() const;

 private:
  // A pod that names claims: which, and whether it uses them (see SetClaimsInUse).
  struct PodClaims {
    std::string namespace_;
    std::vector<k8s::PodClaimRef> claims;
    std::vector<std::string> indexed;  // its keys in pods_by_claim_, sorted
    bool in_use = false;
  };
  // A pod whose bind waits for its delayed claims: what was chosen, and the bind to send
  // once its claims are bound.
  struct Wait {
    std::string node;
    std::vector<std::pair<std::string, std::string>> bindings;  // claim name, volume
    std::vector<std::string> provisions;                        // claim names
    double deadline = 0;
    bool written = false;                         // the API server took the writes
    std::map<std::string, std::string> versions;  // see VolumeWriteResult
    std::string failure;                          // why it failed; "" while it has not
    BindRequest bind;
  };
  // Choices of bindings in flight, as kube-scheduler's assume cache keeps them, counted by
  // the waits that made them.
  struct AssumedRef {
    std::optional<k8s::ClaimRef> ref;
    int32_t uses = 0;
  };
  struct AssumedNode {
    std::string node;
    int32_t uses = 0;
  };

  // Adds to out->pods the pods that name the claim, but `except`; a waiting pod among them
  // has its wait checked instead (its bind may be ready, or its binding failed).
  void AddClaimPods(const std::string& claim_key, const std::string& except,
                    const ClusterState& cluster, Resync* out);
  // The same for the claims of the class that are still to be bound.
  void AddClassPods(const std::string& storage_class, const ClusterState& cluster, Resync* out);
  // A pod other than `except` that uses the claim through a persistentVolumeClaim volume
  // (what kube-scheduler counts), or nullptr.
  const std::string* ClaimHolder(const std::string& claim_key, const std::string& except) const;
  // Moves a claim in claims_by_volume_ and claims_by_class_.
  void IndexClaim(const std::string& key, const k8s::ClaimInfo* before,
                  const k8s::ClaimInfo* after);
  // Adds the Fluid datasets of the volumes of the pod's bound claims to spec->datasets;
  // returns why the pod cannot be scheduled (more than kMaxDatasetsPerTask), or "".
  std::string AddClaimDatasets(const k8s::PodInfo& pod, TaskSpec* spec) const;
  // What VolumeBinding may do with the claim, as TaskSpec::delayed_claims holds it.
  DelayedClaim DelayedClaimOf(const k8s::ClaimInfo& claim) const;
  // The claimRef of a volume, as assumed by a binding in flight if one is.
  const std::optional<k8s::ClaimRef>& ClaimRefOf(const k8s::PersistentVolumeInfo& pv) const;
  // What storage capacity tracking adds to a delayed claim of class `sc`.
  void AddStorageCapacity(const k8s::ClaimInfo& claim, const k8s::StorageClassInfo& sc,
                          DelayedClaim* out) const;
  // Checks a waiting pod's claims: moves its bind to ready_binds_ when they are all bound
  // (ending the wait, whose changes go to *out), or returns why the binding failed; "" while
  // it goes on.
  std::string CheckWait(const std::string& key, const ClusterState& cluster, Resync* out);
  void EndWait(const std::string& key, const ClusterState& cluster, Resync* out);
  // The nodes whose attachments name the persistent volume.
  void AddAttachmentNodes(const std::string& volume, Resync* out) const;

  // The objects: as read, or why they could not be; and who names what.
  std::unordered_map<std::string, k8s::ClaimInfo> claims_;
  std::unordered_map<std::string, std::string> bad_claims_;
  std::unordered_map<std::string, k8s::PersistentVolumeInfo> volumes_;
  std::unordered_map<std::string, std::string> bad_volumes_;
  std::unordered_map<std::string, k8s::StorageClassInfo> storage_classes_;
  std::unordered_map<std::string, std::string> bad_storage_classes_;
  std::unordered_map<std::string, PodClaims> pods_;                          // by pod key
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
  // Delayed binding: the assume cache, the waits (by pod key) and their deadlines, the waits
  // that failed (given up by Poll), the writes to send and the binds that are ready.
  std::unordered_map<std::string, AssumedRef> assumed_claim_refs_;       // PV -> claimRef
  std::unordered_map<std::string, AssumedNode> assumed_selected_nodes_;  // claim -> node
  std::unordered_map<std::string, Wait> waits_;
  std::set<std::pair<double, std::string>> deadlines_;  // (deadline, pod key)
  std::set<std::string> failed_;
  std::vector<VolumeWrites> writes_;
  std::vector<BindRequest> ready_binds_;
  double bind_timeout_s_ = 600;  // kube-scheduler's bindTimeoutSeconds
  int64_t pods_visited_ = 0;
};

}  // namespace gantry
