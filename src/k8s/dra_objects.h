// Dynamic Resource Allocation's objects (resource.k8s.io/v1, as the API server serves them)
// decoded into model/dra.h's plain values, and what a pod says about its claims.
//
// The decoders hold what they accept to the API server's validation where the allocator
// relies on it (exactly-one fields, required fields, the limits of model/dra.h, name
// formats), with the defaults the API server applies (allocationMode ExactCount, count 1,
// toleration operator Equal). Unknown fields are ignored, as everywhere in src/k8s/; a
// missing required field is an error. Every error names the object and the field path:
//   ResourceSlice "node-1-gpu": spec.devices[3].capacity["gpu.nvidia.com/memory"].value: ...
//   ResourceClaim "ml/train-gpus": spec.devices.requests[0].exactly.count: ...
//
// Names of attributes and capacities: a slice may write a bare id ("memory"), which is in
// its driver's domain; the decoded maps hold the qualified name ("gpu.nvidia.com/memory")
// so that the allocator and CEL compare one form. When a device has an attribute both bare
// and qualified, the qualified one is kept (upstream's lookupAttribute prefers it); for
// capacities that is refused (upstream counts them as two). DeviceCapacity::bare_name says
// how the slice wrote a capacity, because upstream matches a claim's capacity.requests
// with the device's key as written: capacity_requests keep the claim's keys as written,
// while an allocation's consumed_capacity is qualified with its result's driver (its keys
// are the device's, as written; consumed_bare names those written bare, to write them so).
//
// Off by default in 1.37 and refused with the gate's name: list-typed attributes
// (DRAListTypeAttributes). Fields of other off-by-default features are ignored.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/dra.h"
#include "model/status.h"

namespace gantry::k8s {

Result<dra::DeviceClass> DecodeDeviceClass(const nlohmann::json& object);
// A slice holds devices or shared counters (not both, as in 1.37); exactly one of nodeName,
// nodeSelector (one term), allNodes, perDeviceNodeSelection (then each device has one of
// nodeName, nodeSelector, allNodes).
Result<dra::ResourceSlice> DecodeResourceSlice(const nlohmann::json& object);
Result<dra::ResourceClaim> DecodeResourceClaim(const nlohmann::json& object);
// A claim's status.allocation as kube-scheduler writes it (the encoder beside the decoders,
// dra_allocation_json.cc): devices.results, devices.config (source FromClass or FromClaim),
// nodeSelector, allocationTimestamp. DecodeResourceClaim reads back what it writes.
// Consumed capacities are written with qualified names (the model keeps no other form).
nlohmann::json EncodeAllocation(const dra::Allocation& allocation);

Result<dra::ResourceClaimTemplate> DecodeResourceClaimTemplate(const nlohmann::json& object);
Result<dra::DeviceTaintRule> DecodeDeviceTaintRule(const nlohmann::json& object);

// A pod's spec.resourceClaims: each a name (a DNS label, unique in the pod) and exactly one
// of resourceClaimName, resourceClaimTemplateName. Errors name the pod ("pod NS/NAME:
// spec.resourceClaims[1].name: ..."). No resourceClaims is an empty list.
Result<std::vector<dra::PodClaimRef>> DecodePodClaimRefs(const nlohmann::json& pod);
// The same list read from `spec`, errors prefixed by `at` (a native PodGroup's
// spec.resourceClaims has the pod's shape).
Result<std::vector<dra::PodClaimRef>> DecodeClaimRefList(const nlohmann::json& spec,
                                                         const std::string& at);

// One entry of a pod's status.resourceClaimStatuses, written by kube-controller-manager's
// resourceclaim controller for a claim made from a template: the pod's name for the claim
// and the generated claim's name (unset: no claim was needed).
struct PodClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  bool operator==(const PodClaimStatus&) const = default;
};
Result<std::vector<PodClaimStatus>> DecodePodClaimStatuses(const nlohmann::json& pod);
// The claim that holds the devices of a pod's extended resources served by DRA
// (status.extendedResourceClaimStatus.resourceClaimName, written by the scheduler), or
// nullopt when it has none.
Result<std::optional<std::string>> DecodePodExtendedClaimName(const nlohmann::json& pod);

}  // namespace gantry::k8s
