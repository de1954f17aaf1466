// The peers' topology objects: Kueue's Topology (kueue.x-k8s.io, spec.levels[].nodeLabel),
// whose levels the daemon takes as its topology levels when its configuration names none,
// and Volcano's HyperNode (topology.volcano.sh/v1alpha1), a tree of node groups by tier
// (model/hypernodes.h), whose tiers are the levels when there is neither.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "model/hypernodes.h"
#include "model/status.h"

namespace gantry::k8s {

struct KueueTopologyInfo {
  ObjectMeta meta;
  std::vector<std::string> levels;  // node label keys, outermost first
};

// Errors name the object and the field: spec.levels must be a list of 1 to
// kMaxTopologyLevels entries, each with a distinct, non-empty nodeLabel.
Result<KueueTopologyInfo> ParseKueueTopology(const nlohmann::json& object);

struct HyperNodeInfo {
  ObjectMeta meta;
  HyperNode hypernode;
};

// spec.tier (1 to kMaxTopologyLevels) and spec.members: each of type Node or HyperNode
// with one selector (exactMatch.name, regexMatch.pattern of at most 1024 bytes, or
// labelMatch); at most kMaxHyperNodeMembers members. Errors name the object and field.
Result<HyperNodeInfo> ParseHyperNode(const nlohmann::json& object);
inline constexpr size_t kMaxHyperNodeMembers = 1024;

}  // namespace gantry::k8s
