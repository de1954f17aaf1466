// Claims left for a pod's extended resources (daemon/device_claims.h). kube-scheduler's
// DynamicResources finds them the same way (findExtendedResourceClaim: the
// extended-resource-claim annotation "true" and the pod, by name and uid, as the
// controller owner), fails the pod on every node ("cannot schedule extended resource
// claim") and deletes the claim in PostFilter, its finalizer first: an allocation from an
// attempt that did not bind may no longer be valid, and the next attempt allocates anew.
#include <string>

#include "daemon/device_claims.h"
#include "engine/dra/extended_resources.h"

namespace gantry {
namespace {

using nlohmann::json;

// The uid and name of the pod that controls the claim, when a pod does.
bool ControllerPod(const json& metadata, std::string* uid, std::string* name) {
  const json& owners = metadata.value("ownerReferences", json());
  if (!owners.is_array()) return false;
  for (const json& owner : owners) {
    if (!owner.is_object() || !owner.value("controller", false)) continue;
    if (owner.value("kind", "") != "Pod" || owner.value("apiVersion", "") != "v1") continue;
    *uid = owner.value("uid", "");
    *name = owner.value("name", "");
    return !uid->empty() && !name->empty();
  }
  return false;
}

}  // namespace

void DeviceClaims::NoteExtendedClaim(const std::string& claim_key, const json* object,
                                     Resync* out) {
  // What the claim is now: made for a pod's extended resources, and which pod's.
  std::string pod_uid, pod_name;
  ExtendedClaimOf now;
  bool extended = false;
  if (object != nullptr && object->is_object()) {
    const json& metadata = object->value("metadata", json::object());
    const json& annotations = metadata.is_object() ? metadata.value("annotations", json()) : json();
    extended =
        annotations.is_object() &&
        annotations.value(std::string(dra::kExtendedResourceClaimAnnotation), "") == "true" &&
        ControllerPod(metadata, &pod_uid, &pod_name);
    if (extended) {
      now = {claim_key, metadata.value("uid", ""),
             metadata.value("namespace", "") + "/" + pod_name};
    }
  }
  // Most events change neither (a claim that is no such claim, or one whose status moved):
  // nothing to do. Otherwise what was known goes, and the pods concerned are resynced.
  auto was = extended_owner_by_claim_.find(claim_key);
  if (was != extended_owner_by_claim_.end()) {
    auto entry = extended_claims_.find(was->second);
    if (extended && was->second == pod_uid && entry->second.claim_uid == now.claim_uid) return;
    out->pods.push_back(entry->second.pod_key);
    left_deleting_.erase(entry->second.claim_uid);
    extended_claims_.erase(entry);
    extended_owner_by_claim_.erase(was);
  }
  if (!extended) return;
  out->pods.push_back(now.pod_key);
  extended_owner_by_claim_[claim_key] = pod_uid;
  extended_claims_[pod_uid] = std::move(now);
}

std::string DeviceClaims::DeleteLeftExtendedClaim(const k8s::PodInfo& pod) {
  auto it = extended_claims_.find(pod.meta.uid);
  if (it == extended_claims_.end()) return "";
  const ExtendedClaimOf& left = it->second;
  const std::string name = left.claim_key.substr(left.claim_key.find('/') + 1);
  if (auto [it, added] = left_deleting_.try_emplace(left.claim_uid); added) {
    ClaimWrite& write = it->second.write;
    write.namespace_ = pod.meta.namespace_;
    write.name = name;
    write.uid = left.claim_uid;
    write.extended = true;
  }
  // kube-scheduler's words, then what happens.
  return "cannot schedule extended resource claim \"" + name +
         "\": it was made by an earlier attempt to place the pod that did not bind; it is "
         "being deleted, and the pod is placed again once it is gone";
}

std::vector<ClaimWrite> DeviceClaims::TakeLeftClaimDeletes(double now) {
  std::vector<ClaimWrite> out;
  for (auto& [uid, left] : left_deleting_) {
    if (left.sent_at >= 0 && now - left.sent_at < kLeftClaimDeleteRetryS) continue;
    left.sent_at = now;
    out.push_back(left.write);
  }
  return out;
}

}  // namespace gantry
