#include "k8s/objects.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/csi_translation.h"
#include "k8s/datasets.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/numa_objects.h"
#include "k8s/pod_rules.h"
#include "k8s/timestamp.h"
#include "model/limits.h"
#include "model/quantity.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

std::string Describe(const ObjectMeta& meta, const char* kind) {
  return std::string(kind) + " " + meta.Key();
}

Result<Milli> QuantityOf(const json& value, const std::string& where) {
  if (value.is_string()) {
    auto q = ParseQuantity(value.get<std::string>());
    if (!q.ok()) return Status::Invalid(where + ": " + q.status().message());
    return q;
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
    // Read as int64 it would wrap around to a negative amount.
    return Status::OutOfRange(where + ": " + JsonText(value) + " overflows");
  }
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    Milli out = 0;
    if (!CheckedMul(v, kMilliPerUnit, &out))
      return Status::OutOfRange(where + ": " + std::to_string(v) + " overflows");
    return out;
  }
  if (value.is_number()) return QuantityOf(json(JsonText(value)), where);
  return Status::Invalid(where + ": expected a quantity, got " + std::string(value.type_name()));
}

Result<int64_t> Integer(const json& object, const char* key, const std::string& where,
                        int64_t fallback) {
  const json& v = Field(object, key);
  if (v.is_null()) return fallback;
  if (!v.is_number_integer()) {
    return Status::Invalid(where + "." + key + ": expected an integer, got " + JsonText(v));
  }
  // Above INT64_MAX (JSON's unsigned numbers), get<int64_t> would wrap to a negative value.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
    return Status::Invalid(where + "." + key + ": " + JsonText(v) + " is out of range");
  }
  return v.get<int64_t>();
}

// An int32 field (pod priority, PriorityClass value): a larger number is an error, not
// a wrap.
Result<int32_t> Int32(const json& object, const char* key, const std::string& where,
                      int32_t fallback) {
  auto v = Integer(object, key, where, fallback);
  if (!v.ok()) return v.status();
  if (*v < INT32_MIN || *v > INT32_MAX) {
    return Status::Invalid(where + "." + key + ": " + std::to_string(*v) +
                           " is out of range for an int32");
  }
  return static_cast<int32_t>(*v);
}

// metadata.creationTimestamp into meta->created: absent (or null) is 0, anything but an
// RFC 3339 string an error naming the field.
Status ReadCreationTimestamp(const json& object, const std::string& where, ObjectMeta* meta) {
  const json& v = Field(Field(object, "metadata"), "creationTimestamp");
  meta->created = 0;
  if (v.is_null()) return Status::Ok();
  const std::string at = where + ": metadata.creationTimestamp: ";
  if (!v.is_string()) {
    return Status::Invalid(at + "expected an RFC 3339 time like 2024-05-01T12:00:00Z, got " +
                           JsonText(v).substr(0, 64));
  }
  auto seconds = ParseRfc3339(v.get<std::string>());
  if (!seconds.ok()) return Status::Invalid(at + seconds.status().message());
  meta->created = *seconds;
  return Status::Ok();
}

Status ParseTolerations(const json& list, const std::string& where, std::vector<Toleration>* out) {
  if (!list.is_array()) return Status::Ok();
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    std::string at = where + "[" + std::to_string(i) + "]";
    Toleration tol;
    tol.key = String(t, "key");
    std::string op = String(t, "operator");
    if (op.empty() || op == "Equal") {
      tol.op = Toleration::Op::kEqual;
    } else if (op == "Exists") {
      tol.op = Toleration::Op::kExists;
    } else {
      return Status::Invalid(at + ".operator: unknown operator \"" + op + "\" (Equal, Exists)");
    }
    tol.value = String(t, "value");
    std::string effect = String(t, "effect");
    tol.any_effect = effect.empty();
    if (!effect.empty() && !ParseTaintEffect(effect, &tol.effect)) {
      return Status::Invalid(at + ".effect: unknown effect \"" + effect + "\"");
    }
    out->push_back(std::move(tol));
  }
  return Status::Ok();
}

