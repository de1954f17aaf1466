// The pod spec's rules about other pods, with Kubernetes' semantics (kube-scheduler's
// InterPodAffinity, PodTopologySpread and NodePorts plugins): label selectors, pod
// affinity and anti-affinity terms, topology spread constraints and host ports. Values
// only; the engine's predicates and scorers apply them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/labels.h"

namespace gantry {

// A metav1.LabelSelector: every matchLabels pair and every matchExpressions requirement
// (In, NotIn, Exists, DoesNotExist) must hold. An empty selector matches every label set.
// Kubernetes' nil selector, which matches nothing, is a std::optional left empty by the
// fields that may have one.
struct LabelSelector {
  Labels match_labels;
  std::vector<SelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;

  bool Matches(const Labels& labels) const;
  bool empty() const { return match_labels.empty() && match_expressions.empty(); }
};

// kube-apiserver's merge of matchLabelKeys (op In) or mismatchLabelKeys (op NotIn) into a
// selector: `key op (the pod's value)` for each key the pod has; keys it lacks are skipped.
// `unless_present`: a requirement already in the selector (one the API server merged
// when it admitted the pod) is not added again.
void MergeLabelKeys(const std::vector<std::string>& keys, SelectorRequirement::Op op,
                    const Labels& pod_labels, bool unless_present, LabelSelector* selector);

// Whether an optional selector matches: no selector matches nothing.
inline bool Selects(const std::optional<LabelSelector>& selector, const Labels& labels) {
  return selector.has_value() && selector->Matches(labels);
}

// One pod affinity or anti-affinity term: the pods that `selector` matches, in the
// namespaces the term names, on nodes with the same value of `topology_key` as the
// candidate. matchLabelKeys and mismatchLabelKeys are merged into `selector` when the
// pod is read (as kube-apiserver does when the pod is created), so they are not kept.
struct PodAffinityTerm {
  std::optional<LabelSelector> selector;  // none: matches no pod
  std::vector<std::string> namespaces;
  // none: only `namespaces`; empty selector: every namespace.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  int32_t weight = 0;  // preferred terms: 1..100; required terms: 0
  bool operator==(const PodAffinityTerm&) const = default;

  // Whether the term looks at pods in namespace `ns` (labelled `ns_labels`), for a pod
  // in namespace `own`: `namespaces` and those `namespace_selector` matches, or `own`
  // alone when the term names neither.
  bool CoversNamespace(std::string_view ns, const Labels& ns_labels, std::string_view own) const;
  // Whether a pod in namespace `ns` with `labels` is one the term means.
  bool MatchesPod(std::string_view ns, const Labels& ns_labels, const Labels& labels,
                  std::string_view own) const {
    return CoversNamespace(ns, ns_labels, own) && Selects(selector, labels);
  }
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required_affinity;
  std::vector<PodAffinityTerm> required_anti_affinity;
  std::vector<PodAffinityTerm> preferred_affinity;  // each with its weight
  std::vector<PodAffinityTerm> preferred_anti_affinity;
  bool operator==(const PodAffinity&) const = default;

  bool empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() &&
           preferred_affinity.empty() && preferred_anti_affinity.empty();
  }
};

// One topology spread constraint (PodTopologySpread). matchLabelKeys are merged into
// `selector` when the pod is read, so they are not kept.
struct TopologySpreadConstraint {
  enum class WhenUnsatisfiable { kDoNotSchedule, kScheduleAnyway };
  int32_t max_skew = 1;  // >= 1
  std::string topology_key;
  WhenUnsatisfiable when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
  std::optional<LabelSelector> selector;  // none: counts no pod
  int32_t min_domains = 0;                // 0: not given (Kubernetes' nil, i.e. 1)
  // nodeAffinityPolicy Honor (the default): only nodes that match the pod's node
  // selector and required node affinity count as domains. Ignore: every node.
  bool honor_node_affinity = true;
  // nodeTaintsPolicy Honor: only nodes whose taints the pod tolerates count. Ignore (the
  // default): every node.
  bool honor_node_taints = false;
  bool operator==(const TopologySpreadConstraint&) const = default;

  bool filters() const { return when_unsatisfiable == WhenUnsatisfiable::kDoNotSchedule; }
};

// A container port with a hostPort (NodePorts): two pods conflict on a node when they
// use the same port and protocol on the same host IP, where 0.0.0.0 (or none) is every IP.
struct HostPort {
  std::string protocol = "TCP";  // TCP, UDP or SCTP
  std::string host_ip;           // "" when unset or 0.0.0.0
  int32_t port = 0;              // 1..65535
  bool operator==(const HostPort&) const = default;

  bool ConflictsWith(const HostPort& other) const;
};

}  // namespace gantry
