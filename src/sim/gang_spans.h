// How many topology domains a gang spans when it starts, per level: what topology-aware
// placement is for (a gang inside one leaf trains faster than one over four), measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"

namespace gantry {

struct GangSpan {
  std::string level;  // a label key of ClusterState::topology_keys()
  int64_t gangs = 0;  // gangs (minMember > 1) counted once each, when they started
  double mean_domains = 0;
  int64_t max_domains = 0;
  double pct_in_one = 0;  // of the gangs, those inside one domain of the level
};

class GangSpanCounter {
 public:
  // The levels that some node of `cluster` has a label of.
  explicit GangSpanCounter(const ClusterState& cluster);
  // Counts the job's running tasks now: call once, when its gang has started.
  void Count(const ClusterState& cluster, JobId job);
  // Per level, outermost first; empty when no node has a topology label.
  std::vector<GangSpan> Result() const;

 private:
  struct Level {
    int index = 0;
    int64_t gangs = 0, domains = 0, max = 0, in_one = 0;
  };
  std::vector<std::string> keys_;
  std::vector<Level> levels_;
};

}  // namespace gantry
