#include "daemon/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "daemon/http_listener.h"
#include "engine/dra/alignment.h"
#include "k8s/yaml_json.h"
#include "model/limits.h"
#include "yaml/scheduler_config_yaml.h"
#include "yaml/yaml_load.h"

namespace gantry {
namespace {

constexpr double kMaxDurationSeconds = 24 * 3600;
// More would be a mistake: a cluster has a handful of device classes.
constexpr size_t kMaxDeviceClassResources = 64;

Status Scalar(const YAML::Node& node, const std::string& source, const std::string& field,
              std::string* out) {
  if (!node.IsScalar())
    return Status::Invalid(YamlWhere(source, node, field) + ": expected a value");
  *out = node.Scalar();
  return Status::Ok();
}

Status Duration(const YAML::Node& node, const std::string& source, const std::string& field,
                double* out) {
  std::string text;
  GANTRY_RETURN_IF_ERROR(Scalar(node, source, field, &text));
  auto d = ParseDurationSeconds(text);
  if (!d.ok()) return Status::Invalid(YamlWhere(source, node, field) + ": " + d.status().message());
  if (*d <= 0) return Status::Invalid(YamlWhere(source, node, field) + ": must be positive");
  // Longer would be nonsense for these timings, and far longer overflows a clock's count.
  if (*d > kMaxDurationSeconds) {
    return Status::Invalid(YamlWhere(source, node, field) + ": must be at most 24h, got " +
                           QuoteForMessage(text));
  }
  *out = *d;
  return Status::Ok();
}

// A listener's "host:port" (http_listener.h), checked now rather than when it is bound.
Status Address(const YAML::Node& node, const std::string& source, const std::string& field,
               std::string* out) {
  GANTRY_RETURN_IF_ERROR(Scalar(node, source, field, out));
  Result<ListenAddress> parsed = ParseListenAddress(*out);
  if (!parsed.ok()) {
    return Status::Invalid(YamlWhere(source, node, field) + ": " + parsed.status().message() +
                           ", got " + QuoteForMessage(*out));
  }
  return Status::Ok();
}

Status ParseLeaderElection(const YAML::Node& node, const std::string& source,
                           LeaderElectionConfig* out) {
  if (!node.IsMap())
    return Status::Invalid(YamlWhere(source, node, "leaderElection") + ": expected a mapping");
  // Where the timings were given, so that an error points at the field's own line.
  // (Held in optionals: assigning one YAML::Node to another rewrites the tree.)
  std::optional<YAML::Node> lease_at, renew_at, retry_at;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = "leaderElection." + key;
    if (key == "enabled") {
      GANTRY_RETURN_IF_ERROR(ReadYamlBool(kv.second, source, field, &out->enabled));
    } else if (key == "namespace") {
      GANTRY_RETURN_IF_ERROR(Scalar(kv.second, source, field, &out->namespace_));
    } else if (key == "name") {
      GANTRY_RETURN_IF_ERROR(Scalar(kv.second, source, field, &out->name));
    } else if (key == "leaseDuration") {
      GANTRY_RETURN_IF_ERROR(Duration(kv.second, source, field, &out->lease_duration_s));
      lease_at.emplace(kv.second);
    } else if (key == "renewDeadline") {
      GANTRY_RETURN_IF_ERROR(Duration(kv.second, source, field, &out->renew_deadline_s));
      renew_at.emplace(kv.second);
    } else if (key == "retryPeriod") {
      GANTRY_RETURN_IF_ERROR(Duration(kv.second, source, field, &out->retry_period_s));
      retry_at.emplace(kv.second);
    } else {
      return Status::Invalid(YamlWhere(source, kv.first, field) +
                             ": unknown field (enabled, namespace, name, leaseDuration, "
                             "renewDeadline, retryPeriod)");
    }
  }
  if (out->renew_deadline_s >= out->lease_duration_s) {
    const YAML::Node& at = renew_at ? *renew_at : lease_at ? *lease_at : node;
    return Status::Invalid(YamlWhere(source, at, "leaderElection.renewDeadline") +
                           ": must be shorter than leaseDuration");
  }
  if (out->retry_period_s >= out->renew_deadline_s) {
    const YAML::Node& at = retry_at ? *retry_at : renew_at ? *renew_at : node;
    return Status::Invalid(YamlWhere(source, at, "leaderElection.retryPeriod") +
                           ": must be shorter than renewDeadline");
  }
  return Status::Ok();
}

Status ParseAutoscaler(const YAML::Node& node, const std::string& source, AutoscalerConfig* out) {
  if (!node.IsMap())
    return Status::Invalid(YamlWhere(source, node, "autoscaler") + ": expected a mapping");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = "autoscaler." + key;
    if (key == "protectGangs") {
      GANTRY_RETURN_IF_ERROR(ReadYamlBool(kv.second, source, field, &out->protect_gangs));
    } else if (key == "protectGangsFor") {
      std::string text;
      GANTRY_RETURN_IF_ERROR(Scalar(kv.second, source, field, &text));
      auto seconds = text == "0" ? Result<double>(0.0) : ParseDurationSeconds(text);
      if (!seconds.ok()) {
        return Status::Invalid(YamlWhere(source, kv.second, field) + ": " +
                               seconds.status().message());
      }
      if (*seconds != 0 && (*seconds < 1 || *seconds > kMaxProtectGangsForS)) {
        return Status::Invalid(YamlWhere(source, kv.second, field) +
                               ": must be 0 (as long as the gang runs) or 1s to 720h, got " +
                               QuoteForMessage(text));
      }
      out->protect_gangs_for_s = *seconds;
    } else {
      return Status::Invalid(YamlWhere(source, kv.first, field) +
                             ": unknown field (protectGangs, protectGangsFor)");
    }
  }
  return Status::Ok();
}

