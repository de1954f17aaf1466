// What CSI objects mean for where a pod may run: the node's CSINode (the drivers installed
// there and how many volumes each may attach) and the VolumeAttachments naming it, for
// kube-scheduler's NodeVolumeLimits; CSIDriver settings; and CSIStorageCapacity objects,
// for VolumeBinding's check that a class can provision a claim's size where a pod goes.
#include <algorithm>

#include "daemon/volume_binder.h"
#include "k8s/csi_translation.h"
#include "k8s/json_fields.h"

namespace gantry {
namespace {

using json = nlohmann::json;

// Bytes as resource.Quantity.Value() gives them: rounded up. Divided first: adding 999
// before dividing overflows for the largest amounts (up to INT64_MAX milli-bytes).
int64_t CeilBytes(Milli amount) {
  return amount / kMilliPerUnit + (amount % kMilliPerUnit > 0 ? 1 : 0);
}

void Unindex(std::unordered_map<std::string, std::set<std::string>>& index, const std::string& at,
             const std::string& key) {
  auto it = index.find(at);
  if (it == index.end()) return;
  it->second.erase(key);
  if (it->second.empty()) index.erase(it);
}

// How an event about a CSI object was applied.
enum class Applied { kRead, kDeleted, kUnreadable };

// Applies an event about an object of `kind` (storage.k8s.io/v1) to `known`, keyed by
// `key`: read (what was known is replaced), deleted (forgotten), or unreadable: `known`
// keeps what it had, and `report` is called with the message the first time it is seen
// (`said` keeps what was said per object).
template <typename Info, typename Report>
Applied ApplyCsiObject(const std::string& kind, k8s::EventType type, const json& object,
                       const std::string& key, Result<Info> (*parse)(const json&),
                       std::unordered_map<std::string, Info>& known,
                       std::unordered_map<std::string, std::string>& said, Report report) {
  const std::string said_key = kind + "/" + key;
  if (type == k8s::EventType::kDeleted) {
    known.erase(key);
    said.erase(said_key);
    return Applied::kDeleted;
  }
  Result<Info> info = parse(object);
  if (info.ok()) {
    known[key] = std::move(info).value();
    said.erase(said_key);
    return Applied::kRead;
  }
  std::string& before = said[said_key];
  if (before != info.status().message()) {
    before = info.status().message();
    report(before);
  }
  return Applied::kUnreadable;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// A pod's attachable volumes

void VolumeBinder::AddAttachableVolumes(const k8s::PodInfo& info, bool to_place,
                                        TaskSpec* spec) const {
  std::vector<AttachableVolume>& out = spec->attachable_volumes;
  const std::string& ns = info.meta.namespace_;
  for (const k8s::PodClaimRef& ref : info.claims) {
    auto claim = claims_.find(ns + "/" + ref.claim);
    if (claim == claims_.end()) continue;
    const k8s::ClaimInfo& c = claim->second;
    if (!c.volume_name.empty()) {
      if (auto pv = volumes_.find(c.volume_name); pv != volumes_.end()) {
        if (pv->second.attachable) out.push_back(*pv->second.attachable);
        continue;
      }
    }
    // Unbound, or bound to a volume not found: what its class provisions
    // (getCSIDriverInfoFromSC).
    if (c.storage_class.empty()) continue;
    auto sc = storage_classes_.find(c.storage_class);
    if (sc == storage_classes_.end()) continue;
    if (auto v = k8s::AttachableOfUnboundClaim(sc->second.provisioner, ns, ref.claim)) {
      out.push_back(std::move(*v));
    }
  }
  SortVolumesOnce(&out);
  for (AttachableVolume& v : out) {
    auto driver = csi_drivers_.find(v.driver);
    v.driver_required = to_place && driver != csi_drivers_.end() && driver->second.required_on_node;
  }
}

// ---------------------------------------------------------------------------------------
// Nodes

NodeCsi VolumeBinder::NodeCsiOf(const std::string& node) const {
  NodeCsi csi;
  if (auto it = csi_nodes_.find(node); it != csi_nodes_.end()) {
    csi.has_csi_node = true;
    csi.drivers = it->second.drivers;
  }
  auto names = attachments_by_node_.find(node);
  if (names == attachments_by_node_.end()) return csi;
  for (const std::string& name : names->second) {
    const k8s::VolumeAttachmentInfo& va = volume_attachments_.at(name);
    // getNodeVolumeAttachmentInfo: an attacher, and a CSI persistent volume that exists.
    if (va.attacher.empty() || va.persistent_volume.empty()) continue;
    auto pv = volumes_.find(va.persistent_volume);
    if (pv == volumes_.end() || !pv->second.csi_source || !pv->second.attachable) continue;
    csi.attached.push_back(AttachableVolume{va.attacher, pv->second.attachable->handle});
  }
  SortVolumesOnce(&csi.attached);
  return csi;
}

void VolumeBinder::AddAttachmentNodes(const std::string& volume, Resync* out) const {
  auto names = attachments_by_volume_.find(volume);
  if (names == attachments_by_volume_.end()) return;
  std::set<std::string> nodes;
  for (const std::string& name : names->second) {
    nodes.insert(volume_attachments_.at(name).node_name);
  }
  out->nodes.insert(out->nodes.end(), nodes.begin(), nodes.end());
}

// ---------------------------------------------------------------------------------------
// Events

Resync VolumeBinder::OnCsiNode(k8s::EventType type, const json& object) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const Applied applied = ApplyCsiObject(
      "CSINode", type, object, meta->name, &k8s::ParseCsiNode, csi_nodes_, bad_csi_objects_,
      [&](const std::string& message) {
        out.problems.push_back(
            {"storage.k8s.io/v1", "CSINode", "", meta->name, meta->uid, "Warning", "InvalidCSINode",
             Bounded(message, kMaxMessage) +
                 " (gantry keeps the node's volume limits as it last read them)"});
      });
  if (applied != Applied::kUnreadable) out.nodes.push_back(meta->name);
  return out;
}

Resync VolumeBinder::OnVolumeAttachment(k8s::EventType type, const json& object) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const std::string& name = meta->name;
  std::set<std::string> nodes;
  if (auto known = volume_attachments_.find(name); known != volume_attachments_.end()) {
    nodes.insert(known->second.node_name);
    Unindex(attachments_by_node_, known->second.node_name, name);
    Unindex(attachments_by_volume_, known->second.persistent_volume, name);
  }
  ApplyCsiObject("VolumeAttachment", type, object, name, &k8s::ParseVolumeAttachment,
                 volume_attachments_, bad_csi_objects_, [&](const std::string& message) {
                   out.problems.push_back({"storage.k8s.io/v1", "VolumeAttachment", "", name,
                                           meta->uid, "Warning", "InvalidVolumeAttachment",
                                           Bounded(message, kMaxMessage)});
                 });
  // What is known of it (read now, or before) is indexed again.
  if (auto it = volume_attachments_.find(name); it != volume_attachments_.end()) {
    nodes.insert(it->second.node_name);
    attachments_by_node_[it->second.node_name].insert(name);
    attachments_by_volume_[it->second.persistent_volume].insert(name);
  }
  out.nodes.assign(nodes.begin(), nodes.end());
  return out;
}

Resync VolumeBinder::OnCsiDriver(k8s::EventType type, const json& object) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const Applied applied =
      ApplyCsiObject("CSIDriver", type, object, meta->name, &k8s::ParseCsiDriver, csi_drivers_,
                     bad_csi_objects_, [&](const std::string& message) {
                       out.problems.push_back({"storage.k8s.io/v1", "CSIDriver", "", meta->name,
                                               meta->uid, "Warning", "InvalidCSIDriver",
                                               Bounded(message, kMaxMessage) +
                                                   " (gantry keeps what it last read of it)"});
                     });
  // Whether a driver must be on the node, and whether its classes track capacity: the
  // pods to place that have volumes read both. Drivers change rarely.
  out.pods_with_volumes = applied != Applied::kUnreadable;
  return out;
}

