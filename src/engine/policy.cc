#include "engine/policy.h"

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
  return policy;
}

}  // namespace gantry
