#include "daemon/device_claims.h"

#include <algorithm>

#include "engine/dra/extended_resources.h"
#include "k8s/dra_objects.h"
#include "k8s/object_meta.h"

#if GANTRY_DRA_CEL
#include "dra/selector_cache.h"
#endif

namespace gantry {

struct DeviceClaims::Cel {
#if GANTRY_DRA_CEL
  dra::SelectorCache cache;
  dra::CelVerdicts verdicts{cache};
#endif
};

namespace {

constexpr const char* kResourceApi = "resource.k8s.io/v1";

// The name an object is known by in events, and its key ("ns/name", or "name").
k8s::ObjectMeta MetaOf(const nlohmann::json& object) {
  auto meta = k8s::ParseMeta(object);
  return meta.ok() ? *meta : k8s::ObjectMeta{};
}

// Reads an object of a kind kept by name: the decoded value replaces what was kept, a
// deletion drops it, one that cannot be read is dropped with a Warning event (its devices
// are not offered: a pool missing a slice is incomplete, and upstream uses none of it).
template <typename T, typename Decode>
bool Keep(k8s::EventType type, const nlohmann::json& object, const char* kind, Decode decode,
          std::map<std::string, T>* kept, Resync* out, T* before = nullptr) {
  const k8s::ObjectMeta meta = MetaOf(object);
  if (meta.name.empty()) return false;
  auto it = kept->find(meta.Key());
  if (before != nullptr && it != kept->end()) *before = it->second;
  if (type == k8s::EventType::kDeleted) {
    if (it == kept->end()) return false;
    kept->erase(it);
    return true;
  }
  auto decoded = decode(object);
  if (!decoded.ok()) {
    out->problems.push_back({kResourceApi, kind, meta.namespace_, meta.name, meta.uid, "Warning",
                             std::string("Invalid") + kind,
                             Bounded(decoded.status().message(), kMaxMessage)});
    if (it == kept->end()) return false;
    kept->erase(it);
    return true;
  }
  if (it != kept->end() && it->second == *decoded) return false;
  (*kept)[meta.Key()] = std::move(decoded).value();
  return true;
}

bool ReservedFor(const dra::ResourceClaim& claim, const std::string& uid) {
  return std::any_of(claim.reserved_for.begin(), claim.reserved_for.end(),
                     [&](const dra::ConsumerReference& r) { return r.uid == uid; });
}

}  // namespace

DeviceClaims::DeviceClaims() : cel_(std::make_unique<Cel>()) {}
DeviceClaims::~DeviceClaims() = default;
DeviceClaims::DeviceClaims(DeviceClaims&&) noexcept = default;
DeviceClaims& DeviceClaims::operator=(DeviceClaims&&) noexcept = default;

bool DeviceClaims::HasCel() {
#if GANTRY_DRA_CEL
  return true;
#else
  return false;
#endif
}

// ---------------------------------------------------------------------------------------
// Objects

Resync DeviceClaims::OnDeviceClass(k8s::EventType type, const nlohmann::json& object) {
  Resync out;
  if (Keep(type, object, "DeviceClass", k8s::DecodeDeviceClass, &classes_, &out)) {
    inventory_dirty_ = true;
    // Which extended resources a class serves may have changed.
    out.pods.insert(out.pods.end(), extended_pods_.begin(), extended_pods_.end());
  }
  return out;
}

Resync DeviceClaims::OnResourceSlice(k8s::EventType type, const nlohmann::json& object) {
  Resync out;
  dra::ResourceSlice before;
  if (Keep(type, object, "ResourceSlice", k8s::DecodeResourceSlice, &slices_, &out, &before)) {
    inventory_dirty_ = true;
#if GANTRY_DRA_CEL
    // A device that is still published is prepared again when its description changed;
    // one that is gone is forgotten here.
    const auto now = slices_.find(before.name);
    for (const dra::Device& d : before.devices) {
      const bool kept = now != slices_.end() && now->second.driver == before.driver &&
                        now->second.pool.name == before.pool.name &&
                        std::any_of(now->second.devices.begin(), now->second.devices.end(),
                                    [&](const dra::Device& n) { return n.name == d.name; });
      if (!kept) cel_->cache.ForgetDevice({before.driver, before.pool.name, d.name});
    }
#endif
  }
  return out;
}

Resync DeviceClaims::OnDeviceTaintRule(k8s::EventType type, const nlohmann::json& object) {
  Resync out;
  if (Keep(type, object, "DeviceTaintRule", k8s::DecodeDeviceTaintRule, &rules_, &out)) {
    inventory_dirty_ = true;
  }
  return out;
}

void DeviceClaims::OnNamespace(const std::string& name, const Labels* labels) {
  const std::string* admin =
      labels != nullptr ? labels->Find(dra::kAdminAccessNamespaceLabel) : nullptr;
  if (admin != nullptr && *admin == "true") {
    admin_namespaces_.insert(name);
  } else {
    admin_namespaces_.erase(name);
  }
}

Resync DeviceClaims::OnResourceClaim(k8s::EventType type, const nlohmann::json& object) {
  Resync out;
  const k8s::ObjectMeta meta = MetaOf(object);
  if (meta.name.empty()) return out;
  const std::string key = dra::ClaimKey(meta.namespace_, meta.name);
  if (type == k8s::EventType::kDeleted) {
    NoteExtendedClaim(key, nullptr, &out);
    observed_.erase(key);
    device_statuses_.erase(key);
    DropAssumption(key, &out);
    Refresh(key);
    AddClaimPods(key, &out);
    return out;
  }
  auto decoded = k8s::DecodeResourceClaim(object);
  if (!decoded.ok()) {
    // What was read of it before is kept, so that its devices stay taken; its pods wait
    // on what Resolve says of a claim missing from the table.
    out.problems.push_back({kResourceApi, "ResourceClaim", meta.namespace_, meta.name, meta.uid,
                            "Warning", "InvalidResourceClaim",
                            Bounded(decoded.status().message(), kMaxMessage)});
    return out;
  }
  dra::ResourceClaim& claim = observed_[key] = std::move(decoded).value();
  NoteExtendedClaim(key, &object, &out);
  // The claim made for a pod's extended resources, written: what was assumed of it goes.
  const nlohmann::json& annotations =
      object.value("metadata", nlohmann::json::object()).value("annotations", nlohmann::json());
  if (claim.allocation && annotations.is_object() &&
      annotations.value(std::string(dra::kExtendedResourceClaimAnnotation), "") == "true") {
    for (const dra::ConsumerReference& consumer : claim.reserved_for) {
      auto e = extended_by_pod_uid_.find(consumer.uid);
      if (e == extended_by_pod_uid_.end()) continue;
      const std::string assumed_key = e->second;
      extended_by_pod_uid_.erase(e);
      DropAssumption(assumed_key, &out);
      Refresh(assumed_key);
    }
  }
  if (std::vector<AllocatedDeviceStatus> devices = ReadDeviceStatuses(object); devices.empty()) {
    device_statuses_.erase(key);
  } else {
    device_statuses_[key] = std::move(devices);
  }
  // The watch shows what was assumed: the claim allocated and reserved for the pod (or a
  // claim made again, which no assumption is about).
  if (auto a = assumed_.find(key); a != assumed_.end()) {
    const dra::ResourceClaim& mine = a->second.claim;
    const bool written = claim.allocation.has_value() && ReservedFor(claim, a->second.pod_uid);
    if (written || claim.uid != mine.uid) DropAssumption(key, &out);
  }
  Refresh(key);
  AddClaimPods(key, &out);
  return out;
}

void DeviceClaims::Refresh(const std::string& key) {
  if (auto old = table_.find(key); old != table_.end() && old->second.allocation) {
    allocated_.Remove(*old->second.allocation);
  }
  const dra::ResourceClaim* now = nullptr;
  if (auto a = assumed_.find(key); a != assumed_.end()) {
    now = &(table_[key] = a->second.claim);
  } else if (auto o = observed_.find(key); o != observed_.end()) {
    now = &(table_[key] = o->second);
  } else {
    table_.erase(key);
  }
  if (now != nullptr && now->allocation) allocated_.Add(*now->allocation);
}

// ---------------------------------------------------------------------------------------
// Pods

std::vector<std::string> DeviceClaims::ClaimKeysOf(const k8s::PodInfo& pod) {
  std::vector<std::string> keys;
  for (const dra::PodClaimRef& ref : pod.resource_claims) {
    std::optional<std::string> name = ref.resource_claim_name;
    if (!name) {
      for (const k8s::PodClaimStatus& s : pod.resource_claim_statuses) {
        if (s.name == ref.name) name = s.resource_claim_name;
      }
    }
    if (!name) continue;
    std::string key = dra::ClaimKey(pod.meta.namespace_, *name);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

std::vector<std::string> DeviceClaims::HeldClaimKeysOf(const k8s::PodInfo& pod) {
  std::vector<std::string> keys = ClaimKeysOf(pod);
  if (pod.extended_claim) {
    std::string key = dra::ClaimKey(pod.meta.namespace_, *pod.extended_claim);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

void DeviceClaims::TrackPod(const std::string& key, const k8s::PodInfo& pod) {
  // Domain-qualified names are the extended resources (and hugepages-* is not one).
  const bool extended =
      pod.spec.gpu.count > 0 ||
      std::any_of(pod.spec.requests.entries().begin(), pod.spec.requests.entries().end(),
                  [](const ResourceVector::Entry& e) {
                    return ResourceName(e.id).find('/') != std::string::npos;
                  });
  if (extended) {
    extended_pods_.insert(key);
  } else {
    extended_pods_.erase(key);
  }
  std::vector<std::string> keys = ClaimKeysOf(pod);
  auto it = pods_.find(key);
  if (it != pods_.end() && it->second == keys) return;
  if (it != pods_.end()) {
    for (const std::string& claim : it->second) {
      auto p = pods_by_claim_.find(claim);
      if (p == pods_by_claim_.end()) continue;
      p->second.erase(key);
      if (p->second.empty()) pods_by_claim_.erase(p);
    }
  }
  if (keys.empty()) {
    if (it != pods_.end()) pods_.erase(it);
    return;
  }
  for (const std::string& claim : keys) pods_by_claim_[claim].insert(key);
  pods_[key] = std::move(keys);
}

Resync DeviceClaims::ForgetPod(const std::string& key) {
  // A deleted pod's reservations are the resourceclaim controller's to drop.
  binding_waits_.erase(key);
  TrackPod(key, k8s::PodInfo{});  // first: its own key is not among the pods to sync
  return Forget(key);
}

void DeviceClaims::AddClaimPods(const std::string& claim_key, Resync* out) const {
  auto it = pods_by_claim_.find(claim_key);
  if (it == pods_by_claim_.end()) return;
  out->pods.insert(out->pods.end(), it->second.begin(), it->second.end());
}

void DeviceClaims::MarkDeviceBacked(TaskSpec* spec) const {
  spec->device_backed.clear();
  if (classes_.empty()) return;
  std::vector<const dra::DeviceClass*> classes;
  classes.reserve(classes_.size());
  for (const auto& [name, c] : classes_) classes.push_back(&c);
  dra::MarkDeviceBacked(classes, spec);
}

std::string DeviceClaims::Resolve(const k8s::PodInfo& pod, TaskSpec* spec) const {
  spec->resource_claims.clear();
  MarkDeviceBacked(spec);
  for (const dra::PodClaimRef& ref : pod.resource_claims) {
    std::string name;
    if (ref.resource_claim_name) {
      name = *ref.resource_claim_name;
    } else {
      const k8s::PodClaimStatus* status = nullptr;
      for (const k8s::PodClaimStatus& s : pod.resource_claim_statuses) {
        if (s.name == ref.name) status = &s;
      }
      // kube-scheduler's words (dynamicresources' PreEnqueue): the resourceclaim
      // controller has not made the claim from its template yet.
      if (status == nullptr) {
        return "waiting for dynamic resource controller to create the resourceclaim \"" + ref.name +
               "\"";
      }
      // No claim was needed (the template's claim is not made for this pod).
      if (!status->resource_claim_name) continue;
      name = *status->resource_claim_name;
    }
    std::string key = dra::ClaimKey(pod.meta.namespace_, name);
    auto it = table_.find(key);
    if (it == table_.end()) return "resourceclaim \"" + name + "\" not found";
    if (it->second.deleting) return "resourceclaim \"" + name + "\" is being deleted";
    auto& claims = spec->resource_claims;
    if (std::find(claims.begin(), claims.end(), key) == claims.end()) {
      claims.push_back(std::move(key));
    }
  }
  spec->device_requests = CountedAs(spec->resource_claims);
  return "";
}

ResourceVector DeviceClaims::DeviceRequestsOf(const k8s::PodInfo& pod) const {
  return CountedAs(ClaimKeysOf(pod));
}

ResourceVector DeviceClaims::CountedAs(const std::vector<std::string>& claim_keys) const {
  if (accounting_.empty() || claim_keys.empty()) return {};
  std::vector<const dra::ResourceClaim*> claims;
  claims.reserve(claim_keys.size());
  for (const std::string& key : claim_keys) {
    auto it = table_.find(key);
    claims.push_back(it == table_.end() ? nullptr : &it->second);
  }
  return accounting_.ClaimRequests(claims);
}

std::map<std::string, DeviceClaims::DriverDevices> DeviceClaims::CountDevices() const {
  std::set<std::string> allocated;
  for (const auto& [key, claim] : table_) {
    if (!claim.allocation) continue;
    for (const dra::AllocationResult& r : claim.allocation->results) {
      if (!r.admin_access) allocated.insert(dra::DeviceKey(r.driver, r.pool, r.device));
    }
  }
  std::map<std::string, DriverDevices> out;
  for (const auto& [name, slice] : slices_) {
    DriverDevices& counts = out[slice.driver];
    for (const dra::Device& device : slice.devices) {
      const bool taken =
          allocated.count(dra::DeviceKey(slice.driver, slice.pool.name, device.name)) > 0;
      (taken ? counts.allocated : counts.free)++;
    }
  }
  return out;
}

std::map<std::string, std::vector<DeviceClaims::NodeDevice>> DeviceClaims::DevicesByNode() const {
  std::map<std::string, std::vector<NodeDevice>> out;
  if (slices_.empty()) return out;
  std::map<std::string, std::vector<std::string>, std::less<>> holders;  // by device key
  for (const auto& [key, claim] : table_) {
    if (!claim.allocation) continue;
    for (const dra::AllocationResult& r : claim.allocation->results) {
      if (r.admin_access) continue;
      // The table is in key order, so each list is sorted; a claim whose results name one
      // device twice (shares of it) holds it once.
      std::vector<std::string>& claims = holders[dra::DeviceKey(r.driver, r.pool, r.device)];
      if (claims.empty() || claims.back() != key) claims.push_back(key);
    }
  }
  for (const auto& [name, slice] : slices_) {
    for (const dra::Device& device : slice.devices) {
      const std::optional<dra::NodeSelection>& selection =
          slice.per_device_node_selection ? device.node_selection : slice.node_selection;
      if (!selection || !selection->node_name) continue;
      NodeDevice view{slice.driver, slice.pool.name, device.name, {}};
      if (auto it = holders.find(dra::DeviceKey(slice.driver, slice.pool.name, device.name));
          it != holders.end()) {
        view.claims = it->second;
      }
      out[*selection->node_name].push_back(std::move(view));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// A session's inputs

void DeviceClaims::SetClassResources(std::vector<dra::ClassResource> map) {
  class_resources_ = std::move(map);
  inventory_dirty_ = true;
}

bool DeviceClaims::RefreshInventory(Resync* resync) {
  if (!inventory_dirty_) return false;
  std::vector<dra::ResourceSlice> slices;
  slices.reserve(slices_.size());
  for (const auto& [name, slice] : slices_) slices.push_back(slice);
  std::vector<dra::DeviceClass> classes;
  classes.reserve(classes_.size());
  for (const auto& [name, c] : classes_) classes.push_back(c);
  std::vector<dra::DeviceTaintRule> rules;
  rules.reserve(rules_.size());
  for (const auto& [name, r] : rules_) rules.push_back(r);
  inventory_ = dra::Inventory(std::move(slices), std::move(classes), rules);
  inventory_dirty_ = false;
  inventory_builds_++;
  const dra::SelectorVerdicts* verdicts = nullptr;
#if GANTRY_DRA_CEL
  verdicts = &cel_->verdicts;
#endif
  const bool was_empty = accounting_.empty();
  accounting_ = dra::DeviceAccounting(class_resources_, inventory_, verdicts);
  if (was_empty && accounting_.empty()) return false;
  // Estimates and allocated devices may count differently now.
  for (const auto& [pod, claims] : pods_) resync->pods.push_back(pod);
  std::sort(resync->pods.begin(), resync->pods.end());
  return true;
}

DeviceInputs DeviceClaims::Inputs() {
  // The cache refreshes first (ClusterCache::RefreshDevices), so that nodes and pods are
  // counted with this inventory; a caller that does not only loses that.
  Resync ignored;
  RefreshInventory(&ignored);
  DeviceInputs in;
  in.inventory = &inventory_;
  in.claims = &table_;
  in.allocated = &allocated_;
#if GANTRY_DRA_CEL
  in.verdicts = &cel_->verdicts;
#endif
  in.admin_namespaces = &admin_namespaces_;
  return in;
}

// ---------------------------------------------------------------------------------------
// Assumptions

dra::ConsumerReference DeviceClaims::ConsumerOf(const k8s::PodInfo& pod,
                                                const k8s::PodGroupInfo* group,
                                                const std::string& claim_key) {
  if (group != nullptr && group->api == k8s::GroupApi::kNative) {
    for (const dra::PodClaimRef& ref : pod.resource_claims) {
      if (std::find(group->resource_claims.begin(), group->resource_claims.end(), ref) ==
          group->resource_claims.end()) {
        continue;
      }
      k8s::PodInfo one;
      one.meta.namespace_ = pod.meta.namespace_;
      one.resource_claims = {ref};
      one.resource_claim_statuses = pod.resource_claim_statuses;
      const std::vector<std::string> keys = ClaimKeysOf(one);
      if (!keys.empty() && keys.front() == claim_key) {
        return {std::string(k8s::kSchedulingGroup), "podgroups", group->meta.name, group->meta.uid};
      }
    }
  }
  return {"", "pods", pod.meta.name, pod.meta.uid};
}

std::vector<ClaimWrite> DeviceClaims::Assume(const std::string& key, const k8s::PodInfo& pod,
                                             const k8s::PodGroupInfo* group,
                                             const BindDecision& decision, const TaskSpec& spec,
                                             std::string* why) {
  std::vector<ClaimWrite> writes;
  why->clear();
  if (spec.resource_claims.empty()) return writes;
  if (decision.devices.size() != spec.resource_claims.size()) {
    *why = "no allocation decided for its resource claims";
    return {};
  }
  // Checked first, so that nothing is assumed when one claim cannot be.
  for (size_t i = 0; i < spec.resource_claims.size(); ++i) {
    const std::string& claim_key = spec.resource_claims[i];
    auto it = table_.find(claim_key);
    if (it == table_.end()) {
      *why = "resourceclaim " + claim_key + " is gone";
      return {};
    }
    if (!decision.devices[i] && !it->second.allocation) {
      *why = "resourceclaim " + claim_key + " is not allocated and the session allocated nothing";
      return {};
    }
  }
  for (size_t i = 0; i < spec.resource_claims.size(); ++i) {
    const std::string& claim_key = spec.resource_claims[i];
    dra::ResourceClaim claim = table_.at(claim_key);
    if (decision.devices[i]) {
      claim.allocation = *decision.devices[i];
      claim.has_finalizer = claim.any_finalizer = true;
    }
    dra::ConsumerReference consumer = ConsumerOf(pod, group, claim_key);
    if (!ReservedFor(claim, consumer.uid)) claim.reserved_for.push_back(consumer);
    ClaimWrite write{claim.name_space, claim.name, claim.uid, decision.devices[i], consumer};
    // Only a claim that lacks the finalizer is patched without a read (a second copy of it
    // is no better than none).
    if (auto seen = observed_.find(claim_key);
        seen != observed_.end() && !seen->second.has_finalizer) {
      write.seen_version = seen->second.resource_version;
      write.seen_any_finalizer = seen->second.any_finalizer;
    }
    writes.push_back(std::move(write));
    // A claim shared by two pods of one session: the later assumption holds both.
    assumed_[claim_key] = AssumedClaim{key, pod.meta.uid, std::move(claim)};
    assumed_by_pod_[key].push_back(claim_key);
    Refresh(claim_key);
  }
  return writes;
}

std::optional<ExtendedClaimWrite> DeviceClaims::AssumeExtended(const std::string& key,
                                                               const k8s::PodInfo& pod,
                                                               const BindDecision& decision,
                                                               const TaskSpec& spec) {
  if (!decision.extended_devices) return std::nullopt;
  ExtendedClaimWrite write;
  for (const DeviceBackedResource& backed : spec.device_backed) {
    write.resources.push_back({ResourceName(backed.resource), backed.device_class});
  }
  write.allocation = *decision.extended_devices;
  dra::ResourceClaim claim;
  claim.name_space = pod.meta.namespace_;
  claim.name = std::string(dra::kExtendedClaimInMemoryName) + "." + pod.meta.name;
  claim.allocation = write.allocation;
  claim.has_finalizer = claim.any_finalizer = true;
  claim.reserved_for.push_back({"", "pods", pod.meta.name, pod.meta.uid});
  const std::string claim_key = dra::ClaimKey(claim.name_space, claim.name);
  assumed_[claim_key] = AssumedClaim{key, pod.meta.uid, std::move(claim)};
  assumed_by_pod_[key].push_back(claim_key);
  extended_by_pod_uid_[pod.meta.uid] = claim_key;
  Refresh(claim_key);
  return write;
}

void DeviceClaims::DropAssumption(const std::string& claim_key, Resync* out) {
  auto it = assumed_.find(claim_key);
  if (it == assumed_.end()) return;
  const std::string pod = it->second.pod;
  assumed_.erase(it);
  if (auto p = assumed_by_pod_.find(pod); p != assumed_by_pod_.end()) {
    auto& keys = p->second;
    keys.erase(std::remove(keys.begin(), keys.end(), claim_key), keys.end());
    if (keys.empty()) assumed_by_pod_.erase(p);
  }
  AddClaimPods(claim_key, out);
}

Resync DeviceClaims::Forget(const std::string& key) {
  Resync out;
  auto it = assumed_by_pod_.find(key);
  if (it == assumed_by_pod_.end()) return out;
  const std::vector<std::string> keys = it->second;
  for (const std::string& claim_key : keys) {
    auto a = assumed_.find(claim_key);
    if (a == assumed_.end() || a->second.pod != key) continue;
    DropAssumption(claim_key, &out);
    Refresh(claim_key);
  }
  assumed_by_pod_.erase(key);
  for (auto e = extended_by_pod_uid_.begin(); e != extended_by_pod_uid_.end();) {
    e = std::find(keys.begin(), keys.end(), e->second) != keys.end() ? extended_by_pod_uid_.erase(e)
                                                                     : std::next(e);
  }
  return out;
}

DeviceClaims::Sizes DeviceClaims::sizes() const {
  Sizes s;
  s.classes = classes_.size();
  s.slices = slices_.size();
  s.rules = rules_.size();
  s.claims = observed_.size();
  s.assumed = assumed_.size();
  s.pods = pods_.size();
  for (const auto& [claim, pods] : pods_by_claim_) s.claim_index += pods.size();
  return s;
}

}  // namespace gantry