// A ResourceList read leniently: what can be read into *out, what cannot into
// *unreadable, the first problem into *problem (when it is still ok).
void ReadResourceList(const json& list, const std::string& where, NameSource source,
                      ResourceVector* out, UnreadableRequests* unreadable, Status* problem) {
  auto fail = [&](Status st) {
    if (problem->ok()) *problem = std::move(st);
  };
  if (list.is_null()) return;
  if (!list.is_object()) {
    unreadable->all = true;
    fail(Status::Invalid(where + ": expected a map of resources, got " +
                         std::string(list.type_name())));
    return;
  }
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string at = where + "." + KeyText(it.key());
    auto id = InternResourceName(it.key(), source);
    if (!id.ok()) {
      unreadable->AddName(it.key());
      std::string message = at + ": " + id.status().message();
      fail(id.status().code() == Status::Code::kOutOfRange ? Status::OutOfRange(message)
                                                           : Status::Invalid(message));
      continue;
    }
    auto q = QuantityOf(it.value(), at);
    if (q.ok() && *q < 0) q = Status::Invalid(at + ": negative");
    if (!q.ok()) {
      unreadable->AddId(*id);
      fail(q.status());
      continue;
    }
    // Devices are counted in milli-GPUs, so a whole GPU is 1000 either way.
    out->Set(*id, *q);
  }
}

// *sum += add, resource by resource; a sum that overflows makes that resource unreadable.
void AddChecked(const ResourceVector& add, const std::string& where, ResourceVector* sum,
                UnreadableRequests* unreadable, Status* problem) {
  for (const auto& e : add.entries()) {
    Milli total = 0;
    if (CheckedAdd(sum->Get(e.id), e.amount, &total)) {
      sum->Set(e.id, total);
      continue;
    }
    unreadable->AddId(e.id);
    if (problem->ok()) {
      *problem = Status::OutOfRange(where + "." + ResourceName(e.id) +
                                    ": the sum of the pod's requests overflows (more than " +
                                    FormatQuantity(kMilliMax) + ")");
    }
  }
}

// What one container asks for: its requests, with limits standing in for requests that
// are missing.
void ContainerRequests(const json& c, const std::string& at, ResourceVector* out,
                       UnreadableRequests* unreadable, Status* problem) {
  const json& resources = Field(c, "resources");
  const json& given = Field(resources, "requests");
  ResourceVector requests, limits;
  UnreadableRequests unread_requests, unread_limits;
  ReadResourceList(Field(resources, "limits"), at + ".resources.limits", NameSource::kWorkload,
                   &limits, &unread_limits, problem);
  ReadResourceList(given, at + ".resources.requests", NameSource::kWorkload, &requests,
                   &unread_requests, problem);
  // Only a request that is absent takes the limit; an explicit "0" stays 0.
  auto absent = [&](const std::string& name) {
    return !given.is_object() || !given.contains(name);
  };
  for (const auto& e : limits.entries()) {
    if (absent(ResourceName(e.id))) requests.Set(e.id, e.amount);
  }
  unread_limits.all = unread_limits.all && !unread_requests.all;
  if (unread_limits.all) unread_requests.all = true;
  for (ResourceId id : unread_limits.ids) {
    if (absent(ResourceName(id))) unread_requests.AddId(id);
  }
  for (const std::string& name : unread_limits.names) {
    if (absent(name)) unread_requests.AddName(name);
  }
  // Whole GPUs per container (two containers of 0.5 are not one GPU).
  for (const auto& [list, name] : {std::pair{&limits, "limits"}, {&requests, "requests"}}) {
    if (list->Get(kGpu) % kMilliPerUnit == 0) continue;
    unread_requests.AddId(kGpu);
    if (problem->ok()) {
      *problem = Status::Invalid(at + ".resources." + name + "." + std::string(kGpuResourceName) +
                                 ": " + FormatQuantity(list->Get(kGpu)) +
                                 " is not a whole number of GPUs; ask for a share of one with "
                                 "the annotation " +
                                 std::string(kGpuFractionAnnotation));
    }
  }
  for (ResourceId id : unread_requests.ids) requests.Set(id, 0);
  *out = std::move(requests);
  unreadable->Merge(unread_requests);
}

