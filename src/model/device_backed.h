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

}  // namespace gantry
