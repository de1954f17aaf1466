// The volume binder's objects (claims, volumes, classes), who names what, and which pods a
// change of them reaches. What a pod's claims mean is volume_binder_resolve.cc; the CSI
// objects are volume_binder_csi.cc; delayed binding is volume_binder_wait.cc.
#include <algorithm>
#include <optional>

#include "daemon/volume_binder.h"
#include "k8s/json_fields.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string ClaimKey(const std::string& namespace_, const std::string& name) {
  return namespace_ + "/" + name;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The pods that name claims

void VolumeBinder::TrackPod(const std::string& key, const k8s::PodInfo& pod) {
  if (pod.claims.empty() && pods_.empty()) return;  // most pods: nothing to follow
  std::vector<std::string> now;
  for (const k8s::PodClaimRef& ref : pod.claims) {
    now.push_back(ClaimKey(pod.meta.namespace_, ref.claim));
  }
  std::sort(now.begin(), now.end());
  now.erase(std::unique(now.begin(), now.end()), now.end());
  auto it = pods_.find(key);
  if (it == pods_.end()) {
    if (now.empty()) return;
    it = pods_.emplace(key, PodClaims{}).first;
  }
  PodClaims& record = it->second;
  record.namespace_ = pod.meta.namespace_;
  record.claims = pod.claims;
  if (now != record.indexed) {
    for (const std::string& claim : record.indexed) {
      auto users = pods_by_claim_.find(claim);
      if (users == pods_by_claim_.end()) continue;
      users->second.erase(key);
      if (users->second.empty()) pods_by_claim_.erase(users);
    }
    for (const std::string& claim : now) pods_by_claim_[claim].insert(key);
    record.indexed = std::move(now);
  }
  // A pod that names no claim uses none: nothing to remember of it.
  if (record.claims.empty() && !record.in_use) pods_.erase(it);
}

Resync VolumeBinder::SetClaimsInUse(const std::string& key, bool in_use,
                                    const ClusterState& cluster) {
  Resync out;
  if (pods_.empty()) return out;
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.in_use == in_use) return out;
  PodClaims& record = it->second;
  record.in_use = in_use;
  const std::string namespace_ = record.namespace_;
  const std::vector<k8s::PodClaimRef> claims = record.claims;  // the walk may not change them
  if (record.claims.empty() && !record.in_use) pods_.erase(it);
  for (const k8s::PodClaimRef& ref : claims) {
    if (ref.ephemeral) continue;
    const std::string claim_key = ClaimKey(namespace_, ref.claim);
    auto claim = claims_.find(claim_key);
    if (claim != claims_.end() && claim->second.read_write_once_pod) {
      AddClaimPods(claim_key, key, cluster, &out);
    }
  }
  return out;
}

Resync VolumeBinder::ForgetPod(const std::string& key, const ClusterState& cluster) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return {};
  // It names no claim from here on, then stops using its own.
  for (const std::string& claim : it->second.indexed) {
    auto users = pods_by_claim_.find(claim);
    if (users == pods_by_claim_.end()) continue;
    users->second.erase(key);
    if (users->second.empty()) pods_by_claim_.erase(users);
  }
  it->second.indexed.clear();
  Resync out = SetClaimsInUse(key, false, cluster);
  pods_.erase(key);
  return out;
}