// What a pod asks for: the sum of its containers, or the largest init container if that
// is more, plus the pod overhead (kube-scheduler's rule). Sums are checked: one that
// overflows is unreadable, never undefined.
void PodRequests(const json& spec, const std::string& where, ResourceVector* out,
                 UnreadableRequests* unreadable, Status* problem) {
  ResourceVector sum;
  const json& containers = Field(spec, "containers");
  for (size_t i = 0; containers.is_array() && i < containers.size(); ++i) {
    ResourceVector r;
    ContainerRequests(containers[i], where + ".containers[" + std::to_string(i) + "]", &r,
                      unreadable, problem);
    AddChecked(r, where + ".containers[" + std::to_string(i) + "].resources", &sum, unreadable,
               problem);
  }
  // Init containers, as kube-scheduler counts them (component-helpers' PodRequests): each
  // runs alone after the sidecars started before it (restartPolicy Always), which keep
  // running beside the app containers; the pod needs the most any of those moments take.
  const json& inits = Field(spec, "initContainers");
  ResourceVector sidecars, init_peak;
  auto raise_to = [](const ResourceVector& r, ResourceVector* peak) {
    for (const auto& e : r.entries()) {
      if (e.amount > peak->Get(e.id)) peak->Set(e.id, e.amount);
    }
  };
  for (size_t i = 0; inits.is_array() && i < inits.size(); ++i) {
    const std::string at = where + ".initContainers[" + std::to_string(i) + "]";
    ResourceVector r;
    ContainerRequests(inits[i], at, &r, unreadable, problem);
    if (String(inits[i], "restartPolicy") == "Always") {
      AddChecked(r, at + ".resources", &sum, unreadable, problem);
      AddChecked(r, at + ".resources", &sidecars, unreadable, problem);
      raise_to(sidecars, &init_peak);
    } else {
      ResourceVector moment = sidecars;
      AddChecked(r, at + ".resources", &moment, unreadable, problem);
      raise_to(moment, &init_peak);
    }
  }
  raise_to(init_peak, &sum);
  // Pod-level resources (spec.resources) replace the containers' sum for the resources
  // they may set: cpu, memory and hugepages; a request absent takes the limit.
  const json& pod_resources = Field(spec, "resources");
  if (!pod_resources.is_null()) {
    ResourceVector pod_level;
    ContainerRequests(json{{"resources", pod_resources}}, where, &pod_level, unreadable, problem);
    for (const auto& e : pod_level.entries()) {
      const std::string name = ResourceName(e.id);
      if (e.id == kCpu || e.id == kMemory || name.rfind("hugepages-", 0) == 0) {
        sum.Set(e.id, e.amount);
      } else if (problem->ok()) {
        *problem = Status::Invalid(where + ".resources.requests." + KeyText(name) +
                                   ": pod-level resources may only set cpu, memory and hugepages");
      }
    }
  }
  ResourceVector overhead;
  ReadResourceList(Field(spec, "overhead"), where + ".overhead", NameSource::kWorkload, &overhead,
                   unreadable, problem);
  AddChecked(overhead, where + ".overhead", &sum, unreadable, problem);
  for (ResourceId id : unreadable->ids) sum.Set(id, 0);
  *out = std::move(sum);
}

// The GPUs a pod asks for, from its requests (whole devices) and annotations (a share of
// one). Whatever cannot be read marks the GPUs unreadable.
void PodGpus(Milli whole_milli, const json& annotations, const std::string& where, PodInfo* pod,
             Status* problem) {
  auto fail = [&](Status st) {
    pod->unreadable.gpus = true;
    if (problem->ok()) *problem = std::move(st);
  };
  auto gpu_id = std::find(pod->unreadable.ids.begin(), pod->unreadable.ids.end(), kGpu);
  if (gpu_id != pod->unreadable.ids.end()) {
    pod->unreadable.ids.erase(gpu_id);
    pod->unreadable.gpus = true;
  } else if (whole_milli / kMilliPerUnit > kMaxGpusPerNode) {
    fail(Status::OutOfRange(
        where + ": spec.containers[*].resources." + std::string(kGpuResourceName) + ": " +
        std::to_string(whole_milli / kMilliPerUnit) + " GPUs is more than a node can have (" +
        std::to_string(kMaxGpusPerNode) + ", the limit)"));
  } else {
    pod->spec.gpu.count = static_cast<int32_t>(whole_milli / kMilliPerUnit);
  }
  std::string fraction = String(annotations, kGpuFractionAnnotation);
  std::string memory = String(annotations, kGpuMemoryAnnotation);
  if ((!fraction.empty() || !memory.empty()) && (whole_milli > 0 || pod->unreadable.gpus)) {
    if (problem->ok()) {
      *problem = Status::Invalid(where +
                                 ": metadata.annotations: a pod asks for whole GPUs "
                                 "(nvidia.com/gpu) or a share of one (" +
                                 std::string(kGpuFractionAnnotation) + ", " + kGpuMemoryAnnotation +
                                 "), not both");
    }
    return;  // whole devices cover any share of one
  }
  if (!fraction.empty()) {
    auto f = ParseQuantityExact(fraction);
    if (!f.ok() || *f <= 0 || *f >= kMilliPerUnit) {
      const bool finer = !f.ok() && ParseQuantity(fraction).ok();
      std::string why = finer ? "is finer than a thousandth of a GPU (the smallest share is 0.001)"
                              : "is not a fraction between 0 and 1 (e.g. 0.5)";
      return fail(Status::Invalid(where + ": metadata.annotations[" + kGpuFractionAnnotation +
                                  "]: \"" + KeyText(fraction) + "\" " + why));
    }
    pod->spec.gpu.milli = static_cast<int32_t>(*f);
  }
  if (!memory.empty()) {
    // A plain number of MiB: a quantity suffix ("10Gi") would be read as that many MiB.
    auto m = ParseQuantity(memory);
    if (memory.find_first_not_of("0123456789") != std::string::npos || !m.ok() || *m <= 0 ||
        *m % kMilliPerUnit != 0) {
      return fail(Status::Invalid(where + ": metadata.annotations[" + kGpuMemoryAnnotation +
                                  "]: \"" + KeyText(memory) + "\" is not a whole number of MiB"));
    }
    pod->spec.gpu.memory_mib = *m / kMilliPerUnit;
  }
}

}  // namespace

