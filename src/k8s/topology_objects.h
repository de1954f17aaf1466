// The peers' topology objects: Kueue's Topology (kueue.x-k8s.io, spec.levels[].nodeLabel),
// whose levels the daemon takes as its topology levels when its configuration names none.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "model/status.h"

namespace gantry::k8s {

struct KueueTopologyInfo {
  ObjectMeta meta;
  std::vector<std::string> levels;  // node label keys, outermost first
};

// Errors name the object and the field: spec.levels must be a list of 1 to
// kMaxTopologyLevels entries, each with a distinct, non-empty nodeLabel.
Result<KueueTopologyInfo> ParseKueueTopology(const nlohmann::json& object);

}  // namespace gantry::k8s
