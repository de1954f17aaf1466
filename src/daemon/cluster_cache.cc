// The cluster cache's core: applying what its components answer, the specs pods share,
// the workload profile, and what it holds.
#include "daemon/cluster_cache.h"

namespace gantry {

ClusterCache::ClusterCache(std::string scheduler_name)
    : scheduler_name_(std::move(scheduler_name)) {
  // Present from the start, so that queue ids of these two never move.
  queues_.QueueFor("default", /*from_workload=*/false, state_);
  queues_.QueueFor(kOtherSchedulersQueue, /*from_workload=*/false, state_);
}

void ClusterCache::Apply(const Resync& resync) {
  for (const ObjectEvent& event : resync.problems) Problem(event);
  for (const std::string& key : resync.pods) {
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    const PodRecord& pod = it->second;
    // An assumed pod counts as it was placed; a pending pod of another scheduler is no task.
    if (pod.assumed || (pod.info.node_name.empty() && !Ours(pod.info))) continue;
    SyncPod(key);
  }
  for (const std::string& node : resync.nodes) RefreshNodeCsi(node);
  if (!resync.pods_with_volumes) return;
  // The pods to place that have volumes (a CSIDriver changed: rare).
  std::vector<std::string> keys;
  for (const auto& [key, pod] : pods_) {
    if (!pod.info.node_name.empty() || pod.assumed || !Ours(pod.info)) continue;
    if (pod.info.claims.empty() && pod.info.spec.attachable_volumes.empty()) continue;
    keys.push_back(key);
  }
  for (const std::string& key : keys) {
    pod_records_visited_++;
    SyncPod(key);
  }
}

// ---------------------------------------------------------------------------------------
// The components' objects

void ClusterCache::OnClaim(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnClaim(type, object, state_));
}

void ClusterCache::OnPersistentVolume(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnPersistentVolume(type, object, state_));
}

void ClusterCache::OnStorageClass(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnStorageClass(type, object, state_));
}

void ClusterCache::OnCsiNode(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnCsiNode(type, object));
}

void ClusterCache::OnVolumeAttachment(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnVolumeAttachment(type, object));
}

void ClusterCache::OnCsiDriver(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnCsiDriver(type, object));
}

void ClusterCache::OnStorageCapacity(k8s::EventType type, const nlohmann::json& object) {
  Apply(volumes_.OnStorageCapacity(type, object, state_));
}

void ClusterCache::OnKueueTopology(k8s::EventType type, const nlohmann::json& object) {
  Apply(topology_.OnKueueTopology(type, object));
}

void ClusterCache::OnHyperNode(k8s::EventType type, const nlohmann::json& object) {
  Apply(topology_.OnHyperNode(type, object));
}

void ClusterCache::OnNodeResourceTopology(k8s::EventType type, const nlohmann::json& object) {
  Apply(topology_.OnNodeResourceTopology(type, object));
}

void ClusterCache::OnService(k8s::EventType type, const nlohmann::json& object) {
  Apply(spreading_.OnService(type, object));
}

void ClusterCache::OnSpreadOwner(k8s::SpreadOwnerKind kind, k8s::EventType type,
                                 const nlohmann::json& object) {
  Apply(spreading_.OnOwner(kind, type, object));
}

void ClusterCache::OnDeviceClass(k8s::EventType type, const nlohmann::json& object) {
  Apply(devices_.OnDeviceClass(type, object));
}

void ClusterCache::OnResourceSlice(k8s::EventType type, const nlohmann::json& object) {
  Apply(devices_.OnResourceSlice(type, object));
}

void ClusterCache::OnResourceClaim(k8s::EventType type, const nlohmann::json& object) {
  Apply(devices_.OnResourceClaim(type, object));
}

void ClusterCache::OnDeviceTaintRule(k8s::EventType type, const nlohmann::json& object) {
  Apply(devices_.OnDeviceTaintRule(type, object));
}

DeviceInputs ClusterCache::DeviceInputsForSession() {
  Resync resync;
  if (devices_.RefreshInventory(&resync)) {
    for (NodeId id = 0; id < state_.nodes().size(); ++id) {
      const Node& node = state_.node(id);
      if (node.removed) continue;
      const ResourceVector& capacity = devices_.NodeDeviceCapacity(node.name);
      if (node.device_capacity == capacity) continue;
      Node updated = node;
      updated.device_capacity = capacity;
      // The node was accepted with these fields; only what its devices count as changes.
      Status st = state_.UpdateNode(id, std::move(updated));
      if (!st.ok()) {
        Problem({"v1", "Node", "", node.name, "", "Warning", "InvalidNode",
                 "gantry could not record what the node's DRA devices count as: " + st.message()});
      }
    }
    Apply(resync);
  }
  return devices_.Inputs();
}

// ---------------------------------------------------------------------------------------
// The workload profile, and what the cache holds

void ClusterCache::SetProfileHalfLife(double seconds) {
  if (seconds > 0) {
    arrival_profile_.emplace(seconds, kDefaultProfileShapes);
  } else {
    arrival_profile_.reset();
  }
}

WorkloadProfile ClusterCache::ProfileAt(double now) const {
  return arrival_profile_ ? arrival_profile_->ProfileAt(now) : WorkloadProfile{};
}

int64_t ClusterCache::pod_records_visited() const {
  return pod_records_visited_ + volumes_.pods_visited() + spreading_.pods_visited();
}

ClusterCache::Sizes ClusterCache::sizes() const {
  Sizes s;
  s.pods = pods_.size();
  s.jobs = jobs_.size();
  s.groups = groups_.size();
  for (const auto& [node, keys] : waiting_for_node_) s.waiting_for_node += keys.size();
  s.specs = specs_.size();
  s.status_dirty = status_.changed();
  s.refused_nodes = refused_nodes_.size();
  const VolumeBinder::Sizes volumes = volumes_.sizes();
  s.claims = volumes.claims;
  s.volumes = volumes.volumes;
  s.storage_classes = volumes.storage_classes;
  s.claim_index = volumes.claim_index;
  s.volume_waits = volumes.volume_waits;
  s.volume_overlays = volumes.volume_overlays;
  const DefaultSpreading::Sizes spreading = spreading_.sizes();
  s.services = spreading.services;
  s.spread_owners = spreading.spread_owners;
  s.spread_index = spreading.spread_index;
  const DeviceClaims::Sizes devices = devices_.sizes();
  s.component_records = volumes.pods + spreading.pods + evictions_.pods() + status_.remembered() +
                        devices.pods + devices.assumed;
  return s;
}

}  // namespace gantry
