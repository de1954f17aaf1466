// Binding conditions (DRADeviceBindingConditions, beta and on by default since Kubernetes
// 1.36, with DRAResourceClaimDeviceStatus), as kube-scheduler's DynamicResources plugin
// has them (k8s.io/kubernetes pkg/scheduler/framework/plugins/dynamicresources/
// dynamicresources.go, v1.37):
//
// - PreBind writes each claim's allocation and reservation (bindClaim); then, if any
//   allocated device result has bindingConditions (hasBindingConditions), the pod is not
//   bound: an event (Normal, BindingConditionsPending, "waiting for binding conditions for
//   device on node NODE") and a wait, polled every 5 s up to the plugin's bindingTimeout
//   (DynamicResourcesArgs, default 600 s), for isPodReadyForBinding.
// - isClaimReadyForBinding: for each result with bindingConditions, the claim's
//   status.devices entry with the same driver, pool and device (not the shareID:
//   getAllocatedDeviceStatus); none yet is not ready; any bindingFailureConditions type
//   with status True fails ("claim NAME binding failed: reason=R, message=\"M\""); every
//   bindingConditions type must have status True. A claim without results with binding
//   conditions is ready; a claim not allocated is not.
// - A failure, or the timeout ("device binding timeout"; "claim NAME binding timeout"
//   where allocationTimestamp plus the timeout passed), fails PreBind: the pod goes back
//   to the queue and Unreserve takes its reservation off the claim. The next attempt's
//   Filter marks the allocated claim unavailable (failed, or timed out) and PostFilter
//   deallocates it (allocation, reservedFor and devices cleared), so that other devices
//   can be tried.
//
// One difference of detail: upstream's isPodReadyForBinding stops at the first claim not
// ready yet, so a failure condition on a later claim waits for the earlier ones; here
// every claim is judged, and any failure ends the wait at once.
//
// Here the wait holds no worker: the claims are written (ApiWriter answers `waiting`),
// the pod stays assumed with its devices taken, and the claim watch's copies are judged
// each loop (PollBindingWaits) against a deadline on the daemon's clock, set when the
// writes succeeded (kube-scheduler's allocationTimestamp is set by the same write). On
// failure or timeout the daemon deallocates at once (ApiWriter::ReleaseClaims: the
// reservation, then the allocation it wrote once no other pod holds the claim) rather
// than on the pod's next attempt, which lands where upstream's PostFilter does a cycle
// sooner.
#include <algorithm>

#include "daemon/device_claims.h"

namespace gantry {
namespace {

enum class Readiness { kReady, kWaiting, kFailed };

const DeviceCondition* FindCondition(const AllocatedDeviceStatus& status, const std::string& type) {
  for (const DeviceCondition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// isClaimReadyForBinding; *why gets upstream's words for a failure.
Readiness ClaimReadiness(const dra::ResourceClaim& claim,
                         const std::vector<AllocatedDeviceStatus>& devices, std::string* why) {
  if (!claim.allocation) return Readiness::kWaiting;
  for (const dra::AllocationResult& result : claim.allocation->results) {
    if (result.binding_conditions.empty()) continue;
    const AllocatedDeviceStatus* status = nullptr;
    for (const AllocatedDeviceStatus& d : devices) {
      if (d.driver == result.driver && d.pool == result.pool && d.device == result.device) {
        status = &d;
        break;
      }
    }
    if (status == nullptr) return Readiness::kWaiting;
    for (const std::string& type : result.binding_failure_conditions) {
      const DeviceCondition* failed = FindCondition(*status, type);
      if (failed != nullptr && failed->is_true) {
        *why = "claim " + claim.name + " binding failed: reason=" + failed->reason +
               ", message=\"" + failed->message + "\"";
        return Readiness::kFailed;
      }
    }
    for (const std::string& type : result.binding_conditions) {
      const DeviceCondition* c = FindCondition(*status, type);
      if (c == nullptr || !c->is_true) return Readiness::kWaiting;
    }
  }
  return Readiness::kReady;
}

}  // namespace

std::vector<AllocatedDeviceStatus> ReadDeviceStatuses(const nlohmann::json& claim) {
  std::vector<AllocatedDeviceStatus> out;
  auto status = claim.find("status");
  if (status == claim.end() || !status->is_object()) return out;
  auto devices = status->find("devices");
  if (devices == status->end() || !devices->is_array()) return out;
  for (const nlohmann::json& d : *devices) {
    if (!d.is_object()) continue;
    AllocatedDeviceStatus device;
    device.driver = StringField(d, "driver");
    device.pool = StringField(d, "pool");
    device.device = StringField(d, "device");
    if (device.driver.empty() || device.pool.empty() || device.device.empty()) continue;
    auto conditions = d.find("conditions");
    if (conditions != d.end() && conditions->is_array()) {
      for (const nlohmann::json& c : *conditions) {
        if (!c.is_object()) continue;
        DeviceCondition condition;
        condition.type = StringField(c, "type");
        condition.is_true = StringField(c, "status") == "True";
        condition.reason = Bounded(StringField(c, "reason"), kMaxMessage);
        condition.message = Bounded(StringField(c, "message"), kMaxMessage);
        device.conditions.push_back(std::move(condition));
      }
    }
    out.push_back(std::move(device));
  }
  return out;
}

void DeviceClaims::WaitForBindingConditions(const std::string& key, BindRequest request,
                                            double deadline) {
  request.claims_written = true;
  request.wait_for_binding_conditions = false;
  binding_waits_[key] = BindingWait{std::move(request), deadline};
}

bool DeviceClaims::HasBindingConditions(const std::vector<std::string>& claim_keys) const {
  for (const std::string& key : claim_keys) {
    auto it = table_.find(key);
    if (it != table_.end() && it->second.allocation &&
        dra::HasBindingConditions(*it->second.allocation)) {
      return true;
    }
  }
  return false;
}

std::vector<DeviceClaims::BindingOutcome> DeviceClaims::PollBindingWaits(double now) {
  static const std::vector<AllocatedDeviceStatus> kNoStatuses;
  std::vector<BindingOutcome> out;
  for (auto it = binding_waits_.begin(); it != binding_waits_.end();) {
    const BindRequest& r = it->second.request;
    // isPodReadyForBinding: every claim, from the watch's copy.
    std::string why;
    bool ready = true;
    for (const ClaimWrite& c : r.claims) {
      auto o = observed_.find(dra::ClaimKey(c.namespace_, c.name));
      if (o == observed_.end() || o->second.uid != c.uid) {
        why = "resourceclaim \"" + c.name + "\" not found";
        break;
      }
      auto statuses = device_statuses_.find(o->first);
      const Readiness readiness = ClaimReadiness(
          o->second, statuses == device_statuses_.end() ? kNoStatuses : statuses->second, &why);
      if (readiness == Readiness::kFailed) break;
      if (readiness == Readiness::kWaiting) ready = false;
    }
    if (why.empty() && !ready && now >= it->second.deadline) why = "device binding timeout";
    if (why.empty() && !ready) {
      ++it;
      continue;
    }
    out.push_back({it->first, std::move(it->second.request), std::move(why)});
    it = binding_waits_.erase(it);
  }
  return out;
}

}  // namespace gantry
