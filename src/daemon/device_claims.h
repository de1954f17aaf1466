// Dynamic Resource Allocation in the daemon, as kube-scheduler's DynamicResources plugin
// keeps it beside the scheduler cache: the DeviceClasses, ResourceSlices, ResourceClaims
// and DeviceTaintRules from the watch (resource.k8s.io/v1; where the API server does not
// serve them the feature is off), what a pending pod's claims are, and the allocations a
// session made, assumed until the API server shows them written.
//
// - Objects: each kind as last read (one that cannot be read is dropped, with a Warning
//   event naming the field); the dra::Inventory is rebuilt from slices, classes and taint
//   rules on the first session after one of them changed; the dra::ClaimTable is every
//   claim, with the assumed allocations in place of what the API server holds.
// - Resolve: a pending pod's spec.resourceClaims become claim keys (TaskSpec::
//   resource_claims): resourceClaimName directly, a template's claim through
//   status.resourceClaimStatuses; a claim not made yet, missing or being deleted keeps the
//   pod pending with kube-scheduler's words.
// - Assume: the allocations and reservations a session's bind makes are assumed in the
//   claim table (the next session sees the devices taken) and returned as the ClaimWrites
//   the ApiWriter does before the bind; the assumption ends when the watch shows the claim
//   allocated and reserved for the pod, or when the bind fails (Forget).
// - CEL: with GANTRY_DRA_CEL the component owns a dra::SelectorCache and its verdicts;
//   without, a session's verdicts are null (a class or request with a selector then fails
//   to allocate, saying so).
//
// Like every component it never calls back into the cache: each change answers with a
// Resync of the pods that name a claim it touched. Claims and pods are keyed "ns/name".
#pragma once

#include <map>
#include <memory>
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
#include "engine/dra/accounting.h"
#include "engine/snapshot.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "model/dra.h"
#include "model/dra_inventory.h"

namespace gantry {

// What a driver reports of one allocated device (a claim's status.devices[], the
// AllocatedDeviceStatus of DRAResourceClaimDeviceStatus): the conditions binding
// conditions are read from (metav1.Condition's type, status, reason, message).
struct DeviceCondition {
  std::string type;
  bool is_true = false;  // status "True"
  std::string reason;
  std::string message;
};
struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::vector<DeviceCondition> conditions;
};
// A claim's status.devices, read leniently (an entry without driver, pool or device is
// left out: it matches no allocated device, which then waits).
std::vector<AllocatedDeviceStatus> ReadDeviceStatuses(const nlohmann::json& claim);

class DeviceClaims {
 public:
  DeviceClaims();
  ~DeviceClaims();
  // Movable, with the cache that owns it (the selector cache stays where it is).
  DeviceClaims(DeviceClaims&&) noexcept;
  DeviceClaims& operator=(DeviceClaims&&) noexcept;

  // Whether this build evaluates CEL selectors (GANTRY_DRA_CEL).
  static bool HasCel();

  // ---- Objects from the watch. Slices, classes and rules change the inventory (no pod's
  // spec); a claim's change resyncs the pods that name it.
  Resync OnDeviceClass(k8s::EventType type, const nlohmann::json& object);
  Resync OnResourceSlice(k8s::EventType type, const nlohmann::json& object);
  Resync OnDeviceTaintRule(k8s::EventType type, const nlohmann::json& object);
  Resync OnResourceClaim(k8s::EventType type, const nlohmann::json& object);
  // A namespace's labels: resource.kubernetes.io/admin-access=true allows admin access.
  void OnNamespace(const std::string& name, const Labels* labels);

  // ---- The pods that name claims.
  void TrackPod(const std::string& key, const k8s::PodInfo& pod);
  // The pod is gone: it names no claim, and what was assumed for it is forgotten.
  Resync ForgetPod(const std::string& key);

  // The claim keys of a pod to place, in spec.resourceClaims order, each once, into
  // spec->resource_claims, and what they count as for queues into spec->device_requests.
  // Returns why its claims keep it pending, or "".
  std::string Resolve(const k8s::PodInfo& pod, TaskSpec* spec) const;
  // What a bound pod's claims count as for queues (TaskSpec::device_requests).
  ResourceVector DeviceRequestsOf(const k8s::PodInfo& pod) const;
  // The claims whose devices a bound pod holds (TaskSpec::resource_claims of its running
  // task), so that evicting it frees them in the session's future view: those it names
  // and the claim of its extended resources served by DRA. That last one is not counted
  // for queues by its devices: its extended resources are (ClusterState::Accounted).
  static std::vector<std::string> HeldClaimKeysOf(const k8s::PodInfo& pod);
  // spec->device_backed: the extended resources of the spec that a DeviceClass serves
  // (engine/dra/extended_resources.h), for a pod to place and for a bound one alike.
  void MarkDeviceBacked(TaskSpec* spec) const;