void UnreadableRequests::AddId(ResourceId id) {
  auto it = std::lower_bound(ids.begin(), ids.end(), id);
  if (it == ids.end() || *it != id) ids.insert(it, id);
}

void UnreadableRequests::AddName(const std::string& name) {
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  if (names.size() >= kMaxNames) {
    all = true;
    return;
  }
  names.push_back(name.substr(0, kMaxLabelKeyLength));
}

void UnreadableRequests::Merge(const UnreadableRequests& other) {
  all = all || other.all;
  gpus = gpus || other.gpus;
  for (ResourceId id : other.ids) AddId(id);
  for (const std::string& name : other.names) AddName(name);
}

std::string UnreadableRequests::ToString() const {
  if (all) return "every resource";
  std::string out;
  auto add = [&](const std::string& name) { out += (out.empty() ? "" : ", ") + KeyText(name); };
  for (ResourceId id : ids) add(ResourceName(id));
  if (gpus) add(std::string(kGpuResourceName));
  for (const std::string& name : names) add(name);
  return out;
}

Status ParseResourceList(const json& list, const std::string& where, NameSource source,
                         ResourceVector* out) {
  UnreadableRequests unreadable;
  Status problem = Status::Ok();
  ReadResourceList(list, where, source, out, &unreadable, &problem);
  return problem;
}

std::string FormatDeviceList(const std::vector<int32_t>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) out += (i ? "," : "") + std::to_string(devices[i]);
  return out;
}

Result<std::vector<int32_t>> ParseDeviceList(const std::string& text) {
  std::vector<int32_t> out;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 4 || out.size() >= static_cast<size_t>(kMaxGpusPerNode)) {
      return Status::Invalid("bad device list \"" + KeyText(text) + "\": expected at most " +
                             std::to_string(kMaxGpusPerNode) + " indexes like 0,3");
    }
    out.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<ObjectMeta> ParseMeta(const json& object) {
  const json& m = Field(object, "metadata");
  ObjectMeta meta;
  meta.namespace_ = String(m, "namespace");
  meta.name = String(m, "name");
  meta.uid = String(m, "uid");
  meta.resource_version = String(m, "resourceVersion");
  meta.deleting = !Field(m, "deletionTimestamp").is_null();
  if (meta.name.empty())
    return Status::Invalid("object without metadata.name: " + JsonText(object).substr(0, 120));
  return meta;
}

Result<ObjectMeta> NamedMeta(const json& object, const char* kind) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return Status::Invalid(std::string(kind) + ": " + meta.status().message());
  if (meta->name.size() > kMaxNameLength || meta->namespace_.size() > kMaxNameLength) {
    return Status::Invalid(std::string(kind) + " " + meta->Key().substr(0, 80) +
                           "...: metadata.name or namespace is longer than " +
                           std::to_string(kMaxNameLength) + " bytes");
  }
  return meta;
}

