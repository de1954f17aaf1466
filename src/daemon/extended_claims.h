// The claim the daemon makes for a pod's extended resources served by DRA, shaped as
// kube-scheduler 1.37 makes it (engine/dra/extended_resources.h has the semantics;
// upstream's createRequestsAndMappings in pkg/scheduler/framework/plugins/dynamicresources/
// extendeddynamicresources.go):
//
//  - Containers are the initContainers then the containers, indexed in that order. A
//    regular container or a sidecar (an init container with restartPolicy Always) lives
//    long; a plain init container lives short and runs before the ones after it.
//  - Per resource (in name order), each long-lived container that asks for it gets a
//    request "container-<i>-request-<j>" (j: the resource's index among the container's
//    sorted request names) for its amount. A short-lived one first reuses the long-lived
//    requests at or after its index, as far as their counts cover its amount, and asks a
//    request of its own for the rest; of the short-lived requests only the largest is
//    kept, the mappings to the others pointing at it.
//  - The requests are sorted by name; the mappings {containerName, resourceName,
//    requestName} are long-lived first, then short-lived, per resource.
//
// The engine allocated one request per resource ("resource-<k>") for the pod's whole
// amount; the allocated devices of one class are interchangeable, so they are handed out
// to that resource's requests in order, each request taking its count.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/dra.h"
#include "model/status.h"

namespace gantry {

// What one container asks for, as the claim's shape needs it.
struct ContainerAsks {
  std::string name;
  bool short_lived = false;                            // an init container that is not a sidecar
  std::vector<std::string> request_names;              // every name of resources.requests, sorted
  std::map<std::string, int64_t, std::less<>> counts;  // whole amounts, by resource name
};

// The pod's containers (initContainers, then containers) read from its JSON; an amount
// that is not a whole number is left out (the API refuses such extended resources).
std::vector<ContainerAsks> ContainersOf(const nlohmann::json& pod);

struct ExtendedResourceMapping {
  std::string container;
  std::string resource;
  std::string request;
  bool operator==(const ExtendedResourceMapping&) const = default;
};

// One resource served by DRA on the node, and its class.
struct ExtendedResourceClass {
  std::string resource;
  std::string device_class;
};

struct ExtendedClaimShape {
  std::vector<dra::DeviceRequest> requests;    // sorted by name
  std::vector<std::string> request_resources;  // per request, the resource it is for
  std::vector<ExtendedResourceMapping> mappings;
};

// The requests and mappings for `resources` (sorted by resource name).
ExtendedClaimShape ShapeExtendedClaim(const std::vector<ContainerAsks>& containers,
                                      const std::vector<ExtendedResourceClass>& resources);

// The engine's allocation (results for requests "resource-<k>", k indexing `resources`)
// with its devices handed out to the shape's requests; an error where the counts differ.
Result<dra::Allocation> AllocationForShape(const dra::Allocation& engine,
                                           const std::vector<ExtendedResourceClass>& resources,
                                           const ExtendedClaimShape& shape);

// The ResourceClaim to create for the pod (metadata and spec; no status).
nlohmann::json ExtendedClaimObject(const std::string& pod_namespace, const std::string& pod_name,
                                   const std::string& pod_uid, const ExtendedClaimShape& shape);

// The pod status patch: status.extendedResourceClaimStatus.
nlohmann::json ExtendedClaimStatusPatch(const std::string& claim_name,
                                        const ExtendedClaimShape& shape);

}  // namespace gantry