  // ---- What devices count as for queues (engine/dra/accounting.h). Setting the map
  // rebuilds the accounting with the next inventory.
  void SetClassResources(std::vector<dra::ClassResource> map);
  // What the devices published for the node count as (Node::device_capacity), as of the
  // last RefreshInventory.
  const ResourceVector& NodeDeviceCapacity(const std::string& node) const {
    return accounting_.NodeCapacity(node);
  }
  // Rebuilds the inventory and the accounting if a slice, class or rule changed. Returns
  // whether the accounting was rebuilt (node capacities may have changed), and in *resync
  // the pods whose claims it may count differently.
  bool RefreshInventory(Resync* resync);

  // ---- A session's inputs: the inventory (rebuilt if a slice, class or rule changed),
  // every claim, CEL's verdicts. Valid until the next change of this component.
  DeviceInputs Inputs();

  // ---- Assumptions. What a session decided for a pod (`decision.devices`, per claim of
  // `spec`) is assumed: each claim allocated as decided and reserved for the pod, or for its
  // native PodGroup `group` (nullptr: none) where the group lists the pod's entry for the
  // claim in its spec.resourceClaims (resourceclaim.BindTo). Returns the writes to do before
  // the bind, in the spec's order, or sets *why and assumes nothing.
  std::vector<ClaimWrite> Assume(const std::string& key, const k8s::PodInfo& pod,
                                 const k8s::PodGroupInfo* group, const BindDecision& decision,
                                 const TaskSpec& spec, std::string* why);
  // Whom the pod's claim `claim_key` is reserved for: its PodGroup `group` when the group
  // shares that claim (the pod's spec.resourceClaims entry equals one of the group's), else
  // the pod.
  static dra::ConsumerReference ConsumerOf(const k8s::PodInfo& pod, const k8s::PodGroupInfo* group,
                                           const std::string& claim_key);
  // What the session allocated for the pod's extended resources served by DRA
  // (decision.extended_devices, engine/dra/extended_resources.h), assumed as a claim of its
  // own until the watch shows the claim the writer makes (annotated, allocated, reserved
  // for the pod); the write to make before the bind, or nullopt where there is none.
  std::optional<ExtendedClaimWrite> AssumeExtended(const std::string& key, const k8s::PodInfo& pod,
                                                   const BindDecision& decision,
                                                   const TaskSpec& spec);
  // Takes back what was assumed for the pod (its writes failed, or its bind did).
  Resync Forget(const std::string& key);
  bool Assumed(const std::string& key) const { return assumed_by_pod_.count(key) > 0; }

  // The published devices of each driver: allocated (to some claim, as read or assumed;
  // whole or a share) and free. For the metrics.
  struct DriverDevices {
    int64_t allocated = 0;
    int64_t free = 0;
    bool operator==(const DriverDevices&) const = default;
  };
  std::map<std::string, DriverDevices> CountDevices() const;
  // A device published for one node (its slice, or the device itself, names the node),
  // and the claims whose allocations hold it ("namespace/name", as read or assumed; a
  // claim with admin access is no holder: the device stays free for others). For the live
  // page. Devices that several nodes reach (allNodes, a node selector) are on no node.
  struct NodeDevice {
    std::string driver;
    std::string pool;
    std::string name;
    std::vector<std::string> claims;  // sorted
    bool operator==(const NodeDevice&) const = default;
  };
  // By node name; a node's devices in slice name, then device order.
  std::map<std::string, std::vector<NodeDevice>> DevicesByNode() const;
  // ---- Claims left for a pod's extended resources (device_claims_left.cc): a claim with
  // the extended-resource-claim annotation whose controller is a pod that is to be placed
  // again was made by an attempt that did not bind (a bind cut short by a crash or a lost
  // leadership; Gantry's own failed binds delete theirs). As kube-scheduler does, the pod
  // is not placed while it exists, and it is deleted (its finalizer first); the watch
  // showing it gone puts the pod back. For a pod to place that asks extended resources
  // served by DRA: why it waits ("" when no claim is left for it); the first time, its
  // deletion is queued (TakeLeftClaimDeletes).
  std::string DeleteLeftExtendedClaim(const k8s::PodInfo& pod);
  // The deletions to send at `now` (the daemon's clock, seconds): those queued since the
  // last call, and again those sent kLeftClaimDeleteRetryS ago or more whose claim the
  // watch still shows (a DELETE that failed, or an answer lost), until the watch shows it
  // gone or changed.
  std::vector<ClaimWrite> TakeLeftClaimDeletes(double now);
  static constexpr double kLeftClaimDeleteRetryS = 30;
  // ---- Binding conditions (device_claims_binding.cc). A pod whose claims are written
  // and whose allocated devices have binding conditions waits until `deadline` (the
  // daemon's clock) with its bind, `request` (claims_written set).
  void WaitForBindingConditions(const std::string& key, BindRequest request, double deadline);
  bool WaitingForBinding(const std::string& key) const { return binding_waits_.count(key) > 0; }
  // Whether a device allocated to one of the claims (as the table has them, assumed
  // allocations included) has binding conditions.
  bool HasBindingConditions(const std::vector<std::string>& claim_keys) const;
  // The waits that ended by `now`, each taken out: ready (failure empty: the bind goes
  // out), or failed with kube-scheduler's words (a failure condition, a claim gone, the
  // timeout).
  struct BindingOutcome {
    std::string pod;  // its key
    BindRequest request;
    std::string failure;
  };
  std::vector<BindingOutcome> PollBindingWaits(double now);
  size_t binding_waits() const { return binding_waits_.size(); }

