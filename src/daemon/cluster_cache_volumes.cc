// What a pending pod's PersistentVolumeClaims mean for where it may run, as
// kube-scheduler's VolumeRestrictions, VolumeBinding and VolumeZone plugins decide it,
// checked in the order their PreFilter and Filter steps run so that a pod waits with the
// words kube-scheduler would give first. Applying the other objects is cluster_cache.cc.
#include <algorithm>
#include <optional>

#include "daemon/cluster_cache.h"
#include "k8s/json_fields.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string ClaimKey(const std::string& namespace_, const std::string& name) {
  return namespace_ + "/" + name;
}

std::string Quoted(const std::string& text) {
  return "\"" + k8s::KeyText(text) + "\"";
}

// `spec.volumes[0].persistentVolumeClaim, volume "data"`: where the pod names it.
std::string Where(const k8s::PodClaimRef& ref) {
  return ref.Field() + ", volume " + Quoted(ref.volume);
}
std::string At(const k8s::PodClaimRef& ref) {
  return " (" + Where(ref) + ")";
}
}  // namespace

// ---------------------------------------------------------------------------------------
// Resolving a pod's claims

std::string ClusterCache::ResolveVolumes(const PodRecord& pod, TaskSpec* spec) const {
  const k8s::PodInfo& info = pod.info;
  *spec = info.spec;
  if (info.claims.empty()) {
    AddClaimVolumes(info, /*to_place=*/true, spec);  // its inline volumes
    return "";
  }
  const std::string& ns = info.meta.namespace_;
  const std::string pod_key = info.meta.Key();
  auto claim_of = [&](const k8s::PodClaimRef& ref) -> const k8s::ClaimInfo* {
    auto it = claims_.find(ClaimKey(ns, ref.claim));
    return it == claims_.end() ? nullptr : &it->second;
  };
  auto unreadable = [&](const k8s::PodClaimRef& ref) -> std::string {
    auto bad = bad_claims_.find(ClaimKey(ns, ref.claim));
    if (bad == bad_claims_.end()) return "";
    return "persistentvolumeclaim " + Quoted(ref.claim) +
           " cannot be read by gantry: " + bad->second + At(ref);
  };

  // VolumeRestrictions' PreFilter: the claims of persistentVolumeClaim volumes exist, and
  // which are ReadWriteOncePod.
  std::vector<const k8s::PodClaimRef*> rwop;
  for (const k8s::PodClaimRef& ref : info.claims) {
    if (ref.ephemeral) continue;
    if (std::string why = unreadable(ref); !why.empty()) return why;
    const k8s::ClaimInfo* claim = claim_of(ref);
    if (claim == nullptr) {
      return "persistentvolumeclaim " + Quoted(ref.claim) + " not found" + At(ref);
    }
    if (claim->read_write_once_pod) rwop.push_back(&ref);
  }
  // VolumeBinding's PreFilter: every claim (ephemeral volumes' too) exists, is not lost
  // or being deleted, and an ephemeral volume's was made for this pod.
  for (const k8s::PodClaimRef& ref : info.claims) {
    if (std::string why = unreadable(ref); !why.empty()) return why;
    const k8s::ClaimInfo* claim = claim_of(ref);
    if (claim == nullptr) {
      return "waiting for ephemeral volume controller to create the persistentvolumeclaim " +
             Quoted(ref.claim) + At(ref);
    }
    if (claim->lost) {
      return "persistentvolumeclaim " + Quoted(ref.claim) + " bound to non-existent " +
             "persistentvolume " + Quoted(claim->volume_name) + At(ref);
    }
    if (claim->meta.deleting) {
      return "persistentvolumeclaim " + Quoted(ref.claim) + " is being deleted" + At(ref);
    }
    if (ref.ephemeral &&
        (claim->controller_uid.empty() || claim->controller_uid != info.meta.uid)) {
      return "PVC " + ns + "/" + k8s::KeyText(ref.claim) + " was not created for pod " + pod_key +
             " (pod is not owner)" + At(ref);
    }
  }
  // Which claims are bound, which wait for their first consumer, which should have been
  // bound already (Immediate binding, or pre-bound to a volume but not yet fully bound).
  std::vector<const k8s::PodClaimRef*> bound, delayed;
  const k8s::PodClaimRef* immediate = nullptr;
  for (const k8s::PodClaimRef& ref : info.claims) {
    const k8s::ClaimInfo* claim = claim_of(ref);
    if (claim->fully_bound()) {
      bound.push_back(&ref);
      continue;
    }
    bool delay = false;
    if (!claim->storage_class.empty()) {
      if (auto bad = bad_storage_classes_.find(claim->storage_class);
          bad != bad_storage_classes_.end()) {
        return "storageclass " + Quoted(claim->storage_class) +
               " cannot be read by gantry: " + bad->second + At(ref);
      }
      // A class that does not exist binds immediately (kube-scheduler's IsDelayBindingMode).
      if (auto sc = storage_classes_.find(claim->storage_class); sc != storage_classes_.end()) {
        if (sc->second.binding_mode == k8s::VolumeBindingMode::kUnset) {
          return "VolumeBindingMode not set for StorageClass " + Quoted(claim->storage_class) +
                 At(ref);
        }
        delay = sc->second.binding_mode == k8s::VolumeBindingMode::kWaitForFirstConsumer;
      }
    }
    if (delay && claim->volume_name.empty()) {
      delayed.push_back(&ref);
    } else if (immediate == nullptr) {
      immediate = &ref;
    }
  }
  if (immediate != nullptr) {
    return "pod has unbound immediate PersistentVolumeClaims (" + Where(*immediate) + ": claim " +
           Quoted(immediate->claim) + " is not bound)";
  }
  // VolumeZone's PreFilter: the volumes of bound persistentVolumeClaim volumes exist, and
  // their topology labels.
  auto volume_of = [&](const std::string& name) -> const k8s::PersistentVolumeInfo* {
    auto it = volumes_.find(name);
    return it == volumes_.end() ? nullptr : &it->second;
  };
  for (const k8s::PodClaimRef* ref : bound) {
    const std::string& name = claim_of(*ref)->volume_name;
    if (auto bad = bad_volumes_.find(name); bad != bad_volumes_.end()) {
      return "persistentvolume " + Quoted(name) + " cannot be read by gantry: " + bad->second +
             At(*ref);
    }
    if (ref->ephemeral) continue;
    const k8s::PersistentVolumeInfo* pv = volume_of(name);
    if (pv == nullptr) return "persistentvolume " + Quoted(name) + " not found" + At(*ref);
    for (const VolumeTopology& zone : pv->zones) {
      if (std::find(spec->volume_zones.begin(), spec->volume_zones.end(), zone) ==
          spec->volume_zones.end()) {
        spec->volume_zones.push_back(zone);
      }
    }
  }
  // VolumeBinding's Filter on bound claims: the volume's node affinity (an ephemeral
  // volume's missing volume fails every node).
  for (const k8s::PodClaimRef* ref : bound) {
    const std::string& name = claim_of(*ref)->volume_name;
    const k8s::PersistentVolumeInfo* pv = volume_of(name);
    if (pv == nullptr) {
      return "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)" + At(*ref);
    }
    if (pv->node_affinity &&
        std::find(spec->volume_node_affinity.begin(), spec->volume_node_affinity.end(),
                  *pv->node_affinity) == spec->volume_node_affinity.end()) {
      spec->volume_node_affinity.push_back(*pv->node_affinity);
    }
  }
  // VolumeRestrictions' Filter: a ReadWriteOncePod claim that a pod on a node (or one
  // assumed there) uses fails every node.
  for (const k8s::PodClaimRef* ref : rwop) {
    if (const PodRecord* holder = ClaimHolder(ClaimKey(ns, ref->claim), pod_key)) {
      return "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
             "mode already in-use by another pod (" +
             Where(*ref) + ": claim " + Quoted(ref->claim) + " is used by pod " +
             holder->info.meta.Key() + ")";
    }
  }
  // VolumeBinding's Filter on claims that wait for their first consumer: matched (each
  // claim once, smallest request first, as findMatchingVolumes sorts them) per node in
  // the session.
  std::vector<const k8s::ClaimInfo*> delayed_claims;
  for (const k8s::PodClaimRef* ref : delayed) {
    const k8s::ClaimInfo* claim = claim_of(*ref);
    if (std::find(delayed_claims.begin(), delayed_claims.end(), claim) == delayed_claims.end()) {
      delayed_claims.push_back(claim);
    }
  }
  std::stable_sort(delayed_claims.begin(), delayed_claims.end(),
                   [](const k8s::ClaimInfo* a, const k8s::ClaimInfo* b) {
                     return a->storage_request < b->storage_request;
                   });
  for (const k8s::ClaimInfo* claim : delayed_claims) {
    spec->delayed_claims.push_back(DelayedClaimOf(*claim));
  }
  // NodeVolumeLimits: what its claims attach as, beside its inline volumes.
  AddClaimVolumes(info, /*to_place=*/true, spec);
  for (const k8s::PodClaimRef* ref : rwop) spec->rwop_claims.push_back(ref->claim);
  std::sort(spec->rwop_claims.begin(), spec->rwop_claims.end());
  spec->rwop_claims.erase(std::unique(spec->rwop_claims.begin(), spec->rwop_claims.end()),
                          spec->rwop_claims.end());
  // Dataset locality: claims of Fluid datasets name datasets it reads.
  return AddClaimDatasets(info, spec);
}

