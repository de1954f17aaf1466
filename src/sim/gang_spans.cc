#include "sim/gang_spans.h"

#include <algorithm>
#include <set>

#include "engine/topology_domains.h"

namespace gantry {

GangSpanCounter::GangSpanCounter(const ClusterState& cluster) : keys_(cluster.topology_keys()) {
  for (size_t l = 0; l < keys_.size(); ++l) {
    const bool labelled = std::any_of(cluster.nodes().begin(), cluster.nodes().end(),
                                      [&](const Node& n) { return !n.topology[l].empty(); });
    if (labelled) levels_.push_back(Level{static_cast<int>(l)});
  }
}

void GangSpanCounter::Count(const ClusterState& cluster, JobId job) {
  for (Level& level : levels_) {
    std::set<std::string> domains;
    for (TaskId t : cluster.job(job).tasks) {
      const Task& task = cluster.task(t);
      if (task.state != TaskState::kRunning) continue;
      // A node without the level's label is a domain of its own.
      std::string name = TopologyDomainName(cluster.node(task.node), level.index);
      domains.insert(name.empty() ? "node:" + cluster.node(task.node).name : std::move(name));
    }
    if (domains.empty()) continue;
    const auto n = static_cast<int64_t>(domains.size());
    ++level.gangs;
    level.domains += n;
    level.max = std::max(level.max, n);
    level.in_one += n == 1 ? 1 : 0;
  }
}

std::vector<GangSpan> GangSpanCounter::Result() const {
  std::vector<GangSpan> out;
  for (const Level& level : levels_) {
    GangSpan span;
    span.level = keys_[static_cast<size_t>(level.index)];
    span.gangs = level.gangs;
    if (level.gangs > 0) {
      span.mean_domains = static_cast<double>(level.domains) / static_cast<double>(level.gangs);
      span.pct_in_one =
          100.0 * static_cast<double>(level.in_one) / static_cast<double>(level.gangs);
    }
    span.max_domains = level.max;
    out.push_back(std::move(span));
  }
  return out;
}

}  // namespace gantry