  struct Sizes {
    size_t classes = 0, slices = 0, rules = 0, claims = 0;
    size_t assumed = 0;      // claims with an assumed allocation or reservation
    size_t pods = 0;         // pods followed for their claims
    size_t claim_index = 0;  // entries of the index from claims to pods
  };
  Sizes sizes() const;
  // How many times the inventory was rebuilt, for tests.
  int64_t inventory_builds() const { return inventory_builds_; }

 private:
  struct AssumedClaim {
    std::string pod;  // the pod key that assumed it
    std::string pod_uid;
    dra::ResourceClaim claim;
  };
  // Makes table_[key] what is assumed of the claim, else what was read, else nothing.
  void Refresh(const std::string& key);
  // The claim keys a pod names now (those it can name: a template's claim once made).
  static std::vector<std::string> ClaimKeysOf(const k8s::PodInfo& pod);
  ResourceVector CountedAs(const std::vector<std::string>& claim_keys) const;
  void AddClaimPods(const std::string& claim_key, Resync* out) const;
  // Follows the claims made for pods' extended resources (device_claims_left.cc): `object`
  // is the claim as read, null when deleted; the owner pod is resynced.
  void NoteExtendedClaim(const std::string& claim_key, const nlohmann::json* object, Resync* out);
  void DropAssumption(const std::string& claim_key, Resync* out);

  std::map<std::string, dra::DeviceClass> classes_;
  std::map<std::string, dra::ResourceSlice> slices_;
  std::map<std::string, dra::DeviceTaintRule> rules_;
  std::set<std::string, std::less<>> admin_namespaces_;
  bool inventory_dirty_ = true;
  dra::Inventory inventory_;
  std::vector<dra::ClassResource> class_resources_;
  dra::DeviceAccounting accounting_;
  int64_t inventory_builds_ = 0;

  std::map<std::string, dra::ResourceClaim> observed_;  // as read, by claim key
  std::map<std::string, AssumedClaim> assumed_;         // by claim key
  std::unordered_map<std::string, std::vector<std::string>> assumed_by_pod_;
  dra::ClaimTable table_;          // what sessions see
  dra::AllocatedState allocated_;  // table_'s allocations, kept by Refresh

  // The assumed extended resources claims (keys no object can have), by the pod's uid.
  std::unordered_map<std::string, std::string> extended_by_pod_uid_;
  // The pods that ask for some extended resource: a class's change may change their specs.
  std::set<std::string> extended_pods_;
  // Claims made for a pod's extended resources, as read: by the owner pod's uid.
  struct ExtendedClaimOf {
    std::string claim_key;
    std::string claim_uid;
    std::string pod_key;
  };
  std::unordered_map<std::string, ExtendedClaimOf> extended_claims_;
  std::unordered_map<std::string, std::string> extended_owner_by_claim_;  // claim key -> pod uid
  // By claim uid: the deletions queued, and when each was last sent (-1: not yet).
  struct LeftDelete {
    ClaimWrite write;
    double sent_at = -1;
  };
  std::map<std::string, LeftDelete> left_deleting_;

  std::unordered_map<std::string, std::vector<std::string>> pods_;  // pod -> claim keys
  std::unordered_map<std::string, std::set<std::string>> pods_by_claim_;

  struct BindingWait {
    BindRequest request;
    double deadline = 0;
  };
  std::map<std::string, BindingWait> binding_waits_;  // by pod key
  // status.devices of the claims read, by claim key (those that have any).
  std::map<std::string, std::vector<AllocatedDeviceStatus>> device_statuses_;

  struct Cel;  // the selector cache and its verdicts (GANTRY_DRA_CEL)
  std::unique_ptr<Cel> cel_;
};

}  // namespace gantry
