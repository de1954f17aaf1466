#include "daemon/watch_sources.h"

namespace gantry {

const std::vector<WatchSource>& WatchSources() {
  static const auto* sources = new std::vector<WatchSource>{
      {WatchKind::kNode, "/api/v1/nodes"},
      {WatchKind::kPriorityClass, "/apis/scheduling.k8s.io/v1/priorityclasses"},
      {WatchKind::kNamespace, "/api/v1/namespaces"},
      {WatchKind::kQueue, "/apis/scheduling.volcano.sh/v1beta1/queues"},
      // Topology levels, where Kueue is installed and the configuration names none.
      {WatchKind::kKueueTopology, "/apis/kueue.x-k8s.io/v1beta1/topologies"},
      // Or from Volcano's HyperNodes, where their CRD is installed.
      {WatchKind::kHyperNode, "/apis/topology.volcano.sh/v1alpha1/hypernodes"},
      // NUMA nodes and topology manager policies, where Node Feature Discovery's topology
      // updater writes them.
      {WatchKind::kNodeResourceTopology,
       "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"},
      // Datasets' sizes for dataset locality, where Fluid is installed.
      {WatchKind::kFluidDataset, "/apis/data.fluid.io/v1alpha1/datasets"},
      {WatchKind::kVolcanoGroup, "/apis/scheduling.volcano.sh/v1beta1/podgroups"},
      {WatchKind::kCoschedulingGroup, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"},
      // Kubernetes' own, where the API server serves scheduling.k8s.io/v1beta1 (the
      // GenericWorkload gate); a 404 elsewhere, and the informer looks again later.
      {WatchKind::kNativeGroup, "/apis/scheduling.k8s.io/v1beta1/podgroups"},
      // Its CompositePodGroups, where v1alpha3 is served (the CompositePodGroup gate).
      {WatchKind::kCompositeGroup, "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups"},
      {WatchKind::kStorageClass, "/apis/storage.k8s.io/v1/storageclasses"},
      {WatchKind::kPersistentVolume, "/api/v1/persistentvolumes"},
      {WatchKind::kClaim, "/api/v1/persistentvolumeclaims"},
      // Volume limits per CSI driver, and storage capacity for provisioning.
      {WatchKind::kCsiNode, "/apis/storage.k8s.io/v1/csinodes"},
      {WatchKind::kVolumeAttachment, "/apis/storage.k8s.io/v1/volumeattachments"},
      {WatchKind::kCsiDriver, "/apis/storage.k8s.io/v1/csidrivers"},
      {WatchKind::kStorageCapacity, "/apis/storage.k8s.io/v1/csistoragecapacities"},
      // Dynamic Resource Allocation, where the API server serves resource.k8s.io/v1
      // (DeviceTaintRules where their feature is on).
      {WatchKind::kDeviceClass, "/apis/resource.k8s.io/v1/deviceclasses"},
      {WatchKind::kResourceSlice, "/apis/resource.k8s.io/v1/resourceslices"},
      {WatchKind::kDeviceTaintRule, "/apis/resource.k8s.io/v1/devicetaintrules"},
      {WatchKind::kResourceClaim, "/apis/resource.k8s.io/v1/resourceclaims"},
      // What default topology spreading selects a pod's peers by.
      {WatchKind::kService, "/api/v1/services"},
      {WatchKind::kReplicationController, "/api/v1/replicationcontrollers"},
      {WatchKind::kReplicaSet, "/apis/apps/v1/replicasets"},
      {WatchKind::kStatefulSet, "/apis/apps/v1/statefulsets"},
      // What preempt and reclaim may evict.
      {WatchKind::kDisruptionBudget, "/apis/policy/v1/poddisruptionbudgets"},
      {WatchKind::kPod, "/api/v1/pods"},
  };
  return *sources;
}

void ApplyWatchObject(ClusterCache& cache, WatchKind kind, k8s::EventType type,
                      const nlohmann::json& object) {
  switch (kind) {
    case WatchKind::kPod:
      cache.OnPod(type, object);
      break;
    case WatchKind::kNode:
      cache.OnNode(type, object);
      break;
    case WatchKind::kVolcanoGroup:
      cache.OnPodGroup(k8s::GroupApi::kVolcano, type, object);
      break;
    case WatchKind::kCoschedulingGroup:
      cache.OnPodGroup(k8s::GroupApi::kCoscheduling, type, object);
      break;
    case WatchKind::kNativeGroup:
      cache.OnPodGroup(k8s::GroupApi::kNative, type, object);
      break;
    case WatchKind::kCompositeGroup:
      cache.OnPodGroup(k8s::GroupApi::kComposite, type, object);
      break;
    case WatchKind::kQueue:
      cache.OnQueue(type, object);
      break;
    case WatchKind::kKueueTopology:
      cache.OnKueueTopology(type, object);
      break;
    case WatchKind::kHyperNode:
      cache.OnHyperNode(type, object);
      break;
    case WatchKind::kNodeResourceTopology:
      cache.OnNodeResourceTopology(type, object);
      break;
    case WatchKind::kFluidDataset:
      cache.OnFluidDataset(type, object);
      break;
    case WatchKind::kPriorityClass:
      cache.OnPriorityClass(type, object);
      break;
    case WatchKind::kNamespace:
      cache.OnNamespace(type, object);
      break;
    case WatchKind::kClaim:
      cache.OnClaim(type, object);
      break;
    case WatchKind::kPersistentVolume:
      cache.OnPersistentVolume(type, object);
      break;
    case WatchKind::kStorageClass:
      cache.OnStorageClass(type, object);
      break;
    case WatchKind::kCsiNode:
      cache.OnCsiNode(type, object);
      break;
    case WatchKind::kVolumeAttachment:
      cache.OnVolumeAttachment(type, object);
      break;
    case WatchKind::kCsiDriver:
      cache.OnCsiDriver(type, object);
      break;
    case WatchKind::kStorageCapacity:
      cache.OnStorageCapacity(type, object);
      break;
    case WatchKind::kService:
      cache.OnService(type, object);
      break;
    case WatchKind::kReplicationController:
      cache.OnSpreadOwner(k8s::SpreadOwnerKind::kReplicationController, type, object);
      break;
    case WatchKind::kReplicaSet:
      cache.OnSpreadOwner(k8s::SpreadOwnerKind::kReplicaSet, type, object);
      break;
    case WatchKind::kStatefulSet:
      cache.OnSpreadOwner(k8s::SpreadOwnerKind::kStatefulSet, type, object);
      break;
    case WatchKind::kDisruptionBudget:
      cache.OnDisruptionBudget(type, object);
      break;
    case WatchKind::kDeviceClass:
      cache.OnDeviceClass(type, object);
      break;
    case WatchKind::kResourceSlice:
      cache.OnResourceSlice(type, object);
      break;
    case WatchKind::kResourceClaim:
      cache.OnResourceClaim(type, object);
      break;
    case WatchKind::kDeviceTaintRule:
      cache.OnDeviceTaintRule(type, object);
      break;
  }
}

}  // namespace gantry
