// A pod spec's rules about where it may run, read from the API's JSON with the API
// server's validation: node affinity (required and preferred, matchFields, Gt/Lt), pod
// affinity and anti-affinity, topology spread constraints and host ports; its scheduling
// gates; and the fields gantry does not implement yet, so that a pod that sets one is
// never placed as if the field were not there. Errors name the pod, the field path and
// the value.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/attachable_volume.h"
#include "model/labels.h"
#include "model/pod_constraints.h"
#include "model/status.h"

namespace gantry::k8s {

// A volume of a pod that names a PersistentVolumeClaim (in the pod's namespace).
struct PodClaimRef {
  size_t index = 0;        // in spec.volumes
  std::string volume;      // the volume's name
  std::string claim;       // the claim's name
  bool ephemeral = false;  // a generic ephemeral volume: the claim is <pod>-<volume>
  bool operator==(const PodClaimRef&) const = default;
  // "spec.volumes[0].persistentVolumeClaim" or "spec.volumes[1].ephemeral", for messages.
  std::string Field() const;
};

// object[key] as a metav1.LabelSelector (matchLabels, matchExpressions with In, NotIn,
// Exists, DoesNotExist); absent or null stays std::nullopt (matches nothing). Errors
// name `at`.key and the field within it.
Status ParseLabelSelector(const nlohmann::json& object, const char* key, const std::string& at,
                          std::optional<LabelSelector>* out);

// spec.affinity.nodeAffinity into *out. `where` prefixes errors ("pod ns/name: spec").
Status ParseNodeAffinity(const nlohmann::json& spec, const std::string& where, NodeAffinity* out);

// A v1.NodeSelector ({"nodeSelectorTerms": [...]}) into out->terms, as in a pod's
// required node affinity or a PersistentVolume's spec.nodeAffinity.required. `at` names
// the selector in errors. (No terms leaves out->terms empty, which NodeAffinity reads as
// no constraint.)
Status ParseNodeSelector(const nlohmann::json& selector, const std::string& at, NodeAffinity* out);

// object[key] as a metav1.LabelSelector into *out; null (or absent) leaves it empty. `at`
// names the object in errors.
Status ParseLabelSelector(const nlohmann::json& object, const char* key, const std::string& at,
                          std::optional<LabelSelector>* out);

// spec.affinity.podAffinity and podAntiAffinity into *out. matchLabelKeys and
// mismatchLabelKeys are merged into each term's selector with the pod's own label values
// (key In / NotIn the value; keys the pod lacks are skipped), as kube-apiserver does.
Status ParsePodAffinity(const nlohmann::json& spec, const std::string& where,
                        const Labels& pod_labels, PodAffinity* out);

// spec.topologySpreadConstraints into *out, matchLabelKeys merged into the selectors.
Status ParseTopologySpread(const nlohmann::json& spec, const std::string& where,
                           const Labels& pod_labels, std::vector<TopologySpreadConstraint>* out);

// The host ports of spec.containers[*].ports (those with a hostPort), as NodePorts reads
// them: protocol TCP when unset, host IP 0.0.0.0 when unset.
Status ParseHostPorts(const nlohmann::json& spec, const std::string& where,
                      std::vector<HostPort>* out);

// spec.schedulingGates' names; a pod with any is not scheduled.
std::vector<std::string> SchedulingGates(const nlohmann::json& spec);

// The claims the pod's volumes name, in volume order: persistentVolumeClaim.claimName, and
// for a generic ephemeral volume the claim its controller makes, <pod>-<volume>.
Status ParsePodClaims(const nlohmann::json& spec, const std::string& where,
                      const std::string& pod_name, std::vector<PodClaimRef>* out);

// The pod's inline disks that VolumeRestrictions keeps from two pods on a node (GCE PD,
// AWS EBS, iSCSI, RBD), sorted, each once.
std::vector<InlineDisk> InlineDisksOf(const nlohmann::json& spec);

// Why gantry cannot place the pod as kube-scheduler would, naming the first field it does
// not implement ("spec.volumes[1].azureDisk ..."), or "" when there is none.
std::string UnsupportedField(const nlohmann::json& spec);

}  // namespace gantry::k8s
