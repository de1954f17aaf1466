// The cluster cache's side of binding: assuming a session's placements (the pods are
// bound asynchronously; those with delayed claims once the volume binder has their claims
// bound), backing off binds that failed, and releasing pods held back.
#include <algorithm>
#include <cstdio>

#include "daemon/cluster_cache.h"
#include "model/limits.h"

namespace gantry {

std::vector<BindRequest> ClusterCache::Assume(const Decisions& decisions, double now) {
  std::vector<BindRequest> out;
  out.reserve(decisions.binds.size());
  std::vector<std::string> claimants;  // assumed pods with claims, now holding them
  // Claims and classes whose pending pods see a volume choice (synced after the loop,
  // which must not sync pods whose tasks the decisions name).
  VolumeBinder::Touched touched;
  std::vector<std::string> failed;  // pods whose volume choice could not be assumed
  Resync forgotten;                 // DRA claims whose assumption was taken back
  for (const BindDecision& b : decisions.binds) {
    const std::string key = pod_of_task_[b.task];
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    PodRecord& pod = it->second;
    const TaskSpec& spec = state_.spec(state_.task(b.task).spec);
    if (!spec.delayed_claims.empty() && b.volumes.size() != spec.delayed_claims.size()) {
      Problem({"v1", "Pod", pod.info.meta.namespace_, pod.info.meta.name, pod.info.meta.uid,
               "Warning", "InternalError",
               "decision could not be applied: no volume chosen for its delayed claims"});
      continue;
    }
    const bool delayed = !spec.delayed_claims.empty();
    // Its DRA claims: allocated and reserved as the session decided, assumed until the
    // writes done before its bind are seen (or fail).
    std::string why;
    const k8s::PodGroupInfo* group = groups_.Find(PodGroups::NativeKeyOf(pod.info));
    std::vector<ClaimWrite> claim_writes = devices_.Assume(key, pod.info, group, b, spec, &why);
    if (!why.empty()) {
      Problem({"v1", "Pod", pod.info.meta.namespace_, pod.info.meta.name, pod.info.meta.uid,
               "Warning", "InternalError", "decision could not be applied: " + why});
      continue;
    }
    std::optional<ExtendedClaimWrite> extended_claim =
        devices_.AssumeExtended(key, pod.info, b, spec);
    Status placed = state_.Place(b.task, b.node, b.gpus);
    if (!placed.ok()) {
      // The engine decided on this very state, so this is a bug; say so and skip.
      Problem({"v1", "Pod", pod.info.meta.namespace_, pod.info.meta.name, pod.info.meta.uid,
               "Warning", "InternalError", "decision could not be applied: " + placed.message()});
      forgotten.Add(devices_.Forget(key));
      continue;
    }
    pod.assumed = true;
    assumed_++;
    if (!pod.info.claims.empty()) claimants.push_back(key);
    status_.MarkChanged(pod.job_key);
    BindRequest r;
    r.namespace_ = pod.info.meta.namespace_;
    r.name = pod.info.meta.name;
    r.uid = pod.info.meta.uid;
    r.node = state_.node(b.node).name;
    r.gpus = b.gpus;
    r.write_devices = pod.info.spec.gpu.shared();
    r.gang_member = state_.job(state_.task(b.task).job).min_member > 1;
    r.job = pod.job_key;
    r.claims = std::move(claim_writes);
    r.extended_claim = std::move(extended_claim);
    r.wait_for_binding_conditions =
        devices_.HasBindingConditions(spec.resource_claims) ||
        (r.extended_claim && dra::HasBindingConditions(r.extended_claim->allocation));
    // Bound once its delayed claims are, as kube-scheduler's PreBind waits for them.
    if (delayed) {
      const std::string why = volumes_.Assume(key, b, spec, std::move(r), now, &touched);
      if (!why.empty()) {
        Problem({"v1", "Pod", pod.info.meta.namespace_, pod.info.meta.name, pod.info.meta.uid,
                 "Warning", "InternalError", "volume binding could not be assumed: " + why});
        failed.push_back(key);
      }
      continue;
    }
    out.push_back(std::move(r));
  }
  // After the loop: the pods this keeps from their claims leave their tasks.
  for (const std::string& key : failed) {
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    const k8s::ObjectMeta& meta = it->second.info.meta;
    BindFailed(meta.namespace_, meta.name, meta.uid, now);
  }
  for (const std::string& key : claimants) UpdateClaimUse(key);
  Apply(volumes_.ResyncAfterAssume(touched, state_));
  Apply(forgotten);
  return out;
}

double ClusterCache::BindFailed(const std::string& namespace_, const std::string& name,
                                const std::string& uid, double now) {
  const std::string key = namespace_ + "/" + name;
  auto it = pods_.find(key);
  // What was assumed of its DRA claims goes (the writer undid what it wrote).
  if (it == pods_.end() || it->second.info.meta.uid == uid) Apply(devices_.Forget(key));
  it = pods_.find(key);
  if (it == pods_.end() || it->second.info.meta.uid != uid || !it->second.assumed) return 0;
  PodRecord& pod = it->second;
  pod.assumed = false;
  assumed_--;
  double backoff = kBindBackoffInitial;
  for (int32_t i = 0; i < pod.bind_failures && backoff < kBindBackoffMax; ++i) backoff *= 2;
  backoff = std::min(backoff, kBindBackoffMax);
  pod.bind_failures++;
  if (pod.held_until > 0) held_.erase({pod.held_until, key});
  pod.held_until = now + backoff;
  held_.insert({pod.held_until, key});
  if (pod.task != kNone && state_.task(pod.task).state == TaskState::kRunning &&
      pod.info.node_name.empty()) {
    state_.Unplace(pod.task);
  }
  SyncPod(key);
  return backoff;
}

size_t ClusterCache::ReleaseHeld(double now) {
  size_t released = 0;
  while (!held_.empty() && held_.begin()->first <= now) {
    const std::string key = held_.begin()->second;
    held_.erase(held_.begin());
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    it->second.held_until = 0;
    SyncPod(key);
    released++;
  }
  return released;
}

// ---------------------------------------------------------------------------------------
// Pods whose bind waits for their claims (VolumeBinder)

void ClusterCache::VolumeWritesDone(const VolumeWriteResult& result, double now) {
  Resync resync;
  const std::optional<std::string> failure = volumes_.WritesDone(result, now, state_, &resync);
  Apply(resync);
  if (failure) FailVolumeWait(result.namespace_ + "/" + result.name, *failure, now);
}

size_t ClusterCache::ExpireVolumeBindings(double now) {
  size_t given_up = 0;
  for (const auto& [key, why] : volumes_.Poll(now)) {
    if (!volumes_.Waiting(key)) continue;  // the end of an earlier one ended it
    FailVolumeWait(key, why, now);
    given_up++;
  }
  return given_up;
}

void ClusterCache::FailVolumeWait(const std::string& key, const std::string& why, double now) {
  auto it = pods_.find(key);
  if (it == pods_.end() || !volumes_.Waiting(key)) return;
  const k8s::ObjectMeta meta = it->second.info.meta;
  Apply(volumes_.Forget(key, state_));
  const double backoff = BindFailed(meta.namespace_, meta.name, meta.uid, now);
  char retry[32];
  std::snprintf(retry, sizeof retry, "%.0f", backoff);
  Problem({"v1", "Pod", meta.namespace_, meta.name, meta.uid, "Warning", "FailedScheduling",
           Bounded("running PreBind plugin \"VolumeBinding\": binding volumes: " + why +
                       "; retrying in " + retry + "s",
                   kMaxMessage)});
}

}  // namespace gantry

