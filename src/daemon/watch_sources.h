// What the daemon reads from the API server: each kind of object, the collection it is
// listed and watched from, and where it goes in the ClusterCache. Shared by the scheduler's
// informers and `gantry snapshot`, which lists the same collections once, so that a
// snapshot is the cluster exactly as the daemon would see it.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "daemon/cluster_cache.h"
#include "k8s/informer.h"

namespace gantry {

enum class WatchKind {
  kPod,
  kNode,
  kVolcanoGroup,
  kCoschedulingGroup,
  kNativeGroup,
  kCompositeGroup,
  kQueue,
  kPriorityClass,
  kNamespace,
  kClaim,
  kPersistentVolume,
  kStorageClass,
  kCsiNode,
  kVolumeAttachment,
  kCsiDriver,
  kStorageCapacity,
  kService,
  kReplicationController,
  kReplicaSet,
  kStatefulSet,
  kDisruptionBudget,
  kKueueTopology,
  kHyperNode,
  kNodeResourceTopology,
  kFluidDataset,
  kDeviceClass,
  kResourceSlice,
  kResourceClaim,
  kDeviceTaintRule,
};

struct WatchSource {
  WatchKind kind;
  const char* path;  // the collection: "/api/v1/pods", ...
};

// In the order a first list should apply them: pods last, once what they refer to is in.
const std::vector<WatchSource>& WatchSources();

// Applies one event about an object of `kind` to the cache.
void ApplyWatchObject(ClusterCache& cache, WatchKind kind, k8s::EventType type,
                      const nlohmann::json& object);

}  // namespace gantry
