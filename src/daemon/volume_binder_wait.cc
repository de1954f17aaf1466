// Delayed volume binding (claims of a WaitForFirstConsumer class) as kube-scheduler's
// VolumeBinding does it: what a claim may be bound to (GetPodVolumeClaims and
// FindMatchingVolume's per-claim half; the per-node half is the engine's,
// engine/volume_binding.h), the choice assumed and written once a session places the pod
// (AssumePodVolumes, bindAPIUpdate), and the wait for the PV controller to bind the
// claims before the pod is bound (checkBindings), without holding up the scheduling loop.
#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "daemon/volume_binder.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string Quoted(const std::string& text) {
  return "\"" + k8s::KeyText(text) + "\"";
}

// IsVolumeBoundToClaim: the names agree, and the uid when the reference has one.
bool RefersTo(const k8s::ClaimRef& ref, const k8s::ClaimInfo& claim) {
  return ref.name == claim.meta.name && ref.namespace_ == claim.meta.namespace_ &&
         (ref.uid.empty() || ref.uid == claim.meta.uid);
}

// CheckAccessModes: the volume offers every mode the claim asks for.
bool AccessModesFit(const k8s::ClaimInfo& claim, const k8s::PersistentVolumeInfo& pv) {
  return std::all_of(claim.access_modes.begin(), claim.access_modes.end(),
                     [&](const std::string& mode) {
                       return std::find(pv.access_modes.begin(), pv.access_modes.end(), mode) !=
                              pv.access_modes.end();
                     });
}

// Whether the object the watch shows is older than the version a write made (etcd's
// resourceVersions are integers; one that is not, compares as not older).
bool Older(const std::string& seen, const std::string& written) {
  char* end = nullptr;
  const unsigned long long a = std::strtoull(seen.c_str(), &end, 10);
  if (seen.empty() || *end != '\0') return false;
  const unsigned long long b = std::strtoull(written.c_str(), &end, 10);
  if (written.empty() || *end != '\0') return false;
  return a < b;
}

std::string ClaimPath(const std::string& namespace_, const std::string& name) {
  return "/api/v1/namespaces/" + namespace_ + "/persistentvolumeclaims/" + name;
}

}  // namespace

const std::optional<k8s::ClaimRef>& VolumeBinder::ClaimRefOf(
    const k8s::PersistentVolumeInfo& pv) const {
  auto assumed = assumed_claim_refs_.find(pv.meta.name);
  return assumed == assumed_claim_refs_.end() ? pv.claim_ref : assumed->second.ref;
}

DelayedClaim VolumeBinder::DelayedClaimOf(const k8s::ClaimInfo& claim) const {
  DelayedClaim out;
  out.claim = claim.meta.name;
  if (auto assumed = assumed_selected_nodes_.find(claim.meta.Key());
      assumed != assumed_selected_nodes_.end()) {
    out.selected_node = assumed->second.node;
  } else {
    out.selected_node = claim.selected_node;
  }
  // The class exists: the claim was found to wait for its first consumer by it.
  if (auto sc = storage_classes_.find(claim.storage_class); sc != storage_classes_.end()) {
    out.provisionable =
        !sc->second.provisioner.empty() && sc->second.provisioner != k8s::kNoProvisioner;
    out.allowed_topologies = sc->second.allowed_topologies;
    if (out.provisionable) AddStorageCapacity(claim, sc->second, &out);
  }
  // A claim with a node selected is provisioned there; no volume is matched for it.
  if (out.selected_node) return out;
  auto of_class = volumes_by_class_.find(claim.storage_class);
  if (of_class == volumes_by_class_.end()) return out;
  for (const std::string& name : of_class->second) {  // by name
    auto it = volumes_.find(name);
    if (it == volumes_.end()) continue;
    const k8s::PersistentVolumeInfo& pv = it->second;
    const std::optional<k8s::ClaimRef>& ref = ClaimRefOf(pv);
    const bool bound_here = ref && RefersTo(*ref, claim);
    if (ref && !bound_here) continue;
    if (pv.capacity < claim.storage_request) continue;
    if (pv.volume_mode != claim.volume_mode) continue;
    if (pv.meta.deleting) continue;
    CandidateVolume candidate{name, pv.capacity, pv.node_affinity};
    if (bound_here) {
      // The first pre-bound one decides, whatever else would match.
      if (!out.prebound) out.prebound = std::move(candidate);
      continue;
    }
    if (!pv.available) continue;
    if (claim.selector && !claim.selector->Matches(pv.labels)) continue;
    if (!AccessModesFit(claim, pv)) continue;
    out.volumes.push_back(std::move(candidate));
  }
  if (out.prebound) {
    out.volumes.clear();
  } else {
    std::stable_sort(
        out.volumes.begin(), out.volumes.end(),
        [](const CandidateVolume& a, const CandidateVolume& b) { return a.capacity < b.capacity; });
  }
  return out;
}

