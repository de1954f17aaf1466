#include "engine/diagnosis.h"

#include <algorithm>
#include <map>
#include <vector>

namespace gantry {

std::string DiagnoseNoNode(const ClusterState& cluster, const WorkingState& state,
                           PlacementSearch& search, const TaskSpec& spec, SpecId spec_id,
                           const SearchScope& scope) {
  // Runs every predicate on every node to count why each one was rejected. Counted by
  // (code, detail) and described once per kind, with a node that had it (a taint's text
  // needs its node; the detail is per shape class, and taints are part of the class).
  // Kinds are few (a handful per task), so a flat list searched from the last hit beats
  // a map: this runs for every node.
  struct Kind {
    FilterResult result;
    int64_t count = 0;
    NodeId example = 0;
  };
  std::vector<Kind> kinds;
  size_t last = 0;
  GpuChoice choice;
  PlacementSearch::ChosenScore chosen;
  int64_t looked_at = 0;
  auto count = [&](NodeId n) {
    if (state.node(n).removed) return;  // gone: not a node anyone should hear of
    ++looked_at;
    FilterResult r = search.Filter(spec, spec_id, n);
    if (r.ok() && !search.ChooseDevicesFor(spec, n, &choice, &chosen)) {
      r = FilterResult::Fail(FilterCode::kInsufficientGpus);
    }
    const auto same = [&](const Kind& k) { return k.result == r; };
    if (last >= kinds.size() || !same(kinds[last])) {
      last = static_cast<size_t>(std::find_if(kinds.begin(), kinds.end(), same) - kinds.begin());
      if (last == kinds.size()) kinds.push_back(Kind{r, 0, n});
    }
    kinds[last].count++;
  };
  if (scope.nodes != nullptr) {
    for (NodeId n : *scope.nodes) count(n);
  } else {
    for (NodeId n = 0; n < cluster.nodes().size(); ++n) count(n);
  }
  std::map<std::string, int64_t> counts;
  for (const Kind& kind : kinds) {
    counts[kind.result.ok() ? std::string("would fit but were not scored")
                            : DescribeFilter(kind.result, spec, cluster.node(kind.example))] +=
        kind.count;
  }
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const int64_t total =
      scope.nodes != nullptr ? looked_at : static_cast<int64_t>(cluster.live_node_count());
  std::string out = "0/" + std::to_string(total) + " nodes are available";
  if (scope.future) out += " once releasing tasks end";
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += i == 0 ? ": " : ", ";
    out += std::to_string(sorted[i].second) + " " + sorted[i].first;
  }
  return out;
}

}  // namespace gantry