// deviceClassResources: [{deviceClass, resource, counterPrefix}], each class once.
Status ParseDeviceClassResources(const YAML::Node& node, const std::string& source,
                                 std::vector<dra::ClassResource>* out) {
  const std::string key = "deviceClassResources";
  if (!node.IsSequence() || node.size() > kMaxDeviceClassResources) {
    return Status::Invalid(YamlWhere(source, node, key) + ": expected a list of at most " +
                           std::to_string(kMaxDeviceClassResources) + " entries");
  }
  out->clear();
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    if (!node[i].IsMap()) {
      return Status::Invalid(YamlWhere(source, node[i], at) +
                             ": expected a mapping (deviceClass, resource, counterPrefix)");
    }
    dra::ClassResource entry;
    std::optional<YAML::Node> resource_at;
    std::string resource;
    for (const auto& kv : node[i]) {
      const std::string field = at + "." + kv.first.Scalar();
      if (kv.first.Scalar() == "deviceClass") {
        GANTRY_RETURN_IF_ERROR(Scalar(kv.second, source, field, &entry.device_class));
      } else if (kv.first.Scalar() == "resource") {
        GANTRY_RETURN_IF_ERROR(Scalar(kv.second, source, field, &resource));
        resource_at.emplace(kv.second);
      } else if (kv.first.Scalar() == "counterPrefix") {
        GANTRY_RETURN_IF_ERROR(Scalar(kv.second, source, field, &entry.counter_prefix));
      } else {
        return Status::Invalid(YamlWhere(source, kv.first, field) +
                               ": unknown field (deviceClass, resource, counterPrefix)");
      }
    }
    if (entry.device_class.empty() || !resource_at) {
      return Status::Invalid(YamlWhere(source, node[i], at) +
                             ": deviceClass and resource are required");
    }
    for (const dra::ClassResource& other : *out) {
      if (other.device_class == entry.device_class) {
        return Status::Invalid(YamlWhere(source, node[i], at + ".deviceClass") + ": class " +
                               QuoteForMessage(entry.device_class) + " is mapped twice");
      }
    }
    Result<ResourceId> id = InternResourceName(resource, NameSource::kTrusted);
    if (!id.ok()) {
      return Status::Invalid(YamlWhere(source, *resource_at, at + ".resource") + ": " +
                             id.status().message());
    }
    entry.resource = *id;
    out->push_back(std::move(entry));
  }
  return Status::Ok();
}

