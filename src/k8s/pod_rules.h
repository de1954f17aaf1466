// A pod spec's rules about where it may run, read from the API's JSON with the API
// server's validation: node affinity (required and preferred, matchFields, Gt/Lt), pod
// affinity and anti-affinity, topology spread constraints and host ports; its scheduling
// gates; and the fields gantry does not implement yet, so that a pod that sets one is
// never placed as if the field were not there. Errors name the pod, the field path and
// the value.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/labels.h"
#include "model/pod_constraints.h"
#include "model/status.h"

namespace gantry::k8s {

// spec.affinity.nodeAffinity into *out. `where` prefixes errors ("pod ns/name: spec").
Status ParseNodeAffinity(const nlohmann::json& spec, const std::string& where, NodeAffinity* out);

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

// Why gantry cannot place the pod as kube-scheduler would, naming the first field it does
// not implement ("spec.resourceClaims: ..."), or "" when there is none.
std::string UnsupportedField(const nlohmann::json& spec);

}  // namespace gantry::k8s
