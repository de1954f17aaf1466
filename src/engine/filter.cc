#include "engine/filter.h"

#include "engine/dra/extended_resources.h"

#include <algorithm>

namespace gantry {
namespace {

// By PodRule: the plugin that enforces it, and the words for what of the pod spec it reads.
struct PodRuleWords {
  const char* plugin;
  const char* field;
};
constexpr PodRuleWords kPodRuleWords[kPodRuleCount] = {
    {"nodeports", "hostPort"},
    {"interpodaffinity", "required pod affinity or anti-affinity"},
    {"podtopologyspread", "topologySpreadConstraints with whenUnsatisfiable DoNotSchedule"},
    {"nodevolumelimits", "volumes counted against node limits"},
};

// A claim of the spec by its index, quoted without its namespace, as kube-scheduler names it.
std::string ClaimNamed(const TaskSpec& spec, uint32_t index) {
  if (index >= spec.resource_claims.size()) return "\"\"";
  const std::string& key = spec.resource_claims[index];
  return "\"" + key.substr(key.find('/') + 1) + "\"";
}

}  // namespace

FilterResult FilterByCapacity(const ResourceVector& requests, const GpuRequest& gpu,
                              const Node& node,
                              std::span<const DeviceBackedResource> device_backed) {
  // Requests larger than the node's whole allocatable never fit, whatever runs there.
  int64_t over = requests.FirstExceeding(node.allocatable, /*named_only=*/false);
  if (over >= 0 && !device_backed.empty()) [[unlikely]] {
    over = -1;
    for (const ResourceVector::Entry& e : requests.entries()) {
      if (e.amount > node.allocatable.Get(e.id) && !ServedByDraFor(device_backed, e.id, node)) {
        over = e.id;
        break;
      }
    }
  }
  if (over >= 0) return FilterResult::Fail(FilterCode::kInsufficient, static_cast<uint32_t>(over));
  if (gpu.wants_gpu() && ServedByDraFor(device_backed, kGpu, node)) [[unlikely]] {
    return FilterResult::Ok();
  }
  if (!node.mig.ready() && ((node.mig.strategy == MigStrategy::kSingle && gpu.wants_gpu()) ||
                            RequestsMig(requests))) [[unlikely]] {
    return FilterResult::Fail(FilterCode::kMigNotReady);
  }
  if (gpu.wants_gpu()) {
    if (node.gpus.empty()) return FilterResult::Fail(FilterCode::kNoGpus);
    int32_t allowed = 0;
    for (const GpuDevice& g : node.gpus) allowed += gpu.AllowsModel(g.model) ? 1 : 0;
    if (allowed == 0) return FilterResult::Fail(FilterCode::kGpuModel);
    if (allowed < gpu.count) return FilterResult::Fail(FilterCode::kInsufficientGpus);
  }
  return FilterResult::Ok();
}

std::string DescribeFilter(const FilterResult& result, const TaskSpec& spec) {
  // kube-scheduler's words (v1.37) where a plugin of its says the same; gantry's own
  // reasons (GPUs) in the same style.
  switch (result.code) {
    case FilterCode::kOk:
      return "fit";
    case FilterCode::kUnschedulable:
      return "node(s) were unschedulable";
    case FilterCode::kNodeSelector:
    case FilterCode::kNodeAffinity:  // one plugin (NodeAffinity) checks both
      return "node(s) didn't match Pod's node affinity/selector";
    case FilterCode::kTaint:  // TaintToleration does not name the taint
      return "node(s) had untolerated taint(s)";
    case FilterCode::kGpuModel:
      return "node(s) had no GPU of an allowed model";
    case FilterCode::kNoGpus:
      return "node(s) had no GPUs";
    case FilterCode::kInsufficient:  // a pod's "pods" request is its pod count's
      if (result.detail == kPods) return "Too many pods";
      return "Insufficient " + ResourceName(static_cast<ResourceId>(result.detail));
    case FilterCode::kInsufficientGpus:
      return "Insufficient free whole GPUs (nvidia.com/gpu)";
    case FilterCode::kNoGpuShareFits:
      return "node(s) had no single GPU with enough free share or memory";
    case FilterCode::kMigNotReady:
      return "node(s) had their MIG devices being reconfigured (nvidia.com/mig.config.state is "
             "not success)";
    case FilterCode::kTooManyPods:
      return "Too many pods";
    case FilterCode::kDeclaredFeatures:
      return "node(s) didn't match Pod's required features";
    case FilterCode::kExtension:
      return "node(s) were rejected by a plugin";
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
      return "node(s) didn't match PersistentVolume's node affinity";
    case FilterCode::kVolumeZone:
      return "node(s) had no available volume zone";
    case FilterCode::kReadWriteOncePod:
      return "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
             "mode already in-use by another pod";
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
    case FilterCode::kNumaAlignment:
      if (result.detail > 0) {
        return "node(s) cannot fit container " + std::to_string(result.detail - 1) +
               " of the pod in one NUMA node (topology manager policy single-numa-node)";
      }
      return "node(s) cannot fit the pod in one NUMA node (topology manager policy "
             "single-numa-node)";
    case FilterCode::kDeviceClaimMissing:
      return "waiting for dynamic resource controller to create the resourceclaim " +
             ClaimNamed(spec, result.detail);
    case FilterCode::kDeviceClaimDeleting:
      return "resourceclaim " + ClaimNamed(spec, result.detail) + " is being deleted";
    case FilterCode::kDeviceClaimNode:
      return "resourceclaim not available on the node";
    case FilterCode::kDeviceClaimsUnallocatable:
      return "cannot allocate all claims";
    case FilterCode::kDeviceClaimError:
      return "node(s) had an error allocating the claims' devices";
    case FilterCode::kRuleNotConfigured: {
      const PodRuleWords& words = kPodRuleWords[result.detail % kPodRuleCount];
      return std::string("node(s) cannot honour the pod's ") + words.field +
             ": the configuration has no " + words.plugin + " plugin";
    }
  }
  return "node(s) were rejected";
}

const char* PluginEnforcing(PodRule rule) {
  return kPodRuleWords[static_cast<int>(rule)].plugin;
}

bool SpecUsesRule(const TaskSpec& spec, PodRule rule) {
  switch (rule) {
    case PodRule::kHostPorts:
      return !spec.host_ports.empty();
    case PodRule::kPodAffinity:
      return !spec.pod_affinity.required_affinity.empty() ||
             !spec.pod_affinity.required_anti_affinity.empty();
    case PodRule::kSpread:
      return std::any_of(spec.spread.begin(), spec.spread.end(), [](const auto& c) {
        return c.when_unsatisfiable == TopologySpreadConstraint::WhenUnsatisfiable::kDoNotSchedule;
      });
    case PodRule::kVolumeLimits:
      return !spec.attachable_volumes.empty();
  }
  return false;
}

}  // namespace gantry