namespace {

// The owner reference with controller: true (the API server allows one), when it is a
// kind default spreading reads, by its apiVersion and kind exactly as kube-scheduler
// compares them.
SpreadOwner SpreadOwnerOf(const json& metadata) {
  const json& owners = Field(metadata, "ownerReferences");
  for (size_t i = 0; owners.is_array() && i < owners.size(); ++i) {
    const json& controller = Field(owners[i], "controller");
    if (!controller.is_boolean() || !controller.get<bool>()) continue;
    const std::string api_version = String(owners[i], "apiVersion");
    const std::string kind = String(owners[i], "kind");
    SpreadOwner owner;
    if (api_version == "v1" && kind == "ReplicationController") {
      owner.kind = SpreadOwnerKind::kReplicationController;
    } else if (api_version == "apps/v1" && kind == "ReplicaSet") {
      owner.kind = SpreadOwnerKind::kReplicaSet;
    } else if (api_version == "apps/v1" && kind == "StatefulSet") {
      owner.kind = SpreadOwnerKind::kStatefulSet;
    }
    owner.name = String(owners[i], "name");
    if (owner.kind == SpreadOwnerKind::kNone || owner.name.empty()) return {};
    return owner;
  }
  return {};
}

}  // namespace

Result<PodInfo> DecodePod(const json& object, std::string* problem_text) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  PodInfo pod;
  pod.meta = std::move(meta).value();
  const std::string where = Describe(pod.meta, "pod");
  const json& spec = Field(object, "spec");
  const json& status = Field(object, "status");
  const json& annotations = Field(Field(object, "metadata"), "annotations");
  const json& labels = Field(Field(object, "metadata"), "labels");
  Status problem = Status::Ok();
  auto fail = [&](Status st) {
    if (problem.ok()) problem = std::move(st);
  };
  // The API server holds names to 253 bytes; anything longer did not come from one, and
  // is not scheduled (a bound pod still counts: its requests are read below).
  if (pod.meta.name.size() > kMaxNameLength || pod.meta.namespace_.size() > kMaxNameLength) {
    fail(Status::Invalid(
        "pod " + pod.meta.Key().substr(0, 80) + "...: metadata.name or namespace is " +
        std::to_string(std::max(pod.meta.name.size(), pod.meta.namespace_.size())) +
        " bytes long; the limit is " + std::to_string(kMaxNameLength)));
  }
  // Not from an API server either; a bound pod still counts, as created at 0.
  fail(ReadCreationTimestamp(object, where, &pod.meta));
  pod.scheduler_name = String(spec, "schedulerName");
  if (pod.scheduler_name.empty()) pod.scheduler_name = "default-scheduler";
  pod.node_name = String(spec, "nodeName");
  pod.phase = String(status, "phase");

  // What it asks for, first: a bound pod counts with this whatever else is wrong.
  ResourceVector requests;
  PodRequests(spec, where + ": spec", &requests, &pod.unreadable, &problem);
  Milli gpus = requests.Get(kGpu);
  requests.Set(kGpu, 0);
  requests.Set(kPods, kMilliPerUnit);
  auto pods_id = std::find(pod.unreadable.ids.begin(), pod.unreadable.ids.end(), kPods);
  if (pods_id != pod.unreadable.ids.end()) pod.unreadable.ids.erase(pods_id);
  pod.spec.requests = std::move(requests);
  fail(CheckMigRequests(pod.spec.requests, where + ": spec.containers[*].resources.requests"));
  PodGpus(gpus, annotations, where, &pod, &problem);
  pod.spec.numa = NumaDemandOf(spec);

  // Then how it is scheduled.
  auto priority = Int32(spec, "priority", where + ": spec", 0);
  if (priority.ok()) {
    pod.priority = *priority;
  } else {
    fail(priority.status());
  }
  pod.spec.priority = pod.priority;
  // The API server's Priority admission copies the PriorityClass's preemptionPolicy here.
  const std::string preemption = String(spec, "preemptionPolicy");
  if (preemption == "Never") {
    pod.spec.preemption_policy = PreemptionPolicy::kNever;
  } else if (!preemption.empty() && preemption != "PreemptLowerPriority") {
    fail(Status::Invalid(where + ": spec.preemptionPolicy: unknown value \"" + preemption +
                         "\" (PreemptLowerPriority, Never)"));
  }
  pod.spec.node_selector = LabelsOf(Field(spec, "nodeSelector"));
  std::vector<Toleration> tolerations;
  Status st =
      ParseTolerations(Field(spec, "tolerations"), where + ": spec.tolerations", &tolerations);
  if (st.ok()) {
    pod.spec.tolerations = std::move(tolerations);
  } else {
    fail(st);
  }
  NodeAffinity affinity;
  st = ParseNodeAffinity(spec, where + ": spec", &affinity);
  if (st.ok()) {
    pod.spec.affinity = std::move(affinity);
  } else {
    fail(st);
  }
  // Who it is, for other pods' rules, and its own rules about other pods. Each read
  // whole or not at all: a pod with a rule that cannot be read is not scheduled.
  pod.spec.namespace_ = pod.meta.namespace_;
  pod.spec.labels = LabelsOf(labels);
  pod.spread_owner = SpreadOwnerOf(Field(object, "metadata"));
  PodAffinity pod_affinity;
  st = ParsePodAffinity(spec, where + ": spec", pod.spec.labels, &pod_affinity);
  if (st.ok()) {
    pod.spec.pod_affinity = std::move(pod_affinity);
  } else {
    fail(st);
  }
  std::vector<TopologySpreadConstraint> spread;
  st = ParseTopologySpread(spec, where + ": spec", pod.spec.labels, &spread);
  if (st.ok()) {
    pod.spec.spread = std::move(spread);
  } else {
    fail(st);
  }
  std::vector<HostPort> ports;
  st = ParseHostPorts(spec, where + ": spec", &ports);
  if (st.ok()) {
    pod.spec.host_ports = std::move(ports);
  } else {
    fail(st);
  }
  std::vector<PodClaimRef> claims;
  st = ParsePodClaims(spec, where + ": spec", pod.meta.name, &claims);
  if (st.ok()) {
    pod.claims = std::move(claims);
  } else {
    fail(st);
  }
  // Inline volumes that count against a node's volume limits (NodeVolumeLimits); claims'
  // are added when the pod is placed, from its claims and their volumes.
  const json& volumes = Field(spec, "volumes");
  for (size_t i = 0; volumes.is_array() && i < volumes.size(); ++i) {
    if (auto attachable = AttachableOfInlineVolume(volumes[i])) {
      pod.spec.attachable_volumes.push_back(std::move(*attachable));
    }
  }
  pod.spec.inline_disks = InlineDisksOf(spec);
  pod.scheduling_gates = SchedulingGates(spec);
  if (std::string unsupported = UnsupportedField(spec); !unsupported.empty()) {
    fail(Status::Invalid(where + ": " + unsupported));
  }

  if (std::string g = String(annotations, kGroupAnnotation); !g.empty()) {
    pod.group = g, pod.group_api = GroupApi::kVolcano;
  } else if (std::string v = String(annotations, kVolcanoGroupAnnotation); !v.empty()) {
    pod.group = v, pod.group_api = GroupApi::kVolcano;
  } else if (std::string c = String(labels, kCoschedulingGroupLabel); !c.empty()) {
    pod.group = c, pod.group_api = GroupApi::kCoscheduling;
  }
  pod.queue = String(annotations, kQueueAnnotation);
  if (pod.queue.empty()) pod.queue = String(annotations, kVolcanoQueueAnnotation);
  if (std::string level = String(annotations, kKueueRequiredTopologyAnnotation); !level.empty()) {
    pod.topology = TopologyRequest{std::move(level), /*required=*/true};
  } else if (std::string p = String(annotations, kKueuePreferredTopologyAnnotation); !p.empty()) {
    pod.topology = TopologyRequest{std::move(p), /*required=*/false};
  }
  // Dataset locality: the datasets it reads (its claims of Fluid datasets are the daemon's).
  fail(ReadPodDatasets(annotations, where, pod.meta.namespace_, &pod.spec.datasets));
  auto movable = ParseMovableAnnotation(annotations, where);
  if (movable.ok()) {
    pod.movable = *movable;
  } else {
    fail(movable.status());
  }
  if (std::string devices = String(annotations, kGpuDevicesAnnotation); !devices.empty()) {
    // Unreadable, the pod is counted on the least used devices instead.
    auto parsed = ParseDeviceList(devices);
    if (parsed.ok()) {
      pod.gpu_devices = std::move(parsed).value();
    } else {
      fail(Status::Invalid(where + ": metadata.annotations[" + kGpuDevicesAnnotation +
                           "]: " + parsed.status().message()));
    }
  }
  const json& conditions = Field(status, "conditions");
  for (size_t i = 0; conditions.is_array() && i < conditions.size(); ++i) {
    if (String(conditions[i], "type") == "PodScheduled" &&
        String(conditions[i], "status") == "False") {
      pod.unschedulable_message = String(conditions[i], "message");
    }
  }
  *problem_text = problem.ok() ? "" : problem.message();
  return pod;
}