const std::string* VolumeBinder::ClaimHolder(const std::string& claim_key,
                                             const std::string& except) const {
  auto users = pods_by_claim_.find(claim_key);
  if (users == pods_by_claim_.end()) return nullptr;
  for (const std::string& key : users->second) {
    if (key == except) continue;
    auto it = pods_.find(key);
    if (it == pods_.end() || !it->second.in_use) continue;
    for (const k8s::PodClaimRef& ref : it->second.claims) {
      if (!ref.ephemeral && ClaimKey(it->second.namespace_, ref.claim) == claim_key) {
        return &key;
      }
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Who a change reaches

void VolumeBinder::AddClaimPods(const std::string& claim_key, const std::string& except,
                                const ClusterState& cluster, Resync* out) {
  auto users = pods_by_claim_.find(claim_key);
  if (users == pods_by_claim_.end()) return;
  // Copied: ending a wait does not change who names the claim, but the set is not held
  // across it.
  const std::vector<std::string> keys(users->second.begin(), users->second.end());
  for (const std::string& key : keys) {
    pods_visited_++;
    if (key == except) continue;
    auto wait = waits_.find(key);
    if (wait == waits_.end()) {
      // Pods waiting to be placed read claims; a bound pod's claims say what volumes it
      // has attached (NodeVolumeLimits).
      out->pods.push_back(key);
      continue;
    }
    // Failed ones are given up with the time known (Poll).
    if (!wait->second.failure.empty()) continue;
    std::string failure = CheckWait(key, cluster, out);
    if (wait = waits_.find(key); !failure.empty() && wait != waits_.end()) {
      wait->second.failure = std::move(failure);
      failed_.insert(key);
    }
  }
}

void VolumeBinder::AddClassPods(const std::string& storage_class, const ClusterState& cluster,
                                Resync* out) {
  if (storage_class.empty()) return;
  auto claims = claims_by_class_.find(storage_class);
  if (claims == claims_by_class_.end()) return;
  const std::vector<std::string> keys(claims->second.begin(), claims->second.end());
  for (const std::string& claim : keys) {
    auto it = claims_.find(claim);
    // Only claims still to be bound can take a volume.
    if (it != claims_.end() && it->second.volume_name.empty())
      AddClaimPods(claim, "", cluster, out);
  }
}

void VolumeBinder::IndexClaim(const std::string& key, const k8s::ClaimInfo* before,
                              const k8s::ClaimInfo* after) {
  auto move = [&](std::unordered_map<std::string, std::set<std::string>>& index,
                  const std::string& from, const std::string& to) {
    if (from == to) return;
    if (!from.empty()) {
      auto it = index.find(from);
      if (it != index.end()) {
        it->second.erase(key);
        if (it->second.empty()) index.erase(it);
      }
    }
    if (!to.empty()) index[to].insert(key);
  };
  move(claims_by_volume_, before ? before->volume_name : "", after ? after->volume_name : "");
  move(claims_by_class_, before ? before->storage_class : "", after ? after->storage_class : "");
}

// ---------------------------------------------------------------------------------------
// Claims, volumes, classes

Resync VolumeBinder::OnClaim(k8s::EventType type, const json& object, const ClusterState& cluster) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const std::string key = meta->Key();
  auto known = claims_.find(key);
  std::optional<k8s::ClaimInfo> before;
  if (known != claims_.end()) before = std::move(known->second);
  claims_.erase(key);
  if (type == k8s::EventType::kDeleted) {
    bad_claims_.erase(key);
  } else if (auto claim = k8s::ParseClaim(object); claim.ok()) {
    bad_claims_.erase(key);
    claims_.emplace(key, std::move(claim).value());
  } else {
    std::string message = Bounded(claim.status().message(), kMaxMessage);
    std::string& said = bad_claims_[key];
    if (said != message) {
      said = message;
      out.problems.push_back({"v1", "PersistentVolumeClaim", meta->namespace_, meta->name,
                              meta->uid, "Warning", "InvalidPersistentVolumeClaim", said});
    }
  }
  auto now = claims_.find(key);
  IndexClaim(key, before ? &*before : nullptr, now == claims_.end() ? nullptr : &now->second);
  AddClaimPods(key, "", cluster, &out);
  return out;
}

Resync VolumeBinder::OnPersistentVolume(k8s::EventType type, const json& object,
                                        const ClusterState& cluster) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const std::string& name = meta->name;
  std::string class_before;
  if (auto known = volumes_.find(name); known != volumes_.end()) {
    class_before = known->second.storage_class;
    auto by_class = volumes_by_class_.find(class_before);
    if (by_class != volumes_by_class_.end()) {
      by_class->second.erase(name);
      if (by_class->second.empty()) volumes_by_class_.erase(by_class);
    }
  }
  volumes_.erase(name);
  if (type == k8s::EventType::kDeleted) {
    bad_volumes_.erase(name);
  } else if (auto pv = k8s::ParsePersistentVolume(object); pv.ok()) {
    bad_volumes_.erase(name);
    volumes_.emplace(name, std::move(pv).value());
  } else {
    std::string message = Bounded(pv.status().message(), kMaxMessage);
    std::string& said = bad_volumes_[name];
    if (said != message) {
      said = message;
      out.problems.push_back({"v1", "PersistentVolume", "", name, meta->uid, "Warning",
                              "InvalidPersistentVolume", said});
    }
  }
  std::string class_now;
  if (auto known = volumes_.find(name); known != volumes_.end()) {
    class_now = known->second.storage_class;
    volumes_by_class_[class_now].insert(name);
  }
  // The claims bound to it; the claim a binding in flight gave it (its pod checks it);
  // and the delayed claims of its class, which may match it now or no more.
  std::vector<std::string> keys;
  if (auto claims = claims_by_volume_.find(name); claims != claims_by_volume_.end()) {
    keys.assign(claims->second.begin(), claims->second.end());
  }
  if (auto assumed = assumed_claim_refs_.find(name);
      assumed != assumed_claim_refs_.end() && assumed->second.ref) {
    keys.push_back(assumed->second.ref->namespace_ + "/" + assumed->second.ref->name);
  }
  for (const std::string& claim : keys) AddClaimPods(claim, "", cluster, &out);
  AddAttachmentNodes(name, &out);
  AddClassPods(class_before, cluster, &out);
  if (class_now != class_before) AddClassPods(class_now, cluster, &out);
  return out;
}

Resync VolumeBinder::OnStorageClass(k8s::EventType type, const json& object,
                                    const ClusterState& cluster) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const std::string& name = meta->name;
  storage_classes_.erase(name);
  if (type == k8s::EventType::kDeleted) {
    bad_storage_classes_.erase(name);
  } else if (auto sc = k8s::ParseStorageClass(object); sc.ok()) {
    bad_storage_classes_.erase(name);
    storage_classes_.emplace(name, std::move(sc).value());
  } else {
    std::string message = Bounded(sc.status().message(), kMaxMessage);
    std::string& said = bad_storage_classes_[name];
    if (said != message) {
      said = message;
      out.problems.push_back({"storage.k8s.io/v1", "StorageClass", "", name, meta->uid, "Warning",
                              "InvalidStorageClass", said});
    }
  }
  auto claims = claims_by_class_.find(name);
  if (claims == claims_by_class_.end()) return out;
  const std::vector<std::string> keys(claims->second.begin(), claims->second.end());
  for (const std::string& claim : keys) AddClaimPods(claim, "", cluster, &out);
  return out;
}

VolumeBinder::Sizes VolumeBinder::sizes() const {
  Sizes s;
  s.claims = claims_.size() + bad_claims_.size();
  s.volumes = volumes_.size() + bad_volumes_.size();
  s.storage_classes = storage_classes_.size() + bad_storage_classes_.size();
  for (const auto* index :
       {&pods_by_claim_, &claims_by_volume_, &claims_by_class_, &volumes_by_class_}) {
    for (const auto& [key, keys] : *index) s.claim_index += keys.size();
  }
  s.volume_waits = deadlines_.size() + failed_.size() + writes_.size();
  s.volume_overlays = assumed_claim_refs_.size() + assumed_selected_nodes_.size();
  s.pods = pods_.size() + waits_.size();
  return s;
}

}  // namespace gantry
