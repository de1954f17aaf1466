// Delayed volume binding (claims of a WaitForFirstConsumer class) as kube-scheduler's
// VolumeBinding does it: what a claim may be bound to (GetPodVolumeClaims and
// FindMatchingVolume's per-claim half; the per-node half is the engine's,
// engine/volume_binding.h), the choice assumed and written once a session places the pod
// (AssumePodVolumes, bindAPIUpdate), and the wait for the PV controller to bind the
// claims before the pod is bound (checkBindings), without holding up the scheduling loop.
#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "daemon/cluster_cache.h"
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

const std::optional<k8s::ClaimRef>& ClusterCache::ClaimRefOf(
    const k8s::PersistentVolumeInfo& pv) const {
  auto assumed = assumed_claim_refs_.find(pv.meta.name);
  return assumed == assumed_claim_refs_.end() ? pv.claim_ref : assumed->second.ref;
}

DelayedClaim ClusterCache::DelayedClaimOf(const k8s::ClaimInfo& claim) const {
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

void ClusterCache::ResyncClassPods(const std::string& storage_class) {
  if (storage_class.empty()) return;
  auto claims = claims_by_class_.find(storage_class);
  if (claims == claims_by_class_.end()) return;
  const std::vector<std::string> keys(claims->second.begin(), claims->second.end());
  for (const std::string& claim : keys) {
    auto it = claims_.find(claim);
    // Only claims still to be bound can take a volume.
    if (it != claims_.end() && it->second.volume_name.empty()) ResyncClaimPods(claim);
  }
}

bool ClusterCache::AssumeVolumes(PodRecord& pod, const std::string& key,
                                 const BindDecision& decision, const TaskSpec& spec,
                                 BindRequest bind, double now,
                                 std::vector<std::string>* resync_claims,
                                 std::vector<std::string>* resync_classes) {
  const k8s::ObjectMeta& meta = pod.info.meta;
  auto refuse = [&](const std::string& why) {
    Problem({"v1", "Pod", meta.namespace_, meta.name, meta.uid, "Warning", "InternalError",
             "volume binding could not be assumed: " + why});
    return false;
  };
  if (decision.volumes.size() != spec.delayed_claims.size()) {
    return refuse("the session chose no volume for its delayed claims");
  }
  PodRecord::VolumeWait wait;
  wait.node = bind.node;
  wait.deadline = now + volume_bind_timeout_s_;
  VolumeWrites writes{meta.namespace_, meta.name, meta.uid, {}};
  // Checked first, so that nothing is assumed for a choice that cannot be written.
  for (size_t i = 0; i < spec.delayed_claims.size(); ++i) {
    const std::string claim_key = meta.namespace_ + "/" + spec.delayed_claims[i].claim;
    if (!claims_.count(claim_key)) return refuse("claim " + claim_key + " is gone");
    if (!decision.volumes[i].empty() && !volumes_.count(decision.volumes[i])) {
      return refuse("persistentvolume " + decision.volumes[i] + " is gone");
    }
  }
  for (size_t i = 0; i < spec.delayed_claims.size(); ++i) {
    const std::string claim_key = meta.namespace_ + "/" + spec.delayed_claims[i].claim;
    const k8s::ClaimInfo& claim = claims_.at(claim_key);
    const std::string& volume = decision.volumes[i];
    resync_claims->push_back(claim_key);
    if (volume.empty()) {
      // Provisioning: the claim names the node (AssumePodVolumes' AnnSelectedNode).
      wait.provisions.push_back(claim.meta.name);
      AssumedNode& assumed = assumed_selected_nodes_[claim_key];
      if (assumed.uses++ == 0) assumed.node = wait.node;
      json patch = {{"metadata",
                     {{"resourceVersion", claim.meta.resource_version},
                      {"annotations", {{k8s::kSelectedNodeAnnotation, wait.node}}}}}};
      writes.writes.push_back({ClaimPath(meta.namespace_, claim.meta.name), k8s::JsonText(patch),
                               "persistentvolumeclaim " + Quoted(claim_key), "pvc/" + claim_key});
      continue;
    }
    // A static volume: its claimRef names the claim (GetBindVolumeToClaim).
    const k8s::PersistentVolumeInfo& pv = volumes_.at(volume);
    wait.bindings.emplace_back(claim.meta.name, volume);
    const bool was_bound_here = ClaimRefOf(pv) && RefersTo(*ClaimRefOf(pv), claim);
    AssumedRef& assumed = assumed_claim_refs_[volume];
    if (assumed.uses++ == 0) {
      assumed.ref = k8s::ClaimRef{meta.namespace_, claim.meta.name, claim.meta.uid};
    }
    resync_classes->push_back(pv.storage_class);
    json metadata = {{"resourceVersion", pv.meta.resource_version}};
    if (!was_bound_here) metadata["annotations"] = {{k8s::kBoundByControllerAnnotation, "yes"}};
    json patch = {{"metadata", metadata},
                  {"spec",
                   {{"claimRef",
                     {{"kind", "PersistentVolumeClaim"},
                      {"apiVersion", "v1"},
                      {"namespace", meta.namespace_},
                      {"name", claim.meta.name},
                      {"uid", claim.meta.uid},
                      {"resourceVersion", claim.meta.resource_version}}}}}};
    writes.writes.push_back({"/api/v1/persistentvolumes/" + volume, k8s::JsonText(patch),
                             "persistentvolume " + Quoted(volume), "pv/" + volume});
  }
  wait.bind = std::move(bind);
  volume_waits_.insert({wait.deadline, key});
  pod.volume_wait = std::move(wait);
  volume_writes_.push_back(std::move(writes));
  return true;
}

void ClusterCache::EndVolumeWait(PodRecord& pod, const std::string& key) {
  if (!pod.volume_wait) return;
  PodRecord::VolumeWait wait = std::move(*pod.volume_wait);
  pod.volume_wait.reset();
  volume_waits_.erase({wait.deadline, key});
  volume_failures_.erase(key);
  const std::string& ns = pod.info.meta.namespace_;
  std::vector<std::string> resync_claims, resync_classes;
  for (const std::string& claim : wait.provisions) {
    auto it = assumed_selected_nodes_.find(ns + "/" + claim);
    if (it != assumed_selected_nodes_.end() && --it->second.uses <= 0) {
      assumed_selected_nodes_.erase(it);
    }
    resync_claims.push_back(ns + "/" + claim);
  }
  for (const auto& [claim, volume] : wait.bindings) {
    auto it = assumed_claim_refs_.find(volume);
    if (it != assumed_claim_refs_.end() && --it->second.uses <= 0) assumed_claim_refs_.erase(it);
    resync_claims.push_back(ns + "/" + claim);
    if (auto pv = volumes_.find(volume); pv != volumes_.end()) {
      resync_classes.push_back(pv->second.storage_class);
    }
  }
  for (const std::string& claim : resync_claims) ResyncClaimPods(claim, key);
  for (const std::string& storage_class : resync_classes) ResyncClassPods(storage_class);
}

std::string ClusterCache::CheckVolumeWait(PodRecord& pod, const std::string& key) {
  if (!pod.volume_wait || !pod.volume_wait->written) return "";
  const PodRecord::VolumeWait& wait = *pod.volume_wait;
  const std::string& ns = pod.info.meta.namespace_;
  const NodeId node_id = state_.FindNode(wait.node);
  if (node_id == kNone) return "failed to get node " + Quoted(wait.node);
  const Labels& node_labels = state_.node(node_id).labels;
  auto version = [&](const std::string& object_key) {
    auto it = wait.versions.find(object_key);
    return it == wait.versions.end() ? std::string() : it->second;
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
  BindRequest bind = pod.volume_wait->bind;
  EndVolumeWait(pod, key);
  ready_binds_.push_back(std::move(bind));
  return "";
}

void ClusterCache::FailVolumeWait(const std::string& key, const std::string& why, double now) {
  auto it = pods_.find(key);
  if (it == pods_.end() || !it->second.volume_wait) return;
  PodRecord& pod = it->second;
  const k8s::ObjectMeta meta = pod.info.meta;
  EndVolumeWait(pod, key);
  const double backoff = BindFailed(meta.namespace_, meta.name, meta.uid, now);
  char retry[32];
  std::snprintf(retry, sizeof retry, "%.0f", backoff);
  Problem({"v1", "Pod", meta.namespace_, meta.name, meta.uid, "Warning", "FailedScheduling",
           Bounded("running PreBind plugin \"VolumeBinding\": binding volumes: " + why +
                       "; retrying in " + retry + "s",
                   kMaxMessage)});
}

void ClusterCache::VolumeWritesDone(const VolumeWriteResult& result, double now) {
  const std::string key = result.namespace_ + "/" + result.name;
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.info.meta.uid != result.uid || !it->second.volume_wait) {
    return;
  }
  PodRecord& pod = it->second;
  if (!result.ok) {
    FailVolumeWait(key, result.error, now);
    return;
  }
  pod.volume_wait->written = true;
  // The wait for the provisioner and the PV controller counts from now, when the writes are
  // done, as kube-scheduler's BindPodVolumes polls bindTimeoutSeconds after its updates.
  PodRecord::VolumeWait& wait = *pod.volume_wait;
  volume_waits_.erase({wait.deadline, key});
  wait.deadline = now + volume_bind_timeout_s_;
  volume_waits_.insert({wait.deadline, key});
  for (const auto& [object, version] : result.versions) pod.volume_wait->versions[object] = version;
  const std::string failure = CheckVolumeWait(pod, key);
  if (!failure.empty()) FailVolumeWait(key, failure, now);
}

size_t ClusterCache::ExpireVolumeBindings(double now) {
  size_t given_up = 0;
  for (const std::string& key : std::exchange(volume_failures_, {})) {
    auto it = pods_.find(key);
    if (it == pods_.end() || !it->second.volume_wait) continue;
    const std::string why = it->second.volume_wait->failure;  // the wait ends in the call
    FailVolumeWait(key, why, now);
    given_up++;
  }
  while (!volume_waits_.empty() && volume_waits_.begin()->first <= now) {
    const std::pair<double, std::string> due = *volume_waits_.begin();
    FailVolumeWait(due.second, "timed out waiting for the condition", now);
    volume_waits_.erase(due);  // in case the pod's record had gone
    given_up++;
  }
  return given_up;
}

}  // namespace gantry