Resync VolumeBinder::OnStorageCapacity(k8s::EventType type, const json& object,
                                       const ClusterState& cluster) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const std::string key = meta->Key();
  std::string class_before, class_now;
  if (auto known = storage_capacities_.find(key); known != storage_capacities_.end()) {
    class_before = known->second.storage_class;
  }
  const Applied applied = ApplyCsiObject(
      "CSIStorageCapacity", type, object, key, &k8s::ParseStorageCapacity, storage_capacities_,
      bad_csi_objects_, [&](const std::string& message) {
        out.problems.push_back({"storage.k8s.io/v1", "CSIStorageCapacity", meta->namespace_,
                                meta->name, meta->uid, "Warning", "InvalidCSIStorageCapacity",
                                Bounded(message, kMaxMessage)});
      });
  // One that cannot be read offers no room: kube-scheduler would not have it either.
  if (applied == Applied::kUnreadable) storage_capacities_.erase(key);
  Unindex(capacities_by_class_, class_before, key);
  if (auto now = storage_capacities_.find(key); now != storage_capacities_.end()) {
    class_now = now->second.storage_class;
    capacities_by_class_[class_now].insert(key);
  }
  AddClassPods(class_before, cluster, &out);
  if (class_now != class_before) AddClassPods(class_now, cluster, &out);
  return out;
}

// ---------------------------------------------------------------------------------------
// Storage capacity

void VolumeBinder::AddStorageCapacity(const k8s::ClaimInfo& claim, const k8s::StorageClassInfo& sc,
                                      DelayedClaim* out) const {
  // hasEnoughCapacity: no size asked, or a driver that does not track capacity (or no
  // CSIDriver object): any node will do.
  if (!claim.has_storage_request) return;
  auto driver = csi_drivers_.find(sc.provisioner);
  if (driver == csi_drivers_.end() || !driver->second.storage_capacity) return;
  out->capacity_tracked = true;
  auto keys = capacities_by_class_.find(sc.meta.name);
  if (keys == capacities_by_class_.end()) return;
  const int64_t size = CeilBytes(claim.storage_request);
  for (const std::string& key : keys->second) {
    const k8s::StorageCapacityInfo& capacity = storage_capacities_.at(key);
    if (!capacity.volume_limit || CeilBytes(*capacity.volume_limit) < size) continue;
    if (!capacity.node_topology) continue;  // nodeHasAccess: no topology, no node
    if (std::find(out->capacity_topologies.begin(), out->capacity_topologies.end(),
                  *capacity.node_topology) == out->capacity_topologies.end()) {
      out->capacity_topologies.push_back(*capacity.node_topology);
    }
  }
}

}  // namespace gantry