Result<PodInfo> ParsePod(const json& object) {
  std::string problem;
  auto pod = DecodePod(object, &problem);
  if (pod.ok() && !problem.empty()) return Status::Invalid(problem);
  return pod;
}

Result<Node> ParseNode(const json& object) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  if (meta->name.size() > kMaxNameLength) {
    return Status::Invalid("node " + meta->name.substr(0, 80) + "...: metadata.name is " +
                           std::to_string(meta->name.size()) + " bytes long; the limit is " +
                           std::to_string(kMaxNameLength));
  }
  const std::string where = "node " + meta->name;
  Node node;
  node.name = meta->name;
  const json& spec = Field(object, "spec");
  node.labels = LabelsOf(Field(Field(object, "metadata"), "labels"));
  node.unschedulable =
      Field(spec, "unschedulable").is_boolean() && Field(spec, "unschedulable").get<bool>();
  const json& taints = Field(spec, "taints");
  for (size_t i = 0; taints.is_array() && i < taints.size(); ++i) {
    Taint t;
    t.key = String(taints[i], "key");
    t.value = String(taints[i], "value");
    std::string effect = String(taints[i], "effect");
    if (!ParseTaintEffect(effect, &t.effect)) {
      return Status::Invalid(where + ": spec.taints[" + std::to_string(i) +
                             "].effect: unknown effect \"" + effect + "\"");
    }
    node.taints.push_back(std::move(t));
  }
  ResourceVector allocatable;
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(Field(object, "status"), "allocatable"),
                                           where + ": status.allocatable", NameSource::kTrusted,
                                           &allocatable));
  // Checked before any device is made: each is an object of its own.
  Milli gpus = allocatable.Get(kGpu);
  const std::string gpu_field = where + ": status.allocatable." + std::string(kGpuResourceName);
  if (gpus % kMilliPerUnit != 0) {
    return Status::Invalid(gpu_field + ": " + FormatQuantity(gpus) + " is not a whole number");
  }
  if (gpus / kMilliPerUnit > kMaxGpusPerNode) {
    return Status::OutOfRange(gpu_field + ": " + std::to_string(gpus / kMilliPerUnit) +
                              " devices is more than a node may have (" +
                              std::to_string(kMaxGpusPerNode) + ", the limit)");
  }
  allocatable.Set(kGpu, 0);
  node.allocatable = std::move(allocatable);
  GpuDevice device;
  if (const std::string* product = node.labels.Find(kGpuProductLabel)) {
    device.model = GpuModels().Intern(*product);
  } else {
    device.model = GpuModels().Intern("unknown");
  }
  if (const std::string* memory = node.labels.Find(kGpuMemoryLabel)) {
    auto m = ParseQuantity(*memory);
    if (!m.ok() || *m < 0) {
      return Status::Invalid(where + ": metadata.labels[" + kGpuMemoryLabel + "]: \"" + *memory +
                             "\" is not a number of MiB");
    }
    device.memory_mib = *m / kMilliPerUnit;
  }
  for (Milli i = 0; i < gpus / kMilliPerUnit; ++i) node.gpus.push_back(device);
  return node;
}

