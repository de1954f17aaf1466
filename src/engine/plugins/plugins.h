// Factories of the built-in plugins. Each returns an error naming the plugin and the
// argument when its arguments are wrong. See registry.h for the table of names.
#pragma once

#include <memory>

#include "engine/config.h"
#include "engine/plugin.h"

namespace gantry {

// Gang scheduling: a job is ready when minMember of its tasks are placed; admission needs
// minMember tasks to exist; jobs short of their minimum go first.
Result<std::unique_ptr<Plugin>> NewGangPlugin(const PluginConfig& config);
// Job and task order by priority, higher first.
Result<std::unique_ptr<Plugin>> NewPriorityPlugin(const PluginConfig& config);
// Job order inside a queue by dominant resource share, lower first.
Result<std::unique_ptr<Plugin>> NewDrfPlugin(const PluginConfig& config);
// Queues: deserved shares by weight (water-filled over capacity, lifted to guarantees,
// capped by capabilities), queue order by share, admission and limits.
Result<std::unique_ptr<Plugin>> NewProportionPlugin(const PluginConfig& config);
// Feasibility: cordon, node selector, required affinity, taints, GPU model, resources,
// GPUs per device, pod count.
Result<std::unique_ptr<Plugin>> NewPredicatesPlugin(const PluginConfig& config);
// Scores: prefer the fullest nodes and devices (binpack) or the emptiest (spread).
// Arguments: weight, and a weight per resource name (cpu, memory, nvidia.com/gpu, ...).
Result<std::unique_ptr<Plugin>> NewBinpackPlugin(const PluginConfig& config);
Result<std::unique_ptr<Plugin>> NewSpreadPlugin(const PluginConfig& config);

}  // namespace gantry
