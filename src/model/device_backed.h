// Which of a task's extended resources a node serves through DRA (engine/dra/
// extended_resources.h has the whole of DRA's extended resources): those a DeviceClass
// serves (TaskSpec::device_backed) that the node's allocatable has none of. Here, below
// the engine, because placing a task checks it too (ClusterState::CheckPlacement).
#pragma once

#include <span>

#include "model/node.h"
#include "model/task_spec.h"

namespace gantry {

// Whether `node` serves `resource` through DRA: its allocatable has none of it (for
// nvidia.com/gpu: no GPU devices, which Gantry keeps out of the allocatable vector).
inline bool ServedByDra(ResourceId resource, const Node& node) {
  return resource == kGpu ? node.gpus.empty() : node.allocatable.Get(resource) == 0;
}

// Whether `resource` is one of `backed`.
inline bool Backs(std::span<const DeviceBackedResource> backed, ResourceId resource) {
  for (const DeviceBackedResource& r : backed) {
    if (r.resource == resource) return true;
  }
  return false;
}

// Whether `resource` is one of `backed` that `node` serves through DRA.
inline bool ServedByDraFor(std::span<const DeviceBackedResource> backed, ResourceId resource,
                           const Node& node) {
  return Backs(backed, resource) && ServedByDra(resource, node);
}

// What a task placed on a node whose GPUs are DRA devices takes of its nvidia.com/gpu, in
// milli-GPUs: what its claims count as (TaskSpec::device_requests), and its nvidia.com/gpu
// request where a DeviceClass serves it (ClusterState::Accounted counts both the same
// way). The scorers weigh it against the node's room for nvidia.com/gpu there.
inline Milli DraGpuRequest(const TaskSpec& spec) {
  Milli request = spec.device_requests.Get(kGpu);
  if (Backs(spec.device_backed, kGpu)) {
    request += static_cast<Milli>(spec.gpu.count) * kGpuMilliWhole;
  }
  return request;
}

}  // namespace gantry
