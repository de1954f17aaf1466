// A node of the cluster model and its GPU devices: the values ClusterState (model/cluster.h)
// keeps per node, in a header of their own so that the parts of the cluster that only
// read or classify nodes (the shape class table, model/shape_classes.h) need not know the
// rest of the cluster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/attachable_volume.h"
#include "model/interner.h"
#include "model/labels.h"
#include "model/mig.h"
#include "model/numa.h"
#include "model/resources.h"
#include "model/task_spec.h"

namespace gantry {

using NodeId = uint32_t;
inline constexpr uint32_t kNone = UINT32_MAX;

inline constexpr int32_t kGpuMilliWhole = 1000;  // one whole GPU, in thousandths

// The process's GPU model names ("A100-80GB", "G2", ...): one vocabulary for every
// cluster, decoder and spec of the process, like ResourceNames() and for the same reason
// (specs name models by id and are compared with every cluster's devices). Append-only:
// names come from nodes' GPU product labels, scenarios and traces, never from pods.
Interner& GpuModels();

struct GpuDevice {
  GpuModelId model = 0;
  int64_t memory_mib = 0;  // 0: unknown
  int32_t nvlink_domain = 0;
  int32_t numa_node = 0;
  // Usage, kept by ClusterState as tasks are placed and released.
  int32_t used_milli = 0;
  int64_t used_memory_mib = 0;

  int32_t free_milli() const { return kGpuMilliWhole - used_milli; }
  bool operator==(const GpuDevice&) const = default;
};

// GpuShareOn for a shared request with a memory part (node.cc).
int32_t GpuShareByMemory(const GpuRequest& gpu, const GpuDevice& device);

// The GPU share a task would take on `device` (its milli, or more when its memory request
// is the larger part of that device). Whole-GPU tasks take 1000.
// Inline for the common cases: the search asks it of every device of every candidate.
inline int32_t GpuShareOn(const GpuRequest& gpu, const GpuDevice& device) {
  if (!gpu.shared()) return kGpuMilliWhole;
  if (gpu.memory_mib == 0) return gpu.milli > 1 ? gpu.milli : 1;
  return GpuShareByMemory(gpu, device);
}

struct Node {
  std::string name;
  ResourceVector allocatable;  // includes nvidia.com/gpu = devices x 1000 milli
  Labels labels;
  std::vector<Taint> taints;
  std::vector<GpuDevice> gpus;
  bool unschedulable = false;
  NodeCsi csi;  // its CSI drivers and attached volumes, for NodeVolumeLimits
  // Its MIG devices (model/mig.h): read from labels and allocatable by ClusterState;
  // single strategy: `gpus` are the MIG devices, each in the NVLink domain of its GPU.
  NodeMig mig;
  // Its NUMA nodes and topology manager policy (model/numa.h), from its NodeResourceTopology:
  // ClusterState puts each GPU on its NUMA node and keeps what aligned tasks take per zone.
  NodeNuma numa;
  // Filled by ClusterState:
  bool removed = false;  // deleted from the cluster: takes no tasks, counts in no total
  std::vector<std::string> topology;  // values of ClusterState::topology_keys(), "" if absent
  uint32_t shape_class = 0;           // see ShapeClassTable (model/shape_classes.h)
  ResourceVector used;                // requests of the tasks placed here (GPU as milli)
  int32_t task_count = 0;
  // ---- Dataset locality (issue 13, model/datasets.h): the datasets ("namespace/name")
  // the node caches by its loader's word (the annotation gantry.dev/cached-datasets, a
  // scenario's cachedDatasets, the simulator's cache model); ClusterState checks them,
  // sorts them and keeps each once, at most kMaxCachedDatasetsPerNode. Fluid's cache
  // labels say it too: read per dataset a task names (NodeCachesDataset), since a label
  // key cannot be split into namespace and name. Neither is part of the shape class: only
  // a scorer reads them.
  std::vector<std::string> cached_datasets;
  // ---- Dynamic Resource Allocation: what its DRA devices count as in the cluster's
  // capacity for queues (the configured map from DeviceClass to resource name: a
  // gpu.nvidia.com device as 1000 milli of nvidia.com/gpu). Never in `allocatable`: the
  // kubelet does not publish them there, and DeviceReservations checks the devices. The
  // engine's node table counts it in the node's room, as the tasks using the devices have
  // it in `used`.
  ResourceVector device_capacity;
  // status.declaredFeatures (NodeDeclaredFeatures, GA in Kubernetes 1.37): the features its
  // kubelet says it has, sorted, each once. A pod that needs one it lacks is refused.
  std::vector<std::string> declared_features;
};

}  // namespace gantry
