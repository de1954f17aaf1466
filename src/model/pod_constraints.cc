#include "model/pod_constraints.h"

#include <algorithm>

namespace gantry {

bool LabelSelector::Matches(const Labels& labels) const {
  if (!MatchesNodeSelector(match_labels, labels)) return false;
  return std::all_of(match_expressions.begin(), match_expressions.end(),
                     [&](const SelectorRequirement& r) { return r.Matches(labels); });
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
