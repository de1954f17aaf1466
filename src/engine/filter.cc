#include "engine/filter.h"

namespace gantry {

FilterResult FilterByCapacity(const ResourceVector& requests, const GpuRequest& gpu,
                              const Node& node) {
  // Requests larger than the node's whole allocatable never fit, whatever runs there.
  int64_t over = requests.FirstExceeding(node.allocatable, /*named_only=*/false);
  if (over >= 0) return FilterResult::Fail(FilterCode::kInsufficient, static_cast<uint32_t>(over));
  if (gpu.wants_gpu()) {
    if (node.gpus.empty()) return FilterResult::Fail(FilterCode::kNoGpus);
    int32_t allowed = 0;
    for (const GpuDevice& g : node.gpus) allowed += gpu.AllowsModel(g.model) ? 1 : 0;
    if (allowed == 0) return FilterResult::Fail(FilterCode::kGpuModel);
    if (allowed < gpu.count) return FilterResult::Fail(FilterCode::kInsufficientGpus);
  }
  return FilterResult::Ok();
}

std::string DescribeFilter(const FilterResult& result, const TaskSpec& spec, const Node& node) {
  switch (result.code) {
    case FilterCode::kOk:
      return "fit";
    case FilterCode::kUnschedulable:
      return "node(s) were unschedulable";
    case FilterCode::kNodeSelector:
      return "node(s) didn't match the node selector";
    case FilterCode::kNodeAffinity:
      return "node(s) didn't match the required node affinity";
    case FilterCode::kTaint:
      if (result.detail < node.taints.size()) {
        return "node(s) had untolerated taint {" + node.taints[result.detail].ToString() + "}";
      }
      return "node(s) had an untolerated taint";
    case FilterCode::kGpuModel:
      return "node(s) had no GPU of an allowed model";
    case FilterCode::kNoGpus:
      return "node(s) had no GPUs";
    case FilterCode::kInsufficient:
      return "insufficient " + ResourceName(static_cast<ResourceId>(result.detail));
    case FilterCode::kInsufficientGpus:
      return "insufficient free whole GPUs (nvidia.com/gpu)";
    case FilterCode::kNoGpuShareFits:
      return "no single GPU with enough free share or memory";
    case FilterCode::kTooManyPods:
      return "too many pods";
    case FilterCode::kExtension:
      return "rejected by a plugin";
    case FilterCode::kPodAffinity:
      return "node(s) didn't match pod affinity rules";
    case FilterCode::kPodAntiAffinity:
      return "node(s) didn't match pod anti-affinity rules";
    case FilterCode::kExistingAntiAffinity:
      return "node(s) didn't satisfy existing pods anti-affinity rules";
    case FilterCode::kSpreadMissingLabel:
      return "node(s) didn't match pod topology spread constraints (missing required label)";
    case FilterCode::kSpreadSkew:
      return "node(s) didn't match pod topology spread constraints";
    case FilterCode::kNodePorts:
      return "node(s) didn't have free ports for the requested pod ports";
    case FilterCode::kVolumeNodeAffinity:
      return "node(s) had volume node affinity conflict";
    case FilterCode::kVolumeZone:
      return "node(s) had no available volume zone";
    case FilterCode::kReadWriteOncePod:
      return "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
             "access mode";
    case FilterCode::kDiskConflict:
      return "node(s) had no available disk";
    case FilterCode::kVolumeBindConflict:
      return "node(s) didn't find available persistent volumes to bind";
    case FilterCode::kNotEnoughStorage:
      return "node(s) did not have enough free storage";
    case FilterCode::kMaxVolumeCount:
      return "node(s) exceed max volume count";
    case FilterCode::kCsiDriverMissing:
      if (result.detail < spec.attachable_volumes.size()) {
        return spec.attachable_volumes[result.detail].driver +
               " CSI driver is not installed on the node";
      }
      return "a CSI driver is not installed on the node";
  }
  return "rejected";
}

}  // namespace gantry
