#include "engine/registry.h"

#include <set>

#include "engine/actions/actions.h"
#include "engine/plugins/plugins.h"
#include "model/limits.h"

namespace gantry {
namespace {

struct PluginEntry {
  std::string_view name;
  Result<std::unique_ptr<Plugin>> (*make)(const PluginConfig&);
  // An argument it reads as a list that configurations may give as text (see
  // IsStructuredArgument); empty: none.
  std::string_view structured_argument = {};
};

constexpr PluginEntry kPlugins[] = {
    {"gang", NewGangPlugin},
    {"priority", NewPriorityPlugin},
    {"drf", NewDrfPlugin},
    {"proportion", NewProportionPlugin},
    {"predicates", NewPredicatesPlugin},
    {"binpack", NewBinpackPlugin},
    {"spread", NewSpreadPlugin},
    {"random", NewRandomPlugin},
    {"dotprod", NewDotProdPlugin},
    {"gpuclustering", NewGpuClusteringPlugin},
    {"gpupacking", NewGpuPackingPlugin},
    {"bestfit", NewBestFitPlugin},
    {"fgd", NewFgdPlugin},
    {"gantry", NewGantryPlugin},
    {"nodeports", NewNodePortsPlugin},
    {"nodevolumelimits", NewNodeVolumeLimitsPlugin},
    {"nodeaffinity", NewNodeAffinityPlugin},
    {"tainttoleration", NewTaintTolerationPlugin},
    {"interpodaffinity", NewInterPodAffinityPlugin},
    {"podtopologyspread", NewPodTopologySpreadPlugin, "defaultConstraints"},
    {"disruptionbudget", NewDisruptionBudgetPlugin},
    {"numa", NewNumaPlugin},
    {"datalocality", NewDataLocalityPlugin},
};

struct ActionEntry {
  std::string_view name;
  std::unique_ptr<Action> (*make)();
};

constexpr ActionEntry kActions[] = {
    {"enqueue", NewEnqueueAction},       {"allocate", NewAllocateAction},
    {"backfill", NewBackfillAction},     {"preempt", NewPreemptAction},
    {"reclaim", NewReclaimAction},       {"reserve", NewReserveAction},
    {"defragment", NewDefragmentAction},
};

}  // namespace

const std::vector<std::string_view>& KnownActions() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string_view>();
    for (const auto& e : kActions) v->push_back(e.name);
    return v;
  }();
  return *names;
}

const std::vector<std::string_view>& KnownPlugins() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string_view>();
    for (const auto& e : kPlugins) v->push_back(e.name);
    return v;
  }();
  return *names;
}

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

Result<std::unique_ptr<Action>> MakeAction(std::string_view name) {
  for (const auto& e : kActions) {
    if (e.name == name) return e.make();
  }
  return Status::Invalid("unknown action \"" + std::string(name) +
                         "\" (known: " + JoinNames(KnownActions()) + ")");
}

Result<std::unique_ptr<Plugin>> MakePlugin(const PluginConfig& config) {
  for (const auto& e : kPlugins) {
    if (e.name == config.name) return e.make(config);
  }
  return Status::Invalid("unknown plugin \"" + config.name +
                         "\" (known: " + JoinNames(KnownPlugins()) + ")");
}

bool IsStructuredArgument(std::string_view plugin, std::string_view argument) {
  for (const auto& e : kPlugins) {
    if (e.name == plugin)
      return !e.structured_argument.empty() && e.structured_argument == argument;
  }
  return false;
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
