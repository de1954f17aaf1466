#include <algorithm>
#include <unordered_map>

#include "engine/device_reservations.h"
#include "engine/dra/extended_resources.h"
#include "engine/node_holdings.h"
#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "engine/volume_binding.h"

namespace gantry {
namespace {

// kube-scheduler's NodeUnschedulable: a pod that tolerates the taint Kubernetes puts on a
// cordoned node tolerates the cordon (DaemonSet pods do).
bool ToleratesCordon(const std::vector<Toleration>& tolerations) {
  const Taint cordon{"node.kubernetes.io/unschedulable", "", TaintEffect::kNoSchedule};
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return t.Tolerates(cordon); });
}

class PredicatesPlugin : public SessionCopyable<PredicatesPlugin>,
                         public NodePredicate,
                         public PlacementListener {
 public:
  std::string_view name() const override { return "predicates"; }

  // In the order of kube-scheduler's default profile (NodeUnschedulable, TaintToleration,
  // NodeAffinity, NodeResourcesFit, then the volume plugins), so that a node that fails
  // several is counted for the reason kube-scheduler gives.
  FilterResult FilterStatic(const TaskSpec& spec, const Node& node) const override {
    if (node.unschedulable && !ToleratesCordon(spec.tolerations)) {
      return FilterResult::Fail(FilterCode::kUnschedulable);
    }
    const Taint* blocking = nullptr;
    if (!ToleratesAll(spec.tolerations, node.taints, &blocking)) {
      return FilterResult::Fail(FilterCode::kTaint,
                                static_cast<uint32_t>(blocking - node.taints.data()));
    }
    if (!MatchesNodeSelector(spec.node_selector, node.labels)) {
      return FilterResult::Fail(FilterCode::kNodeSelector);
    }
    if (!spec.affinity.Matches(node.labels, node.name)) {
      return FilterResult::Fail(FilterCode::kNodeAffinity);
    }
    const FilterResult capacity =
        FilterByCapacity(spec.requests, spec.gpu, node, spec.device_backed);
    if (!capacity.ok()) return capacity;
    for (const NodeAffinity& volume : spec.volume_node_affinity) {
      if (!volume.Matches(node.labels)) return FilterResult::Fail(FilterCode::kVolumeNodeAffinity);
    }
    if (!VolumeZonesAllow(spec.volume_zones, node.labels)) {
      return FilterResult::Fail(FilterCode::kVolumeZone);
    }
    // NodeDeclaredFeatures, last in kube-scheduler's profile too; both lists are sorted.
    if (!std::includes(node.declared_features.begin(), node.declared_features.end(),
                       spec.required_features.begin(), spec.required_features.end())) {
      return FilterResult::Fail(FilterCode::kDeclaredFeatures);
    }
    return FilterResult::Ok();
  }

  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId id) const override {
    if (!spec.rwop_claims.empty() || !spec.delayed_claims.empty() || !spec.inline_disks.empty() ||
        !spec.resource_claims.empty() || !spec.device_backed.empty()) [[unlikely]] {
      return FilterWithClaims(s, spec, id);
    }
    return FilterRoom(s, spec, id);
  }

  // The node's room now: its pod count, free resources and GPUs.
  FilterResult FilterRoom(const Session& s, const TaskSpec& spec, NodeId id) const {
    const NodeWork& w = s.searched_node(id);
    if (w.pods_full()) return FilterResult::Fail(FilterCode::kTooManyPods);
    int64_t over = s.FirstShortInSearched(spec.requests, id);
    if (over >= 0 && !spec.device_backed.empty()) [[unlikely]] {
      over = FirstShortNotServedByDra(s, spec, id);
    }
    if (over >= 0)
      return FilterResult::Fail(FilterCode::kInsufficient, static_cast<uint32_t>(over));
    const GpuRequest& gpu = spec.gpu;
    if (!gpu.wants_gpu()) return FilterResult::Ok();
    if (ServedByDraFor(spec.device_backed, kGpu, s.cluster().node(id))) [[unlikely]] {
      return FilterResult::Ok();  // DeviceReservations checks the devices
    }
    if (!gpu.shared()) {
      if (w.whole_free < gpu.count) return FilterResult::Fail(FilterCode::kInsufficientGpus);
      return FilterResult::Ok();
    }
    // Common case first: any model, share only: the roomiest device decides.
    if (gpu.models.empty() && gpu.memory_mib == 0) {
      return w.max_free_milli >= gpu.milli ? FilterResult::Ok()
                                           : FilterResult::Fail(FilterCode::kNoGpuShareFits);
    }
    NodeGpus gpus = s.searched_gpus(id);
    for (size_t i = 0; i < gpus.devices.size(); ++i) {
      if (SharedFitOn(gpu, gpus, i) > 0) return FilterResult::Ok();
    }
    return FilterResult::Fail(FilterCode::kNoGpuShareFits);
  }

  // ReadWriteOncePod claims taken by the running tasks and the session's placements. (The
  // daemon also keeps a pod whose claim a running or assumed pod uses out of the session,
  // to say which pod holds it; this keeps two pending pods from both taking it in one,
  // and holds for the simulator too.) An eviction leaves the claim taken: the pod holds it
  // until it is gone. And the volumes the placements chose for delayed claims, so that
  // two pods of one session never count on one volume; and the inline disks in use on
  // each node (VolumeRestrictions' disk conflicts), an index built on first need. And the
  // devices the placements' ResourceClaims were allocated (DynamicResources).
  void OnSessionOpen(Session& s) override {
    const auto& specs = s.cluster().specs();
    claims_ = std::any_of(specs.begin(), specs.end(), [](const TaskSpec& spec) {
      return !spec.rwop_claims.empty() || !spec.delayed_claims.empty() ||
             !spec.inline_disks.empty() || !spec.resource_claims.empty() ||
             !spec.device_backed.empty();
    });
    devices_.Open(s.devices(), s.cluster());
  }
  bool ListensInSession() const override { return claims_; }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& gpus, int sign) override {
    disks_.OnStateChange(s, change, task, node, sign);
    const TaskSpec& spec = s.cluster().spec(s.cluster().task(task).spec);
    if (!spec.resource_claims.empty() || !spec.device_backed.empty()) [[unlikely]] {
      devices_.Apply(change, task, spec, s.cluster().node(node), gpus, sign);
    }
    if (change == StateChange::kEvict) return;
    for (const std::string& claim : spec.rwop_claims) {
      int32_t& uses = rwop_taken_[ClaimKey(spec, claim)];
      uses += sign;
      if (uses <= 0) rwop_taken_.erase(ClaimKey(spec, claim));
    }
    if (!spec.delayed_claims.empty()) [[unlikely]] {
      ReserveVolumes(s, spec, task, node, sign);
    }
  }

  // Which volume (or provisioning) each bound task's delayed claims got, for the daemon
  // to write before it binds the pod.
  // And what each bound task's claims were allocated; a pending job whose claims met an
  // error (a CEL error, a class that does not exist) says it, in upstream's words.
  void OnSessionClose(const Session& s, Decisions* out) const override {
    if (!claims_) return;
    for (BindDecision& b : out->binds) {
      auto it = volume_choices_.find(b.task);
      if (it != volume_choices_.end()) b.volumes = it->second;
      if (const DeviceAllocations* devices = devices_.AllocationsOf(b.task)) b.devices = *devices;
      if (const dra::Allocation* extended = devices_.ExtendedAllocationOf(b.task)) {
        b.extended_devices = *extended;
      }
    }
    if (devices_.errors().empty()) return;
    for (PendingJob& pending : out->pending) {
      for (TaskId task : s.cluster().job(pending.job).tasks) {
        if (const std::string* error = devices_.ErrorFor(s.cluster().spec_of(task))) {
          pending.reason += "; allocating its claims' devices failed: " + *error;
          break;
        }
      }
    }
  }

 private:
  static std::string ClaimKey(const TaskSpec& spec, const std::string& claim) {
    return spec.namespace_ + "/" + claim;
  }
  // Out of the hot path, which only pods with claims or inline disks take: the node's room
  // first, as kube-scheduler's NodeResourcesFit runs before VolumeRestrictions.
  [[gnu::noinline]] FilterResult FilterWithClaims(const Session& s, const TaskSpec& spec,
                                                  NodeId id) const {
    const FilterResult room = FilterRoom(s, spec, id);
    if (!room.ok()) return room;
    if (ClaimTaken(s, spec)) return FilterResult::Fail(FilterCode::kReadWriteOncePod);
    if (DiskInUse(s, spec, id)) return FilterResult::Fail(FilterCode::kDiskConflict);
    if (!spec.delayed_claims.empty()) {
      const FilterResult volumes =
          ChooseClaimVolumes(spec, s.cluster().node(id), volumes_, nullptr);
      if (!volumes.ok()) return volumes;
    }
    if (spec.resource_claims.empty() && spec.device_backed.empty()) return room;
    return devices_.Filter(spec, s.cluster().node(id), s.searching_future(), nullptr);
  }
  // The first resource of spec.requests short on the node that the node does not serve by
  // DRA (those DeviceReservations checks), or -1.
  [[gnu::noinline]] static int64_t FirstShortNotServedByDra(const Session& s, const TaskSpec& spec,
                                                            NodeId id) {
    const Node& node = s.cluster().node(id);
    for (const ResourceVector::Entry& e : spec.requests.entries()) {
      if (e.amount > s.searched_free(id, e.id) && !ServedByDraFor(spec.device_backed, e.id, node)) {
        return e.id;
      }
    }
    return -1;
  }
  [[gnu::noinline]] void ReserveVolumes(const Session& s, const TaskSpec& spec, TaskId task,
                                        NodeId node, int sign) {
    const std::string& node_name = s.cluster().node(node).name;
    if (sign < 0) {
      auto it = volume_choices_.find(task);
      if (it == volume_choices_.end()) return;
      volumes_.Apply(spec, node_name, it->second, -1);
      volume_choices_.erase(it);
      return;
    }
    // The same choice the filter made for this node on this state. A placement no filter
    // passed (none should) gets no choices, and the daemon does not bind it.
    std::vector<std::string> choices;
    if (!ChooseClaimVolumes(spec, s.cluster().node(node), volumes_, &choices).ok()) return;
    volumes_.Apply(spec, node_name, choices, +1);
    volume_choices_[task] = std::move(choices);
  }
  // VolumeRestrictions' isVolumeConflict against the tasks on the node.
  bool DiskInUse(const Session& s, const TaskSpec& spec, NodeId id) const {
    if (spec.inline_disks.empty()) return false;
    const bool future = s.searching_future();
    for (const auto& use : disks_.On(s, id)) {
      if (!use.HeldIn(future)) continue;
      for (const InlineDisk& disk : spec.inline_disks) {
        if (disk.ConflictsWith(*use.item)) return true;
      }
    }
    return false;
  }
  bool ClaimTaken(const Session& s, const TaskSpec& spec) const {
    if (!running_counted_) CountRunningClaims(s.cluster());
    if (rwop_taken_.empty()) return false;
    for (const std::string& claim : spec.rwop_claims) {
      if (rwop_taken_.count(ClaimKey(spec, claim))) return true;
    }
    return false;
  }

  // The running tasks' claims, on the first check that needs them: only pods with
  // ReadWriteOncePod claims pay for the pass over the tasks.
  void CountRunningClaims(const ClusterState& c) const {
    running_counted_ = true;
    for (NodeId node = 0; node < c.nodes().size(); ++node) {
      if (c.node(node).removed) continue;
      for (TaskId t : c.tasks_on(node)) {
        const TaskSpec& spec = c.spec(c.task(t).spec);
        for (const std::string& claim : spec.rwop_claims) ++rwop_taken_[ClaimKey(spec, claim)];
      }
    }
  }

  // "namespace/claim" -> users (running and placed)
  mutable std::unordered_map<std::string, int32_t> rwop_taken_;
  mutable bool running_counted_ = false;
  bool claims_ = false;  // some spec of the session has claims that these track
  VolumeReservations volumes_;
  DeviceReservations devices_;
  std::unordered_map<TaskId, std::vector<std::string>> volume_choices_;  // placed task -> choices
  NodeHoldings<InlineDisk, &TaskSpec::inline_disks> disks_;              // inline disks per node
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewPredicatesPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new PredicatesPlugin());
}

}  // namespace gantry
