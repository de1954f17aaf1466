#include "sim/policies.h"

#include "engine/registry.h"

namespace gantry {

const std::vector<std::string_view>& KnownPolicies() {
  static const std::vector<std::string_view> kPolicies = {"random", "dotprod", "gpuclustering", "gpupacking",
                                                          "bestfit", "fgd", "gantry"};
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
      return Status::Invalid("unknown policy \"" + std::string(policy) + "\" (known: " +
                             JoinNames(KnownPolicies()) + ")");
    }
    config.plugins.push_back(PluginConfig{std::string(policy), {}});
  }
  GANTRY_RETURN_IF_ERROR(ValidateSchedulerConfig(config));
  return config;
}

}  // namespace gantry