std::string VolumeBinder::Assume(const std::string& key, const BindDecision& decision,
                                 const TaskSpec& spec, BindRequest bind, double now,
                                 Touched* touched) {
  if (decision.volumes.size() != spec.delayed_claims.size()) {
    return "the session chose no volume for its delayed claims";
  }
  const std::string ns = bind.namespace_;
  Wait wait;
  wait.node = bind.node;
  wait.deadline = now + bind_timeout_s_;
  VolumeWrites writes{ns, bind.name, bind.uid, {}};
  // Checked first, so that nothing is assumed for a choice that cannot be written.
  for (size_t i = 0; i < spec.delayed_claims.size(); ++i) {
    const std::string claim_key = ns + "/" + spec.delayed_claims[i].claim;
    if (!claims_.count(claim_key)) return "claim " + claim_key + " is gone";
    if (!decision.volumes[i].empty() && !volumes_.count(decision.volumes[i])) {
      return "persistentvolume " + decision.volumes[i] + " is gone";
    }
  }
  for (size_t i = 0; i < spec.delayed_claims.size(); ++i) {
    const std::string claim_key = ns + "/" + spec.delayed_claims[i].claim;
    const k8s::ClaimInfo& claim = claims_.at(claim_key);
    const std::string& volume = decision.volumes[i];
    touched->claims.push_back(claim_key);
    if (volume.empty()) {
      // Provisioning: the claim names the node (AssumePodVolumes' AnnSelectedNode).
      wait.provisions.push_back(claim.meta.name);
      AssumedNode& assumed = assumed_selected_nodes_[claim_key];
      if (assumed.uses++ == 0) assumed.node = wait.node;
      json patch = {{"metadata",
                     {{"resourceVersion", claim.meta.resource_version},
                      {"annotations", {{k8s::kSelectedNodeAnnotation, wait.node}}}}}};
      writes.writes.push_back({ClaimPath(ns, claim.meta.name), k8s::JsonText(patch),
                               "persistentvolumeclaim " + Quoted(claim_key), "pvc/" + claim_key});
      continue;
    }
    // A static volume: its claimRef names the claim (GetBindVolumeToClaim).
    const k8s::PersistentVolumeInfo& pv = volumes_.at(volume);
    wait.bindings.emplace_back(claim.meta.name, volume);
    const bool was_bound_here = ClaimRefOf(pv) && RefersTo(*ClaimRefOf(pv), claim);
    AssumedRef& assumed = assumed_claim_refs_[volume];
    if (assumed.uses++ == 0) {
      assumed.ref = k8s::ClaimRef{ns, claim.meta.name, claim.meta.uid};
    }
    touched->classes.push_back(pv.storage_class);
    json metadata = {{"resourceVersion", pv.meta.resource_version}};
    if (!was_bound_here) metadata["annotations"] = {{k8s::kBoundByControllerAnnotation, "yes"}};
    json patch = {{"metadata", metadata},
                  {"spec",
                   {{"claimRef",
                     {{"kind", "PersistentVolumeClaim"},
                      {"apiVersion", "v1"},
                      {"namespace", ns},
                      {"name", claim.meta.name},
                      {"uid", claim.meta.uid},
                      {"resourceVersion", claim.meta.resource_version}}}}}};
    writes.writes.push_back({"/api/v1/persistentvolumes/" + volume, k8s::JsonText(patch),
                             "persistentvolume " + Quoted(volume), "pv/" + volume});
  }
  wait.bind = std::move(bind);
  deadlines_.insert({wait.deadline, key});
  waits_[key] = std::move(wait);
  writes_.push_back(std::move(writes));
  return "";
}

Resync VolumeBinder::ResyncAfterAssume(const Touched& touched, const ClusterState& cluster) {
  Resync out;
  for (const std::string& claim : touched.claims) AddClaimPods(claim, "", cluster, &out);
  for (const std::string& storage_class : touched.classes)
    AddClassPods(storage_class, cluster, &out);
  return out;
}

Resync VolumeBinder::Forget(const std::string& key, const ClusterState& cluster) {
  Resync out;
  EndWait(key, cluster, &out);
  return out;
}

void VolumeBinder::EndWait(const std::string& key, const ClusterState& cluster, Resync* out) {
  auto it = waits_.find(key);
  if (it == waits_.end()) return;
  Wait wait = std::move(it->second);
  waits_.erase(it);
  deadlines_.erase({wait.deadline, key});
  failed_.erase(key);
  const std::string& ns = wait.bind.namespace_;
  std::vector<std::string> resync_claims, resync_classes;
  for (const std::string& claim : wait.provisions) {
    auto assumed = assumed_selected_nodes_.find(ns + "/" + claim);
    if (assumed != assumed_selected_nodes_.end() && --assumed->second.uses <= 0) {
      assumed_selected_nodes_.erase(assumed);
    }
    resync_claims.push_back(ns + "/" + claim);
  }
  for (const auto& [claim, volume] : wait.bindings) {
    auto assumed = assumed_claim_refs_.find(volume);
    if (assumed != assumed_claim_refs_.end() && --assumed->second.uses <= 0) {
      assumed_claim_refs_.erase(assumed);
    }
    resync_claims.push_back(ns + "/" + claim);
    if (auto pv = volumes_.find(volume); pv != volumes_.end()) {
      resync_classes.push_back(pv->second.storage_class);
    }
  }
  for (const std::string& claim : resync_claims) AddClaimPods(claim, key, cluster, out);
  for (const std::string& storage_class : resync_classes) AddClassPods(storage_class, cluster, out);
}

