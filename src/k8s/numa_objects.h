// NUMA alignment from the Kubernetes API (model/numa.h): the NodeResourceTopology objects
// Node Feature Discovery's topology updater writes (topology.node.k8s.io/v1alpha2, one per
// node, named after it), and what of a pod the kubelet's topology manager aligns (its QoS
// class, its containers).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "k8s/object_meta.h"
#include "model/numa.h"
#include "model/status.h"

namespace gantry::k8s {

struct NodeResourceTopologyInfo {
  ObjectMeta meta;  // its name is its node's
  NodeNuma numa;
};

// The topology manager's policy and scope from `attributes` (topologyManagerPolicy,
// topologyManagerScope, as the updater writes them), else from the deprecated
// `topologyPolicies` (SingleNUMANodeContainerLevel, SingleNUMANodePodLevel, BestEffort,
// Restricted, None); the zones of type Node, each named node-<number>, with their
// resources' allocatable amounts (`available` is not read: see model/numa.h). Zones of
// other types (cores, caches) are left out. Errors name the object and the field.
Result<NodeResourceTopologyInfo> ParseNodeResourceTopology(const nlohmann::json& object);
inline constexpr size_t kMaxZoneResources = 64;

// What the topology manager aligns of a pod, from its spec: Guaranteed when every
// container (init ones too) has cpu and memory limits and the requests equal them (or
// pod-level resources say so), as the API's GetPodQOS; its containers, init containers
// first, when it has more than one. Amounts that cannot be read leave the pod not
// Guaranteed and without containers (DecodePod reports them).
NumaDemand NumaDemandOf(const nlohmann::json& pod_spec);

}  // namespace gantry::k8s
