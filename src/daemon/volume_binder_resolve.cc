// What a pending pod's PersistentVolumeClaims mean for where it may run, as
// kube-scheduler's VolumeRestrictions, VolumeBinding and VolumeZone plugins decide it,
// checked in the order their PreFilter and Filter steps run so that a pod waits with the
// words kube-scheduler would give first; and the Fluid datasets its bound claims read
// (dataset locality, issue 13).
#include <algorithm>
#include <optional>

#include "daemon/volume_binder.h"
#include "k8s/datasets.h"
#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry {
namespace {

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

std::string VolumeBinder::Resolve(const k8s::PodInfo& info, TaskSpec* spec) const {
  *spec = info.spec;
  if (info.claims.empty()) {
    AddAttachableVolumes(info, /*to_place=*/true, spec);  // its inline volumes
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
    if (const std::string* holder = ClaimHolder(ClaimKey(ns, ref->claim), pod_key)) {
      return "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
             "mode already in-use by another pod (" +
             Where(*ref) + ": claim " + Quoted(ref->claim) + " is used by pod " + *holder + ")";
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
  AddAttachableVolumes(info, /*to_place=*/true, spec);
  for (const k8s::PodClaimRef* ref : rwop) spec->rwop_claims.push_back(ref->claim);
  std::sort(spec->rwop_claims.begin(), spec->rwop_claims.end());
  spec->rwop_claims.erase(std::unique(spec->rwop_claims.begin(), spec->rwop_claims.end()),
                          spec->rwop_claims.end());
  // Dataset locality: claims of Fluid datasets name datasets it reads.
  return AddClaimDatasets(info, spec);
}

// ---------------------------------------------------------------------------------------
// Datasets

std::string VolumeBinder::AddClaimDatasets(const k8s::PodInfo& info, TaskSpec* spec) const {
  bool added = false;
  for (const k8s::PodClaimRef& ref : info.claims) {
    auto claim = claims_.find(ClaimKey(info.meta.namespace_, ref.claim));
    if (claim == claims_.end() || !claim->second.fully_bound()) continue;
    auto volume = volumes_.find(claim->second.volume_name);
    if (volume == volumes_.end() || volume->second.fluid_dataset.empty()) continue;
    spec->datasets.push_back(volume->second.fluid_dataset);
    added = true;
  }
  if (!added) return "";
  std::sort(spec->datasets.begin(), spec->datasets.end());
  spec->datasets.erase(std::unique(spec->datasets.begin(), spec->datasets.end()),
                       spec->datasets.end());
  if (spec->datasets.size() > kMaxDatasetsPerTask) {
    return "the pod reads " + std::to_string(spec->datasets.size()) + " datasets (its annotation " +
           k8s::kDatasetsAnnotation + " and its claims of Fluid datasets); the limit is " +
           std::to_string(kMaxDatasetsPerTask);
  }
  return "";
}

}  // namespace gantry
