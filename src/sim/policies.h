// The placement policies the simulator compares, as engine configurations.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"

namespace gantry {

// random, dotprod, gpuclustering, gpupacking, bestfit, fgd (the FGD paper's policies) and
// gantry (Gantry's own default for GPU packing).
const std::vector<std::string_view>& KnownPolicies();

// The configuration that places pods one by one with `policy` as the only scorer,
// scoring every feasible node and breaking ties at random (as the paper's simulator does).
// Errors list the known policies.
Result<SchedulerConfig> PolicyConfig(std::string_view policy);

// For replays, which have queues and gangs: the full default pipeline with `policy` scoring
// in place of binpack, its tie-break, and `nodes_to_score` (0: every node).
Result<SchedulerConfig> ReplayPolicyConfig(std::string_view policy, int32_t nodes_to_score);

}  // namespace gantry
