#include "engine/registry.h"

#include "engine/actions/actions.h"
#include "engine/plugins/plugins.h"

namespace gantry {
namespace {

struct PluginEntry {
  std::string_view name;
  Result<std::unique_ptr<Plugin>> (*make)(const PluginConfig&);
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
    {"podtopologyspread", NewPodTopologySpreadPlugin},
    {"disruptionbudget", NewDisruptionBudgetPlugin},
    {"numa", NewNumaPlugin},
    {"datalocality", NewDataLocalityPlugin},
};

struct ActionEntry {
  std::string_view name;
  std::unique_ptr<Action> (*make)();
};

constexpr ActionEntry kActions[] = {
    {"enqueue", NewEnqueueAction},
    {"allocate", NewAllocateAction},
    {"backfill", NewBackfillAction},
    {"preempt", NewPreemptAction},
    {"reclaim", NewReclaimAction},
    {"reserve", NewReserveAction},
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

}  // namespace gantry