// deviceAlignmentAttributes: fully qualified attribute names ("domain/name"), outermost
// first, at most AlignmentPreference::kMaxLevels; a list given replaces the default, and an
// empty one turns the preference off.
Status ParseAlignmentAttributes(const YAML::Node& node, const std::string& source,
                                std::vector<dra::QualifiedName>* out) {
  const std::string key = "deviceAlignmentAttributes";
  if (!node.IsSequence() || node.size() > dra::AlignmentPreference::kMaxLevels) {
    return Status::Invalid(YamlWhere(source, node, key) + ": expected a list of at most " +
                           std::to_string(dra::AlignmentPreference::kMaxLevels) +
                           " device attribute names (domain/name)");
  }
  out->clear();
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string field = key + "[" + std::to_string(i) + "]";
    std::string name;
    GANTRY_RETURN_IF_ERROR(Scalar(node[i], source, field, &name));
    const size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == name.size() ||
        name.find('/', slash + 1) != std::string::npos) {
      return Status::Invalid(YamlWhere(source, node[i], field) +
                             ": expected a qualified attribute name (domain/name), got " +
                             QuoteForMessage(name));
    }
    if (std::find(out->begin(), out->end(), name) != out->end()) {
      return Status::Invalid(YamlWhere(source, node[i], field) + ": duplicate attribute " +
                             QuoteForMessage(name));
    }
    out->push_back(std::move(name));
  }
  return Status::Ok();
}

}  // namespace

Result<double> ParseDurationSeconds(const std::string& text) {
  if (text.empty()) return Status::Invalid("empty duration");
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int digits = 0, dots = 0;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      (text[i] == '.' ? dots : digits)++;
      ++i;
    }
    // A number is digits with at most one '.' ("1.5", ".5", "5."), never "." or "1.2.3".
    if (digits == 0 || dots > 1) {
      return Status::Invalid("bad duration " + QuoteForMessage(text) + " (e.g. 1s, 500ms, 2m)");
    }
    double value = std::strtod(text.substr(start, i - start).c_str(), nullptr);
    if (!std::isfinite(value)) {
      return Status::Invalid("bad duration " + QuoteForMessage(text) + ": too long");
    }
    // The unit runs to the next number; "µs" and "μs" are not ASCII letters.
    size_t unit_start = i;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) && text[i] != '.')
      ++i;
    std::string unit = text.substr(unit_start, i - unit_start);
    double scale;
    if (unit == "ns") {
      scale = 1e-9;
    } else if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") {
      scale = 1e-6;
    } else if (unit == "ms") {
      scale = 1e-3;
    } else if (unit == "s") {
      scale = 1;
    } else if (unit == "m") {
      scale = 60;
    } else if (unit == "h") {
      scale = 3600;
    } else {
      return Status::Invalid("bad duration " + QuoteForMessage(text) + ": unit " +
                             QuoteForMessage(unit) + " is not one of ns, us, ms, s, m, h");
    }
    total += value * scale;
  }
  if (!std::isfinite(total))
    return Status::Invalid("bad duration " + QuoteForMessage(text) + ": too long");
  return total;
}