Result<PodGroupInfo> ParsePodGroup(const json& object, GroupApi api) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  PodGroupInfo group;
  group.meta = std::move(meta).value();
  group.api = api;
  const std::string where = Describe(group.meta, "podgroup");
  GANTRY_RETURN_IF_ERROR(ReadCreationTimestamp(object, where, &group.meta));
  const json& spec = Field(object, "spec");
  auto min_member = Integer(spec, "minMember", where + ": spec", 1);
  if (!min_member.ok()) return min_member.status();
  if (*min_member < 0 || *min_member > 1000000) {
    return Status::Invalid(where + ": spec.minMember: " + std::to_string(*min_member) +
                           " is out of range (0..1000000)");
  }
  group.min_member = static_cast<int32_t>(std::max<int64_t>(*min_member, 1));
  group.queue = String(spec, "queue");
  group.priority_class_name = String(spec, "priorityClassName");
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(spec, "minResources"),
                                           where + ": spec.minResources", NameSource::kWorkload,
                                           &group.min_resources));
  group.phase = String(Field(object, "status"), "phase");
  if (const json& topology = Field(spec, "networkTopology"); topology.is_object()) {
    const std::string mode = String(topology, "mode");
    if (mode != "hard" && mode != "soft") {
      return Status::Invalid(where + ": spec.networkTopology.mode: \"" + mode.substr(0, 64) +
                             "\" is not hard or soft");
    }
    auto tier = Integer(topology, "highestTierAllowed", where + ": spec.networkTopology", 1);
    if (!tier.ok()) return tier.status();
    if (*tier < 1 || *tier > kMaxTopologyLevels) {
      return Status::Invalid(where +
                             ": spec.networkTopology.highestTierAllowed: " + std::to_string(*tier) +
                             " is out of range (1.." + std::to_string(kMaxTopologyLevels) + ")");
    }
    group.network_topology_tier = static_cast<int32_t>(*tier);
    group.network_topology_hard = mode == "hard";
  }
  return group;
}

