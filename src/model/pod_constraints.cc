#include "model/pod_constraints.h"

#include <algorithm>

namespace gantry {

bool LabelSelector::Matches(const Labels& labels) const {
  if (!MatchesNodeSelector(match_labels, labels)) return false;
  return std::all_of(match_expressions.begin(), match_expressions.end(),
                     [&](const SelectorRequirement& r) { return r.Matches(labels); });
}

void MergeLabelKeys(const std::vector<std::string>& keys, SelectorRequirement::Op op,
                    const Labels& pod_labels, bool unless_present, LabelSelector* selector) {
  auto& exprs = selector->match_expressions;
  for (const std::string& key : keys) {
    const std::string* value = pod_labels.Find(key);
    if (value == nullptr) continue;
    SelectorRequirement r{key, op, {*value}};
    if (unless_present && std::find(exprs.begin(), exprs.end(), r) != exprs.end()) continue;
    exprs.push_back(std::move(r));
  }
}

bool PodAffinityTerm::CoversNamespace(std::string_view ns, const Labels& ns_labels,
                                      std::string_view own) const {
  if (namespaces.empty() && !namespace_selector.has_value()) return ns == own;
  if (std::find(namespaces.begin(), namespaces.end(), ns) != namespaces.end()) return true;
  return Selects(namespace_selector, ns_labels);
}

bool HostPort::ConflictsWith(const HostPort& other) const {
  if (port != other.port || protocol != other.protocol) return false;
  return host_ip.empty() || other.host_ip.empty() || host_ip == other.host_ip;
}

}  // namespace gantry
