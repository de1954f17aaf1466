// The fields of a Kubernetes pod spec that say where a pod may go, read from a scenario's
// task in Kubernetes' own names and shapes (so that a pod spec's fields can be pasted) and
// validated as kube-apiserver validates a pod (k8s.io/kubernetes pkg/apis/core/validation):
//   namespace, labels                 who the pod is;
//   affinity.nodeAffinity             required terms (matchExpressions, matchFields on
//                                     metadata.name) and weighted preferred terms;
//   affinity.podAffinity, podAntiAffinity
//                                     required and weighted preferred pod affinity terms,
//                                     with matchLabelKeys and mismatchLabelKeys merged into
//                                     the label selector as kube-apiserver merges them when a
//                                     pod is created (key In / NotIn the pod's own value;
//                                     keys the pod lacks are left out);
//   topologySpreadConstraints         with matchLabelKeys merged likewise;
//   ports                             containerPort, hostPort, protocol, hostIP (only the
//                                     entries with a hostPort constrain placement).
// Errors read "FILE:LINE:COL: FIELD: what", quoting the bad value.
#pragma once

#include <string>
#include <vector>

#include "model/task_spec.h"
#include "sim/yaml_reader.h"

namespace gantry {

class PodSpecReader {
 public:
  explicit PodSpecReader(const YamlReader& r) : r_(r) {}

  // A namespace name: a DNS-1123 label (lowercase letters, digits and '-', at most 63).
  Status Namespace(const YAML::Node& node, const std::string& field, std::string* out) const;
  // affinity: {nodeAffinity, podAffinity, podAntiAffinity}. `pod_labels` are the pod's own,
  // for matchLabelKeys and mismatchLabelKeys.
  Status Affinity(const YAML::Node& node, const std::string& field, const Labels& pod_labels,
                  NodeAffinity* node_affinity, PodAffinity* pod_affinity) const;
  // A list of node selector terms, each {matchExpressions, matchFields}, ORed; what
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms holds (and the
  // scenario's own shorthand `nodeAffinity:`).
  Status NodeSelectorTerms(const YAML::Node& node, const std::string& field,
                           std::vector<std::vector<SelectorRequirement>>* out) const;
  Status TopologySpreadConstraints(const YAML::Node& node, const std::string& field,
                                   const Labels& pod_labels,
                                   std::vector<TopologySpreadConstraint>* out) const;
  // Container ports; those with a hostPort go to *out (0.0.0.0 kept as "", every IP).
  Status Ports(const YAML::Node& node, const std::string& field, std::vector<HostPort>* out) const;
  // A metav1.LabelSelector: {matchLabels, matchExpressions} with In, NotIn, Exists and
  // DoesNotExist.
  Status ReadLabelSelector(const YAML::Node& node, const std::string& field,
                           LabelSelector* out) const;

 private:
  Status ReadNodeSelectorTerm(const YAML::Node& node, const std::string& field,
                              std::vector<SelectorRequirement>* out) const;
  // One of a term's matchExpressions (label requirements, Gt and Lt allowed) or, with
  // `on_fields`, of its matchFields (metadata.name only, In or NotIn with one value).
  Status ReadNodeSelectorRequirement(const YAML::Node& node, const std::string& field,
                                     bool on_fields, SelectorRequirement* out) const;
  Status ReadNodeAffinity(const YAML::Node& node, const std::string& field,
                          NodeAffinity* out) const;
  // {requiredDuringSchedulingIgnoredDuringExecution, preferredDuring...} of podAffinity or
  // podAntiAffinity.
  Status ReadPodAffinity(const YAML::Node& node, const std::string& field, const Labels& pod_labels,
                         std::vector<PodAffinityTerm>* required,
                         std::vector<PodAffinityTerm>* preferred) const;
  Status ReadPodAffinityTerm(const YAML::Node& node, const std::string& field,
                             const Labels& pod_labels, PodAffinityTerm* out) const;
  // A list of label keys (matchLabelKeys, mismatchLabelKeys).
  Status ReadLabelKeys(const YAML::Node& node, const std::string& field,
                       std::vector<std::string>* out) const;
  // nodeAffinityPolicy, nodeTaintsPolicy: Honor or Ignore.
  Status ReadInclusionPolicy(const YAML::Node& node, const std::string& field, bool* honor) const;

  const YamlReader& r_;
};

}  // namespace gantry
