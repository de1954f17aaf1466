// Extended resources backed by DRA (KEP-5004, DRAExtendedResource, GA in Kubernetes 1.37),
// as kube-scheduler 1.37's DynamicResources and NodeResourcesFit plugins treat them
// (pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go,
// .../dynamicresources/extended/cache.go, noderesources/fit.go):
//
//  - Names. A DeviceClass serves the extended resource its spec.extendedResourceName
//    names, and always its implicit name "deviceclass.resource.kubernetes.io/<class>".
//    The API wants an explicit name unique among classes; where two classes name one,
//    upstream picks the class created last, ties to the name sorted first. Gantry's
//    classes carry no creation time: the name sorted first is picked (a divergence only
//    for a cluster that breaks the uniqueness the API asks for).
//  - Which path. A pod's extended resource request (a non-zero whole number) that some
//    class serves is served, on a node whose allocatable has none of it (absent or 0), by
//    DRA; on a node whose allocatable has it, by the device plugin, checked by
//    NodeResourcesFit as any extended resource. NodeResourcesFit skips the DRA-served ones.
//  - The claim. All of a pod's DRA-served resources on the node go into one ResourceClaim,
//    which the scheduler allocates with the pod's own claims (same allocator, same
//    in-flight devices) and creates only at PreBind: generateName "<pod>-extended-resources-",
//    annotation resource.kubernetes.io/extended-resource-claim: "true", the pod as its
//    controller owner; one ExactCount request per container and resource, named
//    "container-<i>-request-<j>" (i the container's index among initContainers then
//    containers, j the resource's index among the container's sorted request names), of
//    the class; then its status (finalizer, allocation, reservedFor the pod), then the
//    pod's status.extendedResourceClaimStatus {requestMappings: [{containerName,
//    resourceName, requestName}], resourceClaimName}.
//
// In the engine the claim has one request per resource ("resource-<k>", k the index in
// TaskSpec::device_backed), asking the pod's whole amount: devices of one class with no
// selectors of the request's own are interchangeable, so the daemon hands the allocated
// devices out to the per-container requests upstream names (daemon/extended_claims.h).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/device_backed.h"
#include "model/dra.h"
#include "model/node.h"
#include "model/task_spec.h"

namespace gantry::dra {

// The name of the claim while it exists only in memory (upstream's specialClaimInMemName,
// not a valid object name on purpose).
inline constexpr std::string_view kExtendedClaimInMemoryName = "<extended-resources>";
// The annotation that marks the claim the scheduler made for a pod's extended resources.
inline constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";

// The class that serves the extended resource `resource`: the one that names it, else the
// one whose implicit name it is; null when none does.
const DeviceClass* ClassForExtendedResource(std::span<const DeviceClass* const> classes,
                                            std::string_view resource);

// spec->device_backed from spec->requests and spec->gpu.count: each extended resource
// (domain-qualified, outside kubernetes.io) asked for that a class serves.
void MarkDeviceBacked(std::span<const DeviceClass* const> classes, TaskSpec* spec);

// The engine's name of the request for spec.device_backed[index].
std::string ExtendedRequestName(size_t index);
// The index into device_backed of a request named by ExtendedRequestName, or nullopt.
std::optional<size_t> ExtendedRequestIndex(std::string_view request);

// The claim of `spec`'s extended resources that `node` serves by DRA (one ExactCount
// request per resource, of its class), or nullopt where the device plugin serves them all.
std::optional<ResourceClaim> ExtendedResourceClaim(const TaskSpec& spec, const Node& node);

}  // namespace gantry::dra
