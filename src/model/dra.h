// Dynamic Resource Allocation (resource.k8s.io/v1) as the allocator reads it.
//
// Plain values mirroring the API objects the structured allocator works on: DeviceClass,
// ResourceSlice (pools of devices, shared counters), ResourceClaim (requests, constraints,
// its allocation) and DeviceTaintRule, with the feature set kube-scheduler 1.37 has on by
// default (prioritized lists, partitionable devices, consumable capacity, device taints and
// taint rules, admin access, binding conditions). Off by default in 1.37 and so not here:
// list-typed attributes, derived attributes, compatibility groups, partition types, node
// allocatable resources, optional node operations.
//
// Quantities (capacity, counters) are exact milli-units like every other amount in Gantry
// (model/quantity.h): 80Gi of memory is 85,899,345,920,000 milli-bytes, far below the
// 9.2e18 limit. A quantity finer than a milli-unit is read rounded up (as MilliValue()).
//
// CEL selectors are kept as their expressions; this layer never evaluates them (the
// engine sees their verdicts per device, computed by src/dra/ before a session).
//
// Field names follow the API's (in snake case) so that an error can name the field the
// user wrote.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/labels.h"
#include "model/quantity.h"

namespace gantry::dra {

// ---- Limits of the API (validation of resource.k8s.io/v1), checked by the decoders.
inline constexpr int kMaxDevicesPerSlice = 128;  // ResourceSliceMaxDevices
inline constexpr int kMaxAttributesAndCapacitiesPerDevice = 32;
inline constexpr int kMaxSharedCounterSetsPerSlice = 8;
inline constexpr int kMaxCountersPerSet = 32;
inline constexpr int kMaxRequestsPerClaim = 32;  // DeviceRequestsMaxSize
inline constexpr int kMaxSubRequests = 8;        // FirstAvailableDeviceRequestMaxSize
inline constexpr int kMaxConstraintsPerClaim = 32;
inline constexpr int kMaxSelectors = 32;
inline constexpr int kMaxTolerations = 16;
inline constexpr int kMaxReservedFor = 256;  // ResourceClaimReservedForMaxSize
inline constexpr int kMaxAllocationResults = 32;

// The finalizer kube-scheduler puts on a claim before it writes an allocation.
inline constexpr std::string_view kClaimFinalizer = "resource.kubernetes.io/delete-protection";
// The implicit extended resource name of a DeviceClass: this prefix and the class's name.
inline constexpr std::string_view kDeviceClassResourcePrefix =
    "deviceclass.resource.kubernetes.io/";
// A namespace with this label set to "true" may ask for admin access.
inline constexpr std::string_view kAdminAccessNamespaceLabel =
    "resource.kubernetes.io/admin-access";

// ---- Devices and slices.

// A semantic version attribute ("1.2.3"), compared by CEL's semver functions.
struct SemanticVersion {
  std::string text;
  bool operator==(const SemanticVersion&) const = default;
};

// DeviceAttribute: exactly one of int, bool, string, version.
using AttributeValue = std::variant<int64_t, bool, std::string, SemanticVersion>;

// A qualified name as the API writes it: "domain/id", or "id" in the driver's own domain.
// Keys below are always fully qualified ("gpu.nvidia.com/productName"): the decoder adds
// the driver's name to a bare id, as upstream does before comparing attributes.
using QualifiedName = std::string;

// CapacityRequestPolicy: what a request may consume of a shared device's capacity.
struct CapacityRequestPolicy {
  std::optional<Milli> default_value;  // `default`: taken when a request names none
  std::vector<Milli> valid_values;     // ascending; a request is rounded up to one
  struct Range {
    Milli min = 0;
    std::optional<Milli> max;
    std::optional<Milli> step;  // a request is rounded up to min + k * step
    bool operator==(const Range&) const = default;
  };
  std::optional<Range> valid_range;
  bool operator==(const CapacityRequestPolicy&) const = default;
};

struct DeviceCapacity {
  Milli value = 0;
  std::optional<CapacityRequestPolicy> request_policy;
  // The slice wrote the name without a domain ("memory"). Upstream compares a claim's
  // capacity.requests and an allocation's consumedCapacity with the key as written, so a
  // request names this capacity by the bare id (and one written qualified by the full name).
  bool bare_name = false;
  bool operator==(const DeviceCapacity&) const = default;
};

enum class DeviceTaintEffect { kNone, kNoSchedule, kNoExecute };

struct DeviceTaint {
  std::string key;
  std::string value;
  DeviceTaintEffect effect = DeviceTaintEffect::kNoSchedule;
  std::optional<int64_t> time_added;  // Unix seconds
  bool operator==(const DeviceTaint&) const = default;
};

struct DeviceToleration {
  enum class Op { kEqual, kExists };
  std::string key;  // empty with kExists: every key
  Op op = Op::kEqual;
  std::string value;
  std::optional<DeviceTaintEffect> effect;  // unset: every effect
  std::optional<int64_t> toleration_seconds;
  bool operator==(const DeviceToleration&) const = default;
};

// Counter amounts by counter name (a CounterSet's `counters`, or what a device consumes).
using Counters = std::map<std::string, Milli>;

struct CounterSet {
  std::string name;
  Counters counters;
  bool operator==(const CounterSet&) const = default;
};

struct DeviceCounterConsumption {
  std::string counter_set;
  Counters counters;
  bool operator==(const DeviceCounterConsumption&) const = default;
};

// Which nodes see a slice or (with perDeviceNodeSelection) a device: exactly one is set.
struct NodeSelection {
  std::optional<std::string> node_name;
  // A v1.NodeSelector: the node must match one of the terms (an empty term matches none).
  std::optional<std::vector<std::vector<SelectorRequirement>>> node_selector;
  bool all_nodes = false;
  bool operator==(const NodeSelection&) const = default;
};

struct Device {
  std::string name;
  std::map<QualifiedName, AttributeValue> attributes;
  std::map<QualifiedName, DeviceCapacity> capacity;
  std::vector<DeviceCounterConsumption> consumes_counters;
  // Set only in a slice with perDeviceNodeSelection.
  std::optional<NodeSelection> node_selection;
  std::vector<DeviceTaint> taints;
  bool binds_to_node = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  bool allow_multiple_allocations = false;
  bool operator==(const Device&) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
  bool operator==(const ResourcePool&) const = default;
};

struct ResourceSlice {
  std::string name;  // metadata.name
  std::string driver;
  ResourcePool pool;
  // Unset when per_device_node_selection: each device then says.
  std::optional<NodeSelection> node_selection;
  bool per_device_node_selection = false;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;
  bool operator==(const ResourceSlice&) const = default;
};

// ---- Classes and claims.

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions, all must match
  // Opaque configuration, kept as JSON text: copied into the allocation as written.
  struct Config {
    std::string driver;
    std::string parameters_json;
    bool operator==(const Config&) const = default;
  };
  std::vector<Config> config;
  std::optional<std::string> extended_resource_name;
  bool operator==(const DeviceClass&) const = default;
};

