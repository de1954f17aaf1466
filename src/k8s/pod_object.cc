// Pods decoded from the API's JSON (objects.h: DecodePod, ParsePod), and the GPU device
// lists of their annotation.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/csi_translation.h"
#include "k8s/datasets.h"
#include "k8s/declared_features.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/numa_objects.h"
#include "k8s/objects.h"
#include "k8s/pod_requests.h"
#include "k8s/pod_rules.h"
#include "model/limits.h"
#include "model/quantity.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

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
  const std::string where = DescribeObject(pod.meta, "pod");
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
  PodRequests(spec, status, where + ": spec", &requests, &pod.unreadable, &problem);
  Milli gpus = requests.Get(kGpu);
  requests.Set(kGpu, 0);
  requests.Set(kPods, kMilliPerUnit);
  auto pods_id = std::find(pod.unreadable.ids.begin(), pod.unreadable.ids.end(), kPods);
  if (pods_id != pod.unreadable.ids.end()) pod.unreadable.ids.erase(pods_id);
  pod.spec.requests = std::move(requests);
  fail(CheckMigRequests(pod.spec.requests, where + ": spec.containers[*].resources.requests"));
  PodGpus(gpus, annotations, where, &pod, &problem);
  pod.spec.numa = NumaDemandOf(spec);
  pod.spec.required_features = RequiredFeatures(spec);

  // Then how it is scheduled.
  auto priority = ReadInt32(spec, "priority", where + ": spec", 0);
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
  // Its DRA claims: the daemon resolves them to ResourceClaims (DeviceClaims).
  auto resource_claims = DecodePodClaimRefs(object);
  if (resource_claims.ok()) {
    pod.resource_claims = std::move(resource_claims).value();
  } else {
    fail(resource_claims.status());
  }
  auto extended_claim = DecodePodExtendedClaimName(object);
  if (extended_claim.ok()) {
    pod.extended_claim = std::move(extended_claim).value();
  } else {
    fail(extended_claim.status());
  }
  auto claim_statuses = DecodePodClaimStatuses(object);
  if (claim_statuses.ok()) {
    pod.resource_claim_statuses = std::move(claim_statuses).value();
  } else {
    fail(claim_statuses.status());
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

  // Kubernetes' own group first: kube-scheduler gangs the pod by it whatever else it says.
  if (std::string n = SchedulingGroupOf(spec); !n.empty()) {
    pod.group = n, pod.group_api = GroupApi::kNative;
  } else if (std::string g = String(annotations, kGroupAnnotation); !g.empty()) {
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
      pod.unschedulable_reason = String(conditions[i], "reason");
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

}  // namespace gantry::k8s
