#include "yaml/scheduler_config_yaml.h"

#include <utility>
#include <vector>

#include "engine/registry.h"
#include "model/limits.h"
#include "yaml/yaml_load.h"

namespace gantry {
namespace {

Status ParseStringList(const YAML::Node& node, const std::string& source, const std::string& field,
                       std::vector<std::string>* out) {
  if (!node.IsSequence())
    return Status::Invalid(YamlWhere(source, node, field) + ": expected a list");
  out->clear();
  for (size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsScalar()) {
      return Status::Invalid(YamlWhere(source, node[i], field + "[" + std::to_string(i) + "]") +
                             ": expected a name");
    }
    out->push_back(node[i].Scalar());
  }
  return Status::Ok();
}

// Where a node was written: "SOURCE:LINE:COL", or SOURCE when it has no position.
std::string WhereOf(const YAML::Node& node, const std::string& source) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// The plugin's arguments, parsed once: each a tree; a structured one given as a string
// (kube-scheduler's configurations quote some lists) is that string's YAML.
Status ReadPluginArguments(const std::vector<std::pair<std::string, YAML::Node>>& written,
                           const std::string& source, PluginConfig* pc) {
  for (const auto& [key, value] : written) {
    if (value.IsScalar() && IsStructuredArgument(pc->name, key)) {
      Result<PluginArgument> parsed =
          ParsePluginArgument(value.Scalar(), "plugin " + pc->name + ": argument " + key);
      if (!parsed.ok()) return parsed.status();
      pc->arguments[key] = std::move(parsed).value();
    } else {
      pc->arguments[key] = PluginArgumentFromYaml(value, source);
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseSchedulerConfig(const YAML::Node& node, const std::string& source,
                            SchedulerConfig* out) {
  *out = SchedulerConfig::Default();
  if (!node || node.IsNull()) return Status::Ok();
  if (!node.IsMap())
    return Status::Invalid(YamlWhere(source, node, "config") + ": expected a mapping");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    if (key == "actions") {
      GANTRY_RETURN_IF_ERROR(ParseStringList(value, source, "config.actions", &out->actions));
      for (size_t i = 0; i < out->actions.size(); ++i) {
        Status st = MakeAction(out->actions[i]).status();
        if (!st.ok())
          return st.WithPrefix(
              YamlWhere(source, value[i], "config.actions[" + std::to_string(i) + "]"));
      }
    } else if (key == "plugins") {
      if (!value.IsSequence()) {
        return Status::Invalid(YamlWhere(source, value, "config.plugins") + ": expected a list");
      }
      out->plugins.clear();
      for (size_t i = 0; i < value.size(); ++i) {
        const YAML::Node& p = value[i];
        std::string field = "config.plugins[" + std::to_string(i) + "]";
        PluginConfig pc;
        // Read once the name is known, wherever it stands in the mapping.
        std::vector<std::pair<std::string, YAML::Node>> arguments;
        if (p.IsScalar()) {
          pc.name = p.Scalar();
        } else if (p.IsMap()) {
          for (const auto& pkv : p) {
            const std::string pkey = pkv.first.Scalar();
            if (pkey == "name") {
              if (!pkv.second.IsScalar()) {
                return Status::Invalid(YamlWhere(source, pkv.second, field + ".name") +
                                       ": expected a name");
              }
              pc.name = pkv.second.Scalar();
            } else if (pkey == "arguments") {
              if (!pkv.second.IsMap()) {
                return Status::Invalid(YamlWhere(source, pkv.second, field + ".arguments") +
                                       ": expected a mapping");
              }
              for (const auto& akv : pkv.second)
                arguments.emplace_back(akv.first.Scalar(), akv.second);
            } else {
              return Status::Invalid(YamlWhere(source, pkv.first, field + "." + pkey) +
                                     ": unknown field (known: name, arguments)");
            }
          }
        } else {
          return Status::Invalid(YamlWhere(source, p, field) +
                                 ": expected a name or {name, arguments}");
        }
        Status st = ReadPluginArguments(arguments, source, &pc);
        if (st.ok()) st = MakePlugin(pc).status();
        if (!st.ok()) return st.WithPrefix(YamlWhere(source, p, field));
        out->plugins.push_back(std::move(pc));
      }
    } else if (key == "nodesToScore") {
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(ReadYamlInt(value, source, "config.nodesToScore", 0, INT32_MAX, &n));
      out->nodes_to_score = static_cast<int32_t>(n);
    } else if (key == "tieBreak") {
      std::string v = value.IsScalar() ? value.Scalar() : "";
      if (v == "lowest") {
        out->tie_break = SchedulerConfig::TieBreak::kLowest;
      } else if (v == "random") {
        out->tie_break = SchedulerConfig::TieBreak::kRandom;
      } else if (v == "shuffled") {
        out->tie_break = SchedulerConfig::TieBreak::kShuffled;
      } else {
        return Status::Invalid(YamlWhere(source, value, "config.tieBreak") +
                               ": expected lowest, random or shuffled, got " + QuoteForMessage(v));
      }
    } else if (key == "preemptionGraceSeconds") {
      GANTRY_RETURN_IF_ERROR(ReadYamlInt(value, source, "config.preemptionGraceSeconds", 0,
                                         kMaxConfiguredSeconds, &out->preemption_grace_s));
    } else if (key == "starvationSeconds") {
      GANTRY_RETURN_IF_ERROR(ReadYamlInt(value, source, "config.starvationSeconds", 0,
                                         kMaxConfiguredSeconds, &out->starvation_s));
    } else if (key == "defragmentEvictionsPerHour") {
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(ReadYamlInt(value, source, "config.defragmentEvictionsPerHour", 0,
                                         kMaxDefragmentEvictionsPerHour, &n));
      out->defragment_evictions_per_hour = static_cast<int32_t>(n);
    } else {
      return Status::Invalid(YamlWhere(source, kv.first, "config." + key) +
                             ": unknown field (known: actions, plugins, nodesToScore, tieBreak, "
                             "preemptionGraceSeconds, starvationSeconds, "
                             "defragmentEvictionsPerHour)");
    }
  }
  Status st = ValidateSchedulerConfig(*out);
  return st.ok() ? st : st.WithPrefix(YamlWhere(source, node, "config"));
}

PluginArgument PluginArgumentFromYaml(const YAML::Node& node, const std::string& source) {
  std::string where = WhereOf(node, source);
  if (node.IsScalar())
    return PluginArgument::Scalar(node.Scalar(), IsQuotedScalar(node), std::move(where));
  if (node.IsSequence()) {
    std::vector<PluginArgument> items;
    items.reserve(node.size());
    for (const YAML::Node& item : node) items.push_back(PluginArgumentFromYaml(item, source));
    return PluginArgument::List(std::move(items), std::move(where));
  }
  if (node.IsMap()) {
    std::vector<PluginArgument::Key> keys;
    std::vector<PluginArgument> values;
    for (const auto& kv : node) {
      keys.push_back(PluginArgument::Key{kv.first.Scalar(), WhereOf(kv.first, source)});
      values.push_back(PluginArgumentFromYaml(kv.second, source));
    }
    return PluginArgument::Map(std::move(keys), std::move(values), std::move(where));
  }
  return PluginArgument::Null(std::move(where));
}

Result<PluginArgument> ParsePluginArgument(std::string_view text, const std::string& source) {
  Result<YAML::Node> parsed = ParseYamlNode(text, source);
  if (!parsed.ok()) return parsed.status();
  return PluginArgumentFromYaml(*parsed, source);
}

}  // namespace gantry