namespace gantry {

// ---------------------------------------------------------------------------------------
// Pods whose bind waits for their devices' binding conditions (DeviceClaims)

void ClusterCache::BindingConditionsPending(const BindRequest& request, double now) {
  const std::string key = request.namespace_ + "/" + request.name;
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.info.meta.uid != request.uid || !it->second.assumed) {
    // Gone or unassumed meanwhile: what was written goes back.
    claim_releases_.push_back(request);
    return;
  }
  devices_.WaitForBindingConditions(key, request, now + device_binding_timeout_s_);
  // kube-scheduler's event (DynamicResources PreBind).
  Problem({"v1", "Pod", request.namespace_, request.name, request.uid, "Normal",
           "BindingConditionsPending",
           "waiting for binding conditions for device on node " + request.node});
}

size_t ClusterCache::PollBindingConditions(double now, std::vector<BindRequest>* binds) {
  size_t given_up = 0;
  for (DeviceClaims::BindingOutcome& o : devices_.PollBindingWaits(now)) {
    if (o.failure.empty()) {
      binds->push_back(std::move(o.request));
      continue;
    }
    const BindRequest& r = o.request;
    claim_releases_.push_back(r);
    const double backoff = BindFailed(r.namespace_, r.name, r.uid, now);
    char retry[32];
    std::snprintf(retry, sizeof retry, "%.0f", backoff);
    Problem({"v1", "Pod", r.namespace_, r.name, r.uid, "Warning", "FailedScheduling",
             Bounded("running PreBind plugin \"DynamicResources\": " + o.failure +
                         "; retrying in " + retry + "s",
                     kMaxMessage)});
    given_up++;
  }
  return given_up;
}

}  // namespace gantry
