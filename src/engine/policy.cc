#include "engine/policy.h"

#include "engine/plugins/plugins.h"
#include "engine/registry.h"

namespace gantry {

Result<Policy> Policy::Compile(const SchedulerConfig& config) {
  // Names, duplicates, the required predicates plugin, nodesToScore.
  GANTRY_RETURN_IF_ERROR(ValidateSchedulerConfig(config));
  Policy policy;
  policy.config_ = config;
  for (const std::string& name : config.actions) {
    auto action = MakeAction(name);
    if (!action.ok()) return action.status();
    policy.jobs_wait_for_admission_ = policy.jobs_wait_for_admission_ || (*action)->admits_jobs();
    policy.actions_.push_back(std::move(action).value());
  }
  for (const PluginConfig& plugin_config : config.plugins) {
    auto plugin = MakePlugin(plugin_config);
    if (!plugin.ok()) return plugin.status();
    policy.plugins_.push_back(std::move(plugin).value());
  }
  // Last, so that a plugin's own reason comes first: a pod whose spec uses a rule that no
  // configured plugin enforces (host ports without nodeports, ...) waits, with the words.
  std::vector<std::string> names;
  for (const PluginConfig& plugin_config : config.plugins) names.push_back(plugin_config.name);
  if (auto guard = NewUnconfiguredRulesPlugin(names)) policy.plugins_.push_back(std::move(guard));
  return policy;
}

}  // namespace gantry
