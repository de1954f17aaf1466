#include "engine/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "engine/registry.h"
#include "model/limits.h"

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

// A plugin argument as the plugin parses it: a scalar as it is, a list or mapping (such as
// podtopologyspread's defaultConstraints, written as kube-scheduler's arguments are) as
// its YAML text in flow style, which the plugin reads again or refuses as a single value.
std::string ArgumentText(const YAML::Node& value) {
  if (value.IsScalar()) return value.Scalar();
  if (value.IsNull()) return "";
  YAML::Emitter out;
  out << YAML::Flow << value;
  return out.c_str();
}

}  // namespace

SchedulerConfig SchedulerConfig::Default() {
  SchedulerConfig c;
  c.actions = {"enqueue", "allocate", "backfill"};
  for (const char* name : {"priority", "gang", "drf", "proportion", "disruptionbudget",
                           "predicates", "nodeports", "nodevolumelimits", "numa"}) {
    c.plugins.push_back(PluginConfig{name, {}});
  }
  // kube-scheduler's default profile weighs TaintToleration 3 and NodeAffinity,
  // InterPodAffinity and PodTopologySpread 2 against NodeResourcesFit's 1, all on the same
  // scale of scores; binpack stands for the last.
  c.plugins.push_back(PluginConfig{"interpodaffinity", {{"weight", "2"}}});
  c.plugins.push_back(PluginConfig{"podtopologyspread", {{"weight", "2"}}});
  c.plugins.push_back(PluginConfig{"binpack", {}});
  c.plugins.push_back(PluginConfig{"nodeaffinity", {{"weight", "2"}}});
  c.plugins.push_back(PluginConfig{"tainttoleration", {{"weight", "3"}}});
  // Out of every session in which no task names a dataset (see data_locality.cc).
  c.plugins.push_back(PluginConfig{"datalocality", {}});
  return c;
}

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
              for (const auto& akv : pkv.second) {
                pc.arguments[akv.first.Scalar()] = ArgumentText(akv.second);
              }
            } else {
              return Status::Invalid(YamlWhere(source, pkv.first, field + "." + pkey) +
                                     ": unknown field (known: name, arguments)");
            }
          }
        } else {
          return Status::Invalid(YamlWhere(source, p, field) +
                                 ": expected a name or {name, arguments}");
        }
        Status st = MakePlugin(pc).status();
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

Status ValidateSchedulerConfig(const SchedulerConfig& config) {
  for (const std::string& a : config.actions) GANTRY_RETURN_IF_ERROR(MakeAction(a).status());
  std::set<std::string> seen;
  for (const PluginConfig& p : config.plugins) {
    GANTRY_RETURN_IF_ERROR(MakePlugin(p).status());
    if (!seen.insert(p.name).second) {
      return Status::Invalid("plugin " + p.name + " is listed twice");
    }
  }
  if (!seen.count("predicates")) {
    return Status::Invalid(
        "the predicates plugin is required (without it tasks could be placed where they do not "
        "fit)");
  }
  if (config.nodes_to_score < 0) return Status::Invalid("nodesToScore must not be negative");
  if (config.defragment_evictions_per_hour < 0 ||
      config.defragment_evictions_per_hour > kMaxDefragmentEvictionsPerHour) {
    return Status::Invalid(
        "defragmentEvictionsPerHour " + std::to_string(config.defragment_evictions_per_hour) +
        " is out of range [0, " + std::to_string(kMaxDefragmentEvictionsPerHour) + "]");
  }
  return Status::Ok();
}

}  // namespace gantry
