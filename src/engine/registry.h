// The fixed table of actions and plugins a configuration may name. It is a constant
// table, not a registry that code adds to at run time.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/action.h"
#include "engine/config.h"
#include "engine/plugin.h"

namespace gantry {

const std::vector<std::string_view>& KnownActions();
const std::vector<std::string_view>& KnownPlugins();
// "a, b, c"
std::string JoinNames(const std::vector<std::string_view>& names);

// Makes a fresh action or plugin. Errors list the known names, or say which argument
// of the plugin is wrong.
Result<std::unique_ptr<Action>> MakeAction(std::string_view name);
Result<std::unique_ptr<Plugin>> MakePlugin(const PluginConfig& config);

// Checks a configuration's names and plugin arguments (each plugin parses its own), that
// no plugin is listed twice and that predicates is there. Readers of configurations
// (yaml/scheduler_config_yaml.h) and Policy::Compile call it.
Status ValidateSchedulerConfig(const SchedulerConfig& config);

// Whether the plugin reads the argument as a list or mapping that configurations written
// for kube-scheduler may give as text in a string (podtopologyspread's defaultConstraints):
// a configuration reader that finds a scalar there parses its text into the tree.
bool IsStructuredArgument(std::string_view plugin, std::string_view argument);

}  // namespace gantry
