#include "sim/policies.h"

#include "engine/registry.h"

namespace gantry {

const std::vector<std::string_view>& KnownPolicies() {
  static const std::vector<std::string_view> kPolicies = {
      "random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd", "gantry"};
  return kPolicies;
}

Result<SchedulerConfig> PolicyConfig(std::string_view policy) {
  SchedulerConfig config;
  config.actions = {"allocate"};
  config.nodes_to_score = 0;
  config.tie_break = SchedulerConfig::TieBreak::kShuffled;
  config.plugins.push_back(PluginConfig{"predicates", {}});
  if (policy == "gantry") {
    config.plugins.push_back(PluginConfig{"gantry", {}});
  } else {
    bool known = false;
    for (std::string_view p : KnownPolicies()) known = known || p == policy;
    if (!known) {
      return Status::Invalid("unknown policy \"" + std::string(policy) +
                             "\" (known: " + JoinNames(KnownPolicies()) + ")");
    }
    config.plugins.push_back(PluginConfig{std::string(policy), {}});
  }
  GANTRY_RETURN_IF_ERROR(ValidateSchedulerConfig(config));
  return config;
}

Result<SchedulerConfig> ReplayPolicyConfig(std::string_view policy, int32_t nodes_to_score) {
  auto scoring = PolicyConfig(policy);
  if (!scoring.ok()) return scoring.status();
  SchedulerConfig full = SchedulerConfig::Default();
  const PluginConfig& scorer = scoring->plugins.back();
  bool replaced = false;
  for (PluginConfig& plugin : full.plugins) {
    if (plugin.name != "binpack") continue;
    plugin = scorer;
    replaced = true;
  }
  if (!replaced) full.plugins.push_back(scorer);
  full.tie_break = scoring->tie_break;
  full.nodes_to_score = nodes_to_score;
  return full;
}

}  // namespace gantry
