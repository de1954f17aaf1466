// The engine's configuration (engine/config.h) read from YAML: a scenario's `config:`, the
// daemon configuration's `engine:`. Plugin arguments are parsed here, once, into the tree
// the plugins read (engine/plugin_argument.h); the engine never sees YAML.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "engine/config.h"
#include "engine/plugin_argument.h"
#include "model/status.h"

namespace gantry {

// Reads a configuration mapping:
//   actions: [enqueue, allocate, backfill]
//   plugins: [gang, {name: binpack, arguments: {weight: 2, nvidia.com/gpu: 4}}, ...]
//   nodesToScore: 100
//   tieBreak: lowest | random | shuffled
//   preemptionGraceSeconds: 0
//   starvationSeconds: 0
//   defragmentEvictionsPerHour: 10
// Missing keys keep their defaults. Errors name `source`, the line, the column and the
// field, and list the known names when a name is unknown. `node` comes from
// ParseYamlNode (yaml/yaml_load.h), which has refused duplicate keys. An argument that a
// plugin reads as a list or mapping (IsStructuredArgument, engine/registry.h) may be given
// as its YAML text in a string, as kube-scheduler's configurations write some: that text
// is parsed here too.
Status ParseSchedulerConfig(const YAML::Node& node, const std::string& source,
                            SchedulerConfig* out);

// A YAML value as a plugin argument, each part knowing where it was written
// ("SOURCE:LINE:COL", or SOURCE for a node without a position).
PluginArgument PluginArgumentFromYaml(const YAML::Node& node, const std::string& source);
// YAML text (one document) as a plugin argument: a structured argument given as a string,
// or one that code writes as text.
Result<PluginArgument> ParsePluginArgument(std::string_view text, const std::string& source);

}  // namespace gantry
