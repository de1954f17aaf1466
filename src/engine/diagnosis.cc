// PlacementSearch::DiagnoseNoNode (placement_search.h): why a task fits no node, in words,
// counted per reason over every node of the scope. Only on the path where a search found
// nothing.
#include "engine/placement_search.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace gantry {
namespace {

// kube-scheduler's NodeAffinity PreFilter: when every required term names nodes
// (matchFields metadata.name In), only the nodes named are filtered at all; nullopt when
// some term does not, and an empty set when the terms name no node (their names conflict).
std::optional<std::set<std::string>> NodesNamedBy(const NodeAffinity& affinity) {
  if (affinity.terms.empty()) return std::nullopt;
  std::set<std::string> named;
  for (const std::vector<SelectorRequirement>& term : affinity.terms) {
    std::optional<std::set<std::string>> in_term;  // the requirements' names, intersected
    for (const SelectorRequirement& r : term) {
      if (r.key != kNodeNameField || r.op != SelectorRequirement::Op::kIn) continue;
      std::set<std::string> values(r.values.begin(), r.values.end());
      if (in_term) {
        std::set<std::string> both;
        std::set_intersection(in_term->begin(), in_term->end(), values.begin(), values.end(),
                              std::inserter(both, both.end()));
        values = std::move(both);
      }
      in_term = std::move(values);
    }
    if (!in_term) return std::nullopt;  // this term may match any node
    named.insert(in_term->begin(), in_term->end());
  }
  return named;
}

// DiagnoseNoNode's work, with what it reads passed in: the same code as when it was a free
// function (as a member reading them through `this` it cost 1% more instructions).
std::string Diagnose(const ClusterState& cluster, const WorkingState& state,
                     PlacementSearch& search, const TaskSpec& spec, SpecId spec_id,
                     const SearchScope& scope) {
  // Runs every predicate on every node to count why each one was rejected. Counted by
  // (code, detail) and described once per kind. Kinds are few (a handful per task), so a
  // flat list searched from the last hit beats a map: this runs for every node.
  struct Kind {
    FilterResult result;
    int64_t count = 0;
  };
  std::vector<Kind> kinds;
  size_t last = 0;
  // kube-scheduler's NodeResourcesFit gives every reason a node has (too many pods, and
  // each resource it is short of), where gantry's filter stops at the first: a node
  // rejected for room is looked at again for all of them.
  int64_t pods_full = 0;
  // By index in spec.requests.entries(): a flat count, as this runs for every node.
  const auto& requested = spec.requests.entries();
  std::vector<int64_t> short_of(requested.size(), 0);
  const std::optional<std::set<std::string>> named = NodesNamedBy(spec.affinity);
  int64_t not_named = 0;
  GpuChoice choice;
  PlacementSearch::ChosenScore chosen;
  int64_t looked_at = 0;
  const PlacementSearch::SpecFilter filter = search.FilterFor(spec, spec_id);
  auto count = [&](NodeId n) {
    if (state.searched_node(n).removed) return;  // gone: not a node anyone should hear of
    ++looked_at;
    if (named && !named->count(cluster.node(n).name)) {
      ++not_named;
      return;
    }
    FilterResult r = filter(n);
    if (r.ok() && !search.ChooseDevicesFor(spec, n, &choice, &chosen)) {
      r = FilterResult::Fail(FilterCode::kInsufficientGpus);
    }
    if (r.code == FilterCode::kInsufficient || r.code == FilterCode::kTooManyPods) {
      // A pod's "pods" request (the daemon's ask for one) is the pod count's reason.
      bool full = state.searched_node(n).pods_full();
      bool short_of_any = false;
      for (size_t i = 0; i < requested.size(); ++i) {
        const ResourceVector::Entry& e = requested[i];
        if (e.amount <= state.searched_free(n, e.id)) continue;
        if (e.id == kPods) {
          full = true;
        } else {
          ++short_of[i];
          short_of_any = true;
        }
      }
      if (full) ++pods_full;
      if (full || short_of_any) return;  // else (not expected) the filter's reason counts it
    }
    const auto same = [&](const Kind& k) { return k.result == r; };
    if (last >= kinds.size() || !same(kinds[last])) {
      last = static_cast<size_t>(std::find_if(kinds.begin(), kinds.end(), same) - kinds.begin());
      if (last == kinds.size()) kinds.push_back(Kind{r, 0});
    }
    kinds[last].count++;
  };
  if (scope.nodes != nullptr) {
    for (NodeId n : *scope.nodes) count(n);
  } else {
    for (NodeId n = 0; n < cluster.nodes().size(); ++n) count(n);
  }
  const int64_t total =
      scope.nodes != nullptr ? looked_at : static_cast<int64_t>(cluster.live_node_count());
  if (total == 0 && !scope.future) return "no nodes available to schedule pods";
  std::string out = "0/" + std::to_string(total) + " nodes are available";
  if (scope.future) out += " once releasing tasks end";
  if (named && named->empty()) return out + ": pod affinity terms conflict.";  // its PreFilter
  std::map<std::string, int64_t> counts;
  if (not_named > 0) counts["node(s) didn't satisfy plugin(s) [NodeAffinity]"] = not_named;
  for (const Kind& kind : kinds) {
    counts[kind.result.ok() ? std::string("node(s) would fit but were not scored")
                            : DescribeFilter(kind.result, spec)] += kind.count;
  }
  if (pods_full > 0) {
    counts[DescribeFilter(FilterResult::Fail(FilterCode::kTooManyPods), spec)] += pods_full;
  }
  for (size_t i = 0; i < requested.size(); ++i) {
    if (short_of[i] == 0) continue;
    const ResourceId resource = requested[i].id;
    const int64_t nodes = short_of[i];
    counts[DescribeFilter(FilterResult::Fail(FilterCode::kInsufficient, resource), spec)] += nodes;
  }
  // kube-scheduler's FitError: "0/N nodes are available: " and the "count reason" strings
  // sorted as strings (count first, so "10 ..." before "2 ..."), joined by ", ", and ".".
  std::vector<std::string> reasons;
  reasons.reserve(counts.size());
  for (const auto& [reason, nodes] : counts) {
    reasons.push_back(std::to_string(nodes) + " " + reason);
  }
  std::sort(reasons.begin(), reasons.end());
  if (reasons.empty()) return out;  // no node was looked at
  for (size_t i = 0; i < reasons.size(); ++i) out += (i == 0 ? ": " : ", ") + reasons[i];
  return out + ".";
}

}  // namespace

std::string PlacementSearch::DiagnoseNoNode(const TaskSpec& spec, SpecId spec_id,
                                            const SearchScope& scope) {
  return Diagnose(state_.cluster(), state_, *this, spec, spec_id, scope);
}

}  // namespace gantry