Result<QueueInfo> ParseQueue(const json& object) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  QueueInfo queue;
  queue.meta = std::move(meta).value();
  const std::string where = Describe(queue.meta, "queue");
  const json& spec = Field(object, "spec");
  auto weight = Integer(spec, "weight", where + ": spec", 1);
  if (!weight.ok()) return weight.status();
  // An int32 in Volcano's API: larger weights would overflow their sum in the engine.
  if (*weight < 1 || *weight > INT32_MAX) {
    return Status::Invalid(where + ": spec.weight: " + std::to_string(*weight) +
                           " is out of range (1.." + std::to_string(INT32_MAX) + ")");
  }
  queue.weight = *weight;
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(spec, "capability"), where + ": spec.capability",
                                           NameSource::kTrusted, &queue.capability));
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(Field(spec, "guarantee"), "resource"),
                                           where + ": spec.guarantee.resource",
                                           NameSource::kTrusted, &queue.guarantee));
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(spec, "deserved"), where + ": spec.deserved",
                                           NameSource::kTrusted, &queue.deserved));
  const json& parent = Field(spec, "parent");
  if (!parent.is_null()) {
    if (!parent.is_string() || parent.get<std::string>().size() > kMaxNameLength) {
      return Status::Invalid(where + ": spec.parent: expected a queue name, got " +
                             JsonText(parent).substr(0, 64));
    }
    queue.parent = parent.get<std::string>();
  }
  const json& reclaimable = Field(spec, "reclaimable");
  if (!reclaimable.is_null()) {
    if (!reclaimable.is_boolean()) {
      return Status::Invalid(where + ": spec.reclaimable: expected true or false, got " +
                             JsonText(reclaimable).substr(0, 64));
    }
    queue.reclaimable = reclaimable.get<bool>();
  }
  const json& half_life =
      Field(Field(Field(object, "metadata"), "annotations"), kUsageHalfLifeAnnotation);
  if (!half_life.is_null()) {
    const std::string at = where + ": metadata.annotations[" + kUsageHalfLifeAnnotation + "]";
    int64_t seconds = -1;
    if (half_life.is_string()) {
      const std::string& text = half_life.get_ref<const std::string&>();
      if (!text.empty() && text.size() <= 12 &&
          std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        seconds = std::stoll(text);
      }
    }
    if (seconds < 0 || seconds > kMaxConfiguredSeconds) {
      return Status::Invalid(at + ": expected whole seconds (0.." +
                             std::to_string(kMaxConfiguredSeconds) + "), got " +
                             JsonText(half_life).substr(0, 64));
    }
    if (!queue.parent.empty() && queue.parent != "root" && seconds > 0) {
      return Status::Invalid(at +
                             ": set on the top-level queue of a tree, for the whole tree "
                             "(this queue's parent is " +
                             queue.parent + ")");
    }
    queue.usage_half_life_s = seconds;
  }
  auto movable = ParseMovableAnnotation(Field(Field(object, "metadata"), "annotations"), where);
  if (!movable.ok()) return movable.status();
  queue.movable = *movable;
  return queue;
}

Result<bool> ParseMovableAnnotation(const json& annotations, const std::string& where) {
  const json& value = Field(annotations, kMovableAnnotation);
  if (value.is_null()) return false;
  if (value.is_string() && value.get_ref<const std::string&>() == "true") return true;
  if (value.is_string() && value.get_ref<const std::string&>() == "false") return false;
  const std::string text = value.is_string() ? "\"" + KeyText(value.get<std::string>()) + "\""
                                             : JsonText(value).substr(0, 64);
  return Status::Invalid(where + ": metadata.annotations[" + kMovableAnnotation + "]: " + text +
                         " is not \"true\" or \"false\"");
}

Result<PriorityClassInfo> ParsePriorityClass(const json& object) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  PriorityClassInfo pc;
  pc.meta = std::move(meta).value();
  auto value = Int32(object, "value", "priorityclass " + pc.meta.name, 0);
  if (!value.ok()) return value.status();
  pc.value = *value;
  return pc;
}

}  // namespace gantry::k8s