enum class AllocationMode { kExactCount, kAll };

// ExactDeviceRequest, and a firstAvailable DeviceSubRequest (which has no admin_access).
struct DeviceRequestSpec {
  std::string device_class_name;
  std::vector<std::string> selectors;  // CEL expressions
  AllocationMode allocation_mode = AllocationMode::kExactCount;
  int64_t count = 1;  // with kExactCount
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  std::map<QualifiedName, Milli> capacity_requests;  // capacity.requests
  bool operator==(const DeviceRequestSpec&) const = default;
};

struct DeviceSubRequest {
  std::string name;
  DeviceRequestSpec spec;
  bool operator==(const DeviceSubRequest&) const = default;
};

// A request: either `exactly` or `first_available` (subrequests tried in order).
struct DeviceRequest {
  std::string name;
  std::optional<DeviceRequestSpec> exactly;
  std::vector<DeviceSubRequest> first_available;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: all requests
  std::optional<QualifiedName> match_attribute;
  std::optional<QualifiedName> distinct_attribute;
  bool operator==(const DeviceConstraint&) const = default;
};

struct ClaimConfig {
  std::vector<std::string> requests;  // empty: all
  std::string driver;
  std::string parameters_json;
  bool operator==(const ClaimConfig&) const = default;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<ClaimConfig> config;
  bool operator==(const ResourceClaimSpec&) const = default;
};

// One allocated device (DeviceRequestAllocationResult).
struct AllocationResult {
  std::string request;  // "request" or "request/subrequest"
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::optional<std::string> share_id;
  std::map<QualifiedName, Milli> consumed_capacity;
  // The consumed capacities that the device names without its driver's domain ("memory"):
  // upstream keys consumedCapacity by the device's capacity name as written, so they are
  // written bare too (a driver looks its capacity up by the name it published).
  std::set<QualifiedName> consumed_bare;
  bool operator==(const AllocationResult&) const = default;
};

// One configuration of an allocation (DeviceAllocationConfiguration): a class's or the
// claim's, copied by the allocator for the requests it names.
struct AllocationConfig {
  bool from_class = false;            // source FromClass, else FromClaim
  std::vector<std::string> requests;  // "request" or "request/subrequest"; empty: all
  std::string driver;
  std::string parameters_json;
  bool operator==(const AllocationConfig&) const = default;
};

struct Allocation {
  std::vector<AllocationResult> results;
  // Where the devices can be used; unset means any node.
  std::optional<std::vector<std::vector<SelectorRequirement>>> node_selector;
  std::optional<int64_t> allocation_timestamp;  // Unix seconds
  std::vector<AllocationConfig> config;         // classes' first, then the claim's
  bool operator==(const Allocation&) const = default;
};

// Whether a device of the allocation has binding conditions (its bind waits for them).
inline bool HasBindingConditions(const Allocation& allocation) {
  for (const AllocationResult& r : allocation.results) {
    if (!r.binding_conditions.empty()) return true;
  }
  return false;
}

struct ConsumerReference {
  std::string api_group;
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
  bool operator==(const ConsumerReference&) const = default;
};

struct ResourceClaim {
  std::string name_space;  // metadata.namespace
  std::string name;
  std::string uid;
  int64_t resource_version = 0;
  bool deleting = false;       // metadata.deletionTimestamp is set
  bool has_finalizer = false;  // kClaimFinalizer among metadata.finalizers
  bool any_finalizer = false;  // metadata.finalizers is not empty
  ResourceClaimSpec spec;
  std::optional<Allocation> allocation;
  std::vector<ConsumerReference> reserved_for;
  bool operator==(const ResourceClaim&) const = default;
};

struct ResourceClaimTemplate {
  std::string name_space;
  std::string name;
  ResourceClaimSpec spec;
  bool operator==(const ResourceClaimTemplate&) const = default;
};

// DeviceTaintRule: a taint put on every device its selector picks (all fields optional;
// an empty selector picks every device).
struct DeviceTaintRule {
  std::string name;
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  DeviceTaint taint;
  bool operator==(const DeviceTaintRule&) const = default;
};

// ---- What a pod asks (spec.resourceClaims, containers[].resources.claims).

struct PodClaimRef {
  std::string name;  // the pod's own name for it
  // Exactly one: an existing claim, or a template the resourceclaim controller makes a
  // claim from (its name then comes from pod.status.resourceClaimStatuses).
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const PodClaimRef&) const = default;
};

}  // namespace gantry::dra