std::string VolumeBinder::CheckWait(const std::string& key, const ClusterState& cluster,
                                    Resync* out) {
  auto it = waits_.find(key);
  if (it == waits_.end() || !it->second.written) return "";
  const Wait& wait = it->second;
  const std::string& ns = wait.bind.namespace_;
  const NodeId node_id = cluster.FindNode(wait.node);
  if (node_id == kNone) return "failed to get node " + Quoted(wait.node);
  const Labels& node_labels = cluster.node(node_id).labels;
  auto version = [&](const std::string& object_key) {
    auto found = wait.versions.find(object_key);
    return found == wait.versions.end() ? std::string() : found->second;
  };
  bool bound = true;
  for (const auto& [claim_name, volume] : wait.bindings) {
    auto pv = volumes_.find(volume);
    if (pv == volumes_.end()) {
      return "failed to check binding: persistentvolume " + Quoted(volume) + " not found";
    }
    if (Older(pv->second.meta.resource_version, version("pv/" + volume))) {
      bound = false;
      continue;
    }
    if (pv->second.node_affinity && !pv->second.node_affinity->Matches(node_labels)) {
      return "pv " + Quoted(volume) + " node affinity doesn't match node " + Quoted(wait.node);
    }
    if (!pv->second.claim_ref || pv->second.claim_ref->uid.empty()) {
      return "ClaimRef got reset for pv " + Quoted(volume);
    }
    auto claim = claims_.find(ns + "/" + claim_name);
    if (claim == claims_.end()) {
      return "failed to check binding: persistentvolumeclaim " + Quoted(ns + "/" + claim_name) +
             " not found";
    }
    if (!claim->second.fully_bound()) bound = false;
  }
  for (const std::string& claim_name : wait.provisions) {
    const std::string claim_key = ns + "/" + claim_name;
    auto claim = claims_.find(claim_key);
    if (claim == claims_.end()) {
      return "failed to check provisioning pvc: persistentvolumeclaim " + Quoted(claim_key) +
             " not found";
    }
    const k8s::ClaimInfo& c = claim->second;
    if (Older(c.meta.resource_version, version("pvc/" + claim_key))) {
      bound = false;
      continue;
    }
    // The provisioner takes the annotation away when it gives up.
    if (!c.selected_node || *c.selected_node != wait.node) {
      return "provisioning failed for PVC " + Quoted(claim_name);
    }
    if (!c.volume_name.empty()) {
      auto pv = volumes_.find(c.volume_name);
      if (pv == volumes_.end()) {  // not seen yet
        bound = false;
        continue;
      }
      if (pv->second.node_affinity && !pv->second.node_affinity->Matches(node_labels)) {
        return "pv " + Quoted(c.volume_name) + " node affinity doesn't match node " +
               Quoted(wait.node);
      }
    }
    if (!c.fully_bound()) bound = false;
  }
  if (!bound) return "";
  BindRequest bind = wait.bind;
  EndWait(key, cluster, out);
  ready_binds_.push_back(std::move(bind));
  return "";
}

std::optional<std::string> VolumeBinder::WritesDone(const VolumeWriteResult& result, double now,
                                                    const ClusterState& cluster, Resync* resync) {
  const std::string key = result.namespace_ + "/" + result.name;
  auto it = waits_.find(key);
  if (it == waits_.end() || it->second.bind.uid != result.uid) return std::nullopt;
  if (!result.ok) return result.error;
  Wait& wait = it->second;
  wait.written = true;
  // The wait for the provisioner and the PV controller counts from now, when the writes are
  // done, as kube-scheduler's BindPodVolumes polls bindTimeoutSeconds after its updates.
  deadlines_.erase({wait.deadline, key});
  wait.deadline = now + bind_timeout_s_;
  deadlines_.insert({wait.deadline, key});
  for (const auto& [object, version] : result.versions) wait.versions[object] = version;
  std::string failure = CheckWait(key, cluster, resync);
  if (failure.empty()) return std::nullopt;
  return failure;
}

std::vector<std::pair<std::string, std::string>> VolumeBinder::Poll(double now) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& key : std::exchange(failed_, {})) {
    auto it = waits_.find(key);
    if (it != waits_.end()) out.emplace_back(key, it->second.failure);
  }
  for (auto due = deadlines_.begin(); due != deadlines_.end() && due->first <= now; ++due) {
    out.emplace_back(due->second, "timed out waiting for the condition");
  }
  return out;
}

}  // namespace gantry
