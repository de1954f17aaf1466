#include "engine/config.h"

namespace gantry {

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

}  // namespace gantry
