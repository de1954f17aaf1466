// Every Kubernetes object codec (k8s/objects.h) on one JSON value, as the daemon's
// informers and `gantry validate` use them, with the invariants of what they accept.
// Shared by the k8s_objects harness (JSON bytes) and the yaml_json harness (YAML text).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "k8s/objects.h"
#include "k8s/volumes.h"
#include "k8s/workloads.h"
#include "model/limits.h"
#include "tests/fuzz/cluster_checks.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry::fuzz {

inline void CheckNonNegative(const ResourceVector& v, const std::string& what) {
  for (const auto& e : v.entries()) {
    FUZZ_CHECK(e.amount >= 0,
               what + ": negative " + ResourceName(e.id) + " " + std::to_string(e.amount));
  }
}

inline std::string WideToString(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  for (; v != 0; v /= 10)
    digits.insert(digits.begin(), static_cast<char>('0' + (negative ? -(v % 10) : v % 10)));
  return negative ? "-" + digits : digits;
}

// A quantity as the API gives it (a string, or a JSON integer of whole units), in
// milli-units with 128 bits, or nothing when it is neither or does not parse.
inline std::optional<__int128> ReferenceQuantity(const nlohmann::json& value) {
  if (value.is_string()) {
    auto q = ParseQuantity(value.get<std::string>());
    if (!q.ok()) return std::nullopt;
    return __int128{*q};
  }
  if (value.is_number_integer()) return __int128{value.get<int64_t>()} * kMilliPerUnit;
  return std::nullopt;
}

// The whole GPUs a plain pod asks for (containers only: no init containers, no overhead),
// each container's request or else its limit, summed without overflow; nothing when the
// pod is not that simple or a quantity does not read.
inline std::optional<__int128> ReferencePodGpus(const nlohmann::json& object) {
  if (!object.is_object() || !object.contains("spec") || !object["spec"].is_object()) {
    return std::nullopt;
  }
  const nlohmann::json& spec = object["spec"];
  if (spec.contains("initContainers") || spec.contains("overhead")) return std::nullopt;
  if (!spec.contains("containers") || !spec["containers"].is_array()) return std::nullopt;
  __int128 sum = 0;
  for (const nlohmann::json& c : spec["containers"]) {
    if (!c.is_object() || !c.contains("resources")) continue;
    const nlohmann::json& resources = c["resources"];
    if (!resources.is_object()) continue;
    const nlohmann::json* amount = nullptr;
    for (const char* list : {"limits", "requests"}) {
      if (resources.contains(list) && resources[list].is_object() &&
          resources[list].contains(kGpuResourceName)) {
        amount = &resources[list][std::string(kGpuResourceName)];
      }
    }
    if (amount == nullptr) continue;
    auto q = ReferenceQuantity(*amount);
    if (!q) return std::nullopt;
    sum += *q;
  }
  return sum;
}

template <typename T>
void CheckRefusal(const Result<T>& result) {
  if (!result.ok()) FUZZ_CHECK(!result.status().message().empty(), "an error without a message");
}

