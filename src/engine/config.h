// The engine's configuration: which actions run, in which order, and which plugins
// with which arguments. Validated before any session opens. The engine receives it parsed:
// yaml/scheduler_config_yaml.h reads it from YAML (scenarios, the daemon's configuration).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/plugin_argument.h"
#include "model/status.h"

namespace gantry {

struct PluginConfig {
  std::string name;
  std::map<std::string, PluginArgument> arguments;
};

struct SchedulerConfig {
  std::vector<std::string> actions;
  std::vector<PluginConfig> plugins;
  // How many feasible nodes to score per task before choosing; 0 scores every node.
  // Candidates are visited best-first (see NodeIndex), so a small number loses little.
  int32_t nodes_to_score = 100;
  // How to choose among nodes with the same best score: the lowest node id (predictable,
  // the default); uniformly at random from the session's seed (as kube-scheduler does);
  // or the first in an order of the nodes shuffled once per session from the seed (ties
  // then go to the same nodes again and again, which packs, as the FGD paper's simulator
  // does with its shuffled node names).
  enum class TieBreak { kLowest, kRandom, kShuffled };
  TieBreak tie_break = TieBreak::kLowest;
  // Evictions for a pending job (preempt, reclaim) start only once it has waited this
  // long, so that an autoscaler may add nodes first.
  int64_t preemption_grace_s = 0;
  // A job at the head of its queue that has waited this long and still does not fit gets
  // a reservation: the nodes it needs take no other job's tasks (the reserve action).
  // 0: no reservations.
  int64_t starvation_s = 0;
  // ---- Defragmentation: the most tasks the defragment action may evict in any hour (its
  // evictions of this session plus ClusterState's memory of the last hour's); 0: none.
  int32_t defragment_evictions_per_hour = 10;

  // enqueue, allocate, backfill with priority, gang, drf, proportion, disruptionbudget,
  // predicates, nodeports, nodevolumelimits, numa, interpodaffinity (weight 2),
  // podtopologyspread (weight 2), binpack, nodeaffinity (weight 2) and tainttoleration
  // (weight 3).
  static SchedulerConfig Default();
};

}  // namespace gantry
