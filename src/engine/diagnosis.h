// Why a task fits no node, in words: only on the path where a search found nothing.
#pragma once

#include <string>

#include "engine/placement_search.h"

namespace gantry {

// In kube-scheduler's words (its FitError) over the scope's nodes (every live node when it
// names none), in the current view: "0/5000 nodes are available: 1000 node(s) had
// untolerated taint(s), 4000 Insufficient free whole GPUs (nvidia.com/gpu)."; with no
// node at all, "no nodes available to schedule pods".
std::string DiagnoseNoNode(const ClusterState& cluster, const WorkingState& state,
                           PlacementSearch& search, const TaskSpec& spec, SpecId spec_id,
                           const SearchScope& scope);

}  // namespace gantry