inline void CheckObjectCodecs(const nlohmann::json& object) {
  using namespace k8s;
  Result<PodInfo> pod = ParsePod(object);
  CheckRefusal(pod);
  if (pod.ok()) {
    const std::string where = "pod " + pod->meta.Key();
    FUZZ_CHECK(!pod->meta.name.empty(), "a pod without a name");
    FUZZ_CHECK(pod->meta.name.size() <= kMaxNameLength,
               "a pod name of " + std::to_string(pod->meta.name.size()) + " bytes");
    const GpuRequest& gpu = pod->spec.gpu;
    FUZZ_CHECK(gpu.count >= 0 && gpu.count <= kMaxGpusPerNode,
               where + ": " + std::to_string(gpu.count) + " GPUs");
    FUZZ_CHECK(gpu.milli >= 0 && gpu.milli < kGpuMilliWhole,
               where + ": GPU share " + std::to_string(gpu.milli));
    FUZZ_CHECK(gpu.count == 0 || (gpu.milli == 0 && gpu.memory_mib == 0),
               where + ": whole GPUs and a share");
    FUZZ_CHECK(gpu.memory_mib >= 0, where + ": negative GPU memory");
    FUZZ_CHECK(pod->spec.requests.Get(kGpu) == 0, where + ": GPUs left in the requests");
    if (auto asked = ReferencePodGpus(object)) {
      FUZZ_CHECK(__int128{gpu.count} * kMilliPerUnit == *asked,
                 where + ": asks for " + WideToString(*asked) + "m GPUs, read as " +
                     std::to_string(gpu.count));
    }
    CheckNonNegative(pod->spec.requests, where + " requests");
    for (int32_t device : pod->gpu_devices) {
      FUZZ_CHECK(device >= 0, where + ": GPU device " + std::to_string(device));
    }
    if (!pod->gpu_devices.empty()) {
      auto again = ParseDeviceList(FormatDeviceList(pod->gpu_devices));
      FUZZ_CHECK(again.ok() && *again == pod->gpu_devices, where + ": device list \"" +
                                                               FormatDeviceList(pod->gpu_devices) +
                                                               "\" does not read back");
    }
  }
  Result<Node> node = ParseNode(object);
  CheckRefusal(node);
  if (node.ok()) {
    const std::string where = "node " + node->name;
    FUZZ_CHECK(node->gpus.size() <= static_cast<size_t>(kMaxGpusPerNode),
               where + ": " + std::to_string(node->gpus.size()) + " GPUs");
    CheckNonNegative(node->allocatable, where + " allocatable");
    if (object.contains("status") && object["status"].is_object() &&
        object["status"].contains("allocatable") && object["status"]["allocatable"].is_object() &&
        object["status"]["allocatable"].contains(kGpuResourceName)) {
      auto has = ReferenceQuantity(object["status"]["allocatable"][std::string(kGpuResourceName)]);
      if (has && *has >= 0) {
        FUZZ_CHECK(__int128(node->gpus.size()) == *has / kMilliPerUnit,
                   where + ": has " + WideToString(*has) + "m GPUs, read as " +
                       std::to_string(node->gpus.size()) + " devices");
      }
    }
    ClusterState cluster;
    auto added = cluster.AddNode(*node);
    if (added.ok()) CheckCluster(cluster);
  }
  for (GroupApi api : {GroupApi::kVolcano, GroupApi::kCoscheduling, GroupApi::kNative}) {
    Result<PodGroupInfo> group = ParsePodGroup(object, api);
    CheckRefusal(group);
    if (group.ok()) {
      FUZZ_CHECK(group->min_member >= 1, "podgroup " + group->meta.Key() + ": minMember " +
                                             std::to_string(group->min_member));
      CheckNonNegative(group->min_resources, "podgroup " + group->meta.Key() + " minResources");
    }
  }
  Result<QueueInfo> queue = ParseQueue(object);
  CheckRefusal(queue);
  if (queue.ok()) {
    FUZZ_CHECK(queue->weight >= 1,
               "queue " + queue->meta.name + ": weight " + std::to_string(queue->weight));
    CheckNonNegative(queue->capability, "queue " + queue->meta.name + " capability");
    CheckNonNegative(queue->guarantee, "queue " + queue->meta.name + " guarantee");
  }
  CheckRefusal(ParsePriorityClass(object));
  Result<ClaimInfo> claim = ParseClaim(object);
  CheckRefusal(claim);
  if (claim.ok()) {
    FUZZ_CHECK(claim->meta.name.size() <= kMaxNameLength,
               "a claim name of " + std::to_string(claim->meta.name.size()) + " bytes");
  }
  Result<PersistentVolumeInfo> volume = ParsePersistentVolume(object);
  CheckRefusal(volume);
  if (volume.ok()) {
    for (const VolumeTopology& zone : volume->zones) {
      FUZZ_CHECK(!zone.values.empty(), "persistentvolume " + volume->meta.name + ": label " +
                                           zone.key + " read as no zones");
    }
  }
  CheckRefusal(ParseStorageClass(object));
  CheckRefusal(ParseService(object));
  for (SpreadOwnerKind kind : {SpreadOwnerKind::kReplicationController,
                               SpreadOwnerKind::kReplicaSet, SpreadOwnerKind::kStatefulSet}) {
    CheckRefusal(ParseSpreadOwner(object, kind));
  }
}

}  // namespace gantry::fuzz