const ClusterCache::PodRecord* ClusterCache::ClaimHolder(const std::string& claim_key,
                                                         const std::string& except) const {
  auto users = pods_by_claim_.find(claim_key);
  if (users == pods_by_claim_.end()) return nullptr;
  for (const std::string& key : users->second) {
    if (key == except) continue;
    auto it = pods_.find(key);
    if (it == pods_.end() || !it->second.holds_claims) continue;
    const k8s::PodInfo& other = it->second.info;
    for (const k8s::PodClaimRef& ref : other.claims) {
      if (!ref.ephemeral && ClaimKey(other.meta.namespace_, ref.claim) == claim_key) {
        return &it->second;
      }
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Who names what

void ClusterCache::IndexPodClaims(PodRecord& pod, const std::string& key, bool gone) {
  std::vector<std::string> now;
  if (!gone) {
    for (const k8s::PodClaimRef& ref : pod.info.claims) {
      now.push_back(ClaimKey(pod.info.meta.namespace_, ref.claim));
    }
    std::sort(now.begin(), now.end());
    now.erase(std::unique(now.begin(), now.end()), now.end());
  }
  if (now == pod.indexed_claims) return;
  for (const std::string& claim : pod.indexed_claims) {
    auto it = pods_by_claim_.find(claim);
    if (it == pods_by_claim_.end()) continue;
    it->second.erase(key);
    if (it->second.empty()) pods_by_claim_.erase(it);
  }
  for (const std::string& claim : now) pods_by_claim_[claim].insert(key);
  pod.indexed_claims = std::move(now);
}

void ClusterCache::UpdateClaimUse(PodRecord& pod, const std::string& key, bool gone) {
  const k8s::PodInfo& info = pod.info;
  const bool holds =
      !gone && !info.claims.empty() && !info.finished() && (!info.node_name.empty() || pod.assumed);
  if (holds == pod.holds_claims) return;
  pod.holds_claims = holds;
  for (const k8s::PodClaimRef& ref : info.claims) {
    if (ref.ephemeral) continue;
    const std::string claim_key = ClaimKey(info.meta.namespace_, ref.claim);
    auto claim = claims_.find(claim_key);
    if (claim != claims_.end() && claim->second.read_write_once_pod) {
      ResyncClaimPods(claim_key, key);
    }
  }
}

void ClusterCache::ResyncClaimPods(const std::string& claim_key, const std::string& except) {
  auto users = pods_by_claim_.find(claim_key);
  if (users == pods_by_claim_.end()) return;
  // Copied: a sync may not change who names the claim, but the set is not held across it.
  const std::vector<std::string> keys(users->second.begin(), users->second.end());
  for (const std::string& key : keys) {
    pod_records_visited_++;
    if (key == except) continue;
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    PodRecord& pod = it->second;
    if (pod.volume_wait) {
      // Failed ones are given up with the time known (ExpireVolumeBindings).
      if (!pod.volume_wait->failure.empty()) continue;
      std::string failure = CheckVolumeWait(pod, key);
      if (!failure.empty() && pod.volume_wait) {
        pod.volume_wait->failure = std::move(failure);
        volume_failures_.insert(key);
      }
      continue;
    }
    // Pods waiting to be placed read claims; a bound pod's claims say what volumes it
    // has attached (NodeVolumeLimits). An assumed pod counts as it was placed.
    if (pod.assumed) continue;
    if (pod.info.node_name.empty() && !Ours(pod.info)) continue;
    SyncPod(key);
  }
}

void ClusterCache::IndexClaim(const std::string& key, const k8s::ClaimInfo* before,
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

void ClusterCache::OnClaim(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
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
      Problem({"v1", "PersistentVolumeClaim", meta->namespace_, meta->name, meta->uid, "Warning",
               "InvalidPersistentVolumeClaim", said});
    }
  }
  auto now = claims_.find(key);
  IndexClaim(key, before ? &*before : nullptr, now == claims_.end() ? nullptr : &now->second);
  ResyncClaimPods(key);
}

void ClusterCache::OnPersistentVolume(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
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
      Problem({"v1", "PersistentVolume", "", name, meta->uid, "Warning", "InvalidPersistentVolume",
               said});
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
  for (const std::string& claim : keys) ResyncClaimPods(claim);
  RefreshAttachmentsOf(name);
  ResyncClassPods(class_before);
  if (class_now != class_before) ResyncClassPods(class_now);
}

void ClusterCache::OnStorageClass(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
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
      Problem({"storage.k8s.io/v1", "StorageClass", "", name, meta->uid, "Warning",
               "InvalidStorageClass", said});
    }
  }
  auto claims = claims_by_class_.find(name);
  if (claims == claims_by_class_.end()) return;
  const std::vector<std::string> keys(claims->second.begin(), claims->second.end());
  for (const std::string& claim : keys) ResyncClaimPods(claim);
}

}  // namespace gantry