Status ParseDaemonConfig(const std::string& text, const std::string& source, DaemonConfig* out) {
  auto loaded = ParseYamlNode(text, source);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node root = *loaded;
  // Copied from a named object: GCC 12 at -O3 warns, wrongly, that the temporary of
  // `*out = DaemonConfig{}` may be used uninitialized (-Wmaybe-uninitialized).
  static const DaemonConfig kDefaults;
  *out = kDefaults;
  if (!root || root.IsNull()) return Status::Ok();
  if (!root.IsMap())
    return Status::Invalid(YamlWhere(source, root, "configuration") + ": expected a mapping");
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    if (key == "schedulerName") {
      GANTRY_RETURN_IF_ERROR(Scalar(value, source, key, &out->scheduler_name));
      if (out->scheduler_name.empty())
        return Status::Invalid(YamlWhere(source, value, key) + ": must not be empty");
    } else if (key == "schedulePeriod") {
      GANTRY_RETURN_IF_ERROR(Duration(value, source, key, &out->schedule_period_s));
    } else if (key == "bindWorkers") {
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(ReadYamlInt(value, source, key, 1, 1024, &n));
      out->bind_workers = static_cast<int>(n);
    } else if (key == "volumeBindTimeout") {
      GANTRY_RETURN_IF_ERROR(Duration(value, source, key, &out->volume_bind_timeout_s));
    } else if (key == "deviceBindingTimeout") {
      GANTRY_RETURN_IF_ERROR(Duration(value, source, key, &out->device_binding_timeout_s));
    } else if (key == "listenAddress") {
      GANTRY_RETURN_IF_ERROR(Address(value, source, key, &out->listen_address));
    } else if (key == "pageAddress") {
      GANTRY_RETURN_IF_ERROR(Scalar(value, source, key, &out->page_address));
      if (!out->page_address.empty()) {
        GANTRY_RETURN_IF_ERROR(Address(value, source, key, &out->page_address));
      }
    } else if (key == "leaderElection") {
      GANTRY_RETURN_IF_ERROR(ParseLeaderElection(value, source, &out->leader_election));
    } else if (key == "autoscaler") {
      GANTRY_RETURN_IF_ERROR(ParseAutoscaler(value, source, &out->autoscaler));
    } else if (key == "topologyKeys") {
      if (!value.IsSequence() || value.size() > static_cast<size_t>(kMaxTopologyLevels)) {
        return Status::Invalid(YamlWhere(source, value, key) + ": expected a list of at most " +
                               std::to_string(kMaxTopologyLevels) + " node label keys");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        const std::string field = key + "[" + std::to_string(i) + "]";
        std::string level;
        GANTRY_RETURN_IF_ERROR(Scalar(value[i], source, field, &level));
        const auto& keys = out->topology_keys;
        if (level.empty() || std::find(keys.begin(), keys.end(), level) != keys.end()) {
          return Status::Invalid(
              YamlWhere(source, value[i], field) + ": " +
              (level.empty() ? "empty" : "duplicate level " + QuoteForMessage(level)));
        }
        out->topology_keys.push_back(std::move(level));
      }
    } else if (key == "deviceAlignmentAttributes") {
      GANTRY_RETURN_IF_ERROR(
          ParseAlignmentAttributes(value, source, &out->device_alignment_attributes));
    } else if (key == "workloadProfileHalfLife") {
      std::string text;
      GANTRY_RETURN_IF_ERROR(Scalar(value, source, key, &text));
      auto seconds = text == "0" ? Result<double>(0.0) : ParseDurationSeconds(text);
      if (!seconds.ok()) {
        return Status::Invalid(YamlWhere(source, value, key) + ": " + seconds.status().message());
      }
      if (*seconds < 0 || *seconds > kMaxWorkloadProfileHalfLifeS) {
        return Status::Invalid(YamlWhere(source, value, key) +
                               ": must be 0 (no profile) to 720h, got " + QuoteForMessage(text));
      }
      out->workload_profile_half_life_s = *seconds;
    } else if (key == "engine") {
      GANTRY_RETURN_IF_ERROR(ParseSchedulerConfig(value, source, &out->engine));
    } else if (key == "deviceClassResources") {
      GANTRY_RETURN_IF_ERROR(
          ParseDeviceClassResources(value, source, &out->device_class_resources));
    } else {
      return Status::Invalid(
          YamlWhere(source, kv.first, key) +
          ": unknown field (schedulerName, schedulePeriod, bindWorkers, "
          "volumeBindTimeout, listenAddress, pageAddress, leaderElection, autoscaler, "
          "topologyKeys, "
          "workloadProfileHalfLife, engine, deviceClassResources, deviceAlignmentAttributes, "
          "deviceBindingTimeout)");
    }
  }
  return Status::Ok();
}

std::map<std::string, std::string> GangBindingAnnotations(const AutoscalerConfig& config) {
  if (!config.protect_gangs) return {};
  // Karpenter reads "true" or a Go duration; whole seconds are one ("86400s").
  const int64_t seconds = static_cast<int64_t>(config.protect_gangs_for_s);
  return {{"karpenter.sh/do-not-disrupt", seconds > 0 ? std::to_string(seconds) + "s" : "true"},
          {"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}};
}

Status LoadDaemonConfig(const std::string& path, DaemonConfig* out) {
  auto text = ReadInputFile(path);
  if (!text.ok() && text.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(path + ": cannot read the configuration");
  }
  if (!text.ok()) return text.status();
  return ParseDaemonConfig(*text, path, out);
}

}  // namespace gantry
