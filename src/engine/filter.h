// The outcome of asking whether a task may run on a node, cheap to make and compare;
// the words for a person are made only when a job stays pending.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "model/cluster.h"

namespace gantry {

enum class FilterCode : uint8_t {
  kOk = 0,
  kUnschedulable,     // node is cordoned
  kNodeSelector,      // nodeSelector does not match
  kNodeAffinity,      // required node affinity does not match
  kTaint,             // detail: index of the untolerated taint in node.taints
  kGpuModel,          // no GPU of an allowed model on the node
  kNoGpus,            // the task wants GPUs and the node has none
  kInsufficient,      // detail: the resource id
  kInsufficientGpus,  // fewer free whole GPUs than the task asks for
  kNoGpuShareFits,    // no single device has the share (and memory) a shared task asks for
  kMigNotReady,       // the task wants MIG devices and the node's MIG manager is re-cutting
  kDeclaredFeatures,  // the node does not declare every feature the task needs
  kTooManyPods,       // the node's pod limit is reached
  kExtension,         // a plugin's own reason; detail: index of the plugin in the session
  // Rules about other pods (InterPodAffinity, PodTopologySpread, NodePorts), worded as
  // kube-scheduler words them. Detail: the index of the term or constraint in the spec.
  kPodAffinity,           // a required pod affinity term has no matching pod in the domain
  kPodAntiAffinity,       // a required anti-affinity term has a matching pod in the domain
  kExistingAntiAffinity,  // a placed pod's required anti-affinity keeps this pod away
  kSpreadMissingLabel,    // the node lacks a DoNotSchedule constraint's topology key
  kSpreadSkew,            // placing here would exceed a constraint's maxSkew
  kNodePorts,             // a host port is taken on the node
  // The pod's volumes (VolumeBinding, VolumeZone, VolumeRestrictions), in their words.
  kVolumeNodeAffinity,  // a bound volume's node affinity does not match the node
  kVolumeZone,          // a bound volume's zone or region is not the node's
  kReadWriteOncePod,    // a ReadWriteOncePod claim of the pod is in use by another pod
  kDiskConflict,        // an inline disk of the pod is in use by a pod on the node
  kVolumeBindConflict,  // a delayed claim has no volume reachable here and cannot be
                        // provisioned here (VolumeBinding's ErrReasonBindConflict)
  kNotEnoughStorage,    // a delayed claim's class provisions here but no storage capacity
                        // object offers room for it (VolumeBinding's ErrReasonNotEnoughSpace)
  kMaxVolumeCount,      // the node's limit of attached volumes for a CSI driver (NodeVolumeLimits)
  kCsiDriverMissing,    // detail: index in spec.attachable_volumes of a volume whose driver
                        // the node lacks and must have
  kRuleNotConfigured,   // detail: the PodRule the spec uses and no configured plugin enforces
  kNumaAlignment,       // the node's topology manager (single-numa-node) cannot align the
                        // task; detail: 0 for the pod, else 1 + the container's index
  // The pod's ResourceClaims (DynamicResources), in its words. Detail: the claim's index in
  // spec.resource_claims, except where said.
  kDeviceClaimMissing,         // the claim does not exist (yet)
  kDeviceClaimDeleting,        // the claim is being deleted
  kDeviceClaimNode,            // the claim is allocated for other nodes
  kDeviceClaimsUnallocatable,  // the claims' devices cannot all be allocated here (no detail)
  kDeviceClaimError,           // allocating them failed; detail: the error's index among
                               // DeviceReservations::errors()
};

// Rules of a pod spec that one plugin enforces, so that a configuration without that plugin
// would place the pod as if the rule were not there (kube-scheduler's default profile
// would not): such a pod fits no node, and its reason names the rule and the plugin.
enum class PodRule : uint8_t {
  kHostPorts,     // nodeports
  kPodAffinity,   // interpodaffinity: required pod affinity or anti-affinity
  kSpread,        // podtopologyspread: DoNotSchedule topology spread constraints
  kVolumeLimits,  // nodevolumelimits: volumes that count against a node's CSI limits
};
inline constexpr int kPodRuleCount = 4;
// The plugin that enforces `rule`, by its configured name.
const char* PluginEnforcing(PodRule rule);
// Whether `spec` uses `rule`.
bool SpecUsesRule(const TaskSpec& spec, PodRule rule);

struct FilterResult {
  FilterCode code = FilterCode::kOk;
  uint32_t detail = 0;

  bool ok() const { return code == FilterCode::kOk; }
  static FilterResult Ok() { return {}; }
  static FilterResult Fail(FilterCode code, uint32_t detail = 0) { return {code, detail}; }
  bool operator==(const FilterResult&) const = default;
};

// Whether the amounts `requests` and `gpu` could fit `node` with nothing else on it:
// requests within its allocatable, and GPUs present, of an allowed model, and enough of
// them; and, for MIG devices, a node whose MIG configuration is done. The capacity part
// of the static predicates; taints are not looked at. The resources of `device_backed`
// that the node serves by DRA (no allocatable of them) are left to DeviceReservations, as
// NodeResourcesFit leaves them to DynamicResources.
FilterResult FilterByCapacity(const ResourceVector& requests, const GpuRequest& gpu,
                              const Node& node,
                              std::span<const DeviceBackedResource> device_backed = {});

// "Insufficient cpu", "node(s) had untolerated taint(s)", ...: kube-scheduler's words for
// a node it rejects for the same reason, for a task of `spec`. A node short of several
// resources has one reason for each (see DiagnoseNoNode); this names the one in `result`.
std::string DescribeFilter(const FilterResult& result, const TaskSpec& spec);

}  // namespace gantry
