// Why a task fits no node, in words: only on the path where a search found nothing.
#pragma once

#include <string>

#include "engine/placement_search.h"

namespace gantry {

// "0/5000 nodes are available: 4000 insufficient nvidia.com/gpu, 1000 untolerated taint
// ..." over the scope's nodes (every live node when it names none), in the current view.
std::string DiagnoseNoNode(const ClusterState& cluster, const WorkingState& state,
                           PlacementSearch& search, const TaskSpec& spec, SpecId spec_id,
                           const SearchScope& scope);

}  // namespace gantry
