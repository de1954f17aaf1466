// What a pod asks of a node, counted as kube-scheduler and the kubelet count it
// (component-helpers' resource.PodRequests, with in-place resize on as in Kubernetes 1.35+):
// the containers summed, an init container's moment counted with the sidecars started
// before it (restartPolicy Always), pod-level spec.resources for cpu, memory and
// hugepages, the pod overhead; and, once the kubelet reports a resize, each the largest of
// what the spec asks, what was allocated and what is actuated (an infeasible resize: of
// the last two only).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "k8s/resource_list.h"
#include "model/resources.h"
#include "model/status.h"

namespace gantry::k8s {

// The requests of the pod whose spec and status are given. What cannot be read goes to
// *unreadable (its amount in *out is 0) and the first problem, naming `where` and the
// field, to *problem while it is ok. Sums are checked: one that overflows is unreadable.
void PodRequests(const nlohmann::json& spec, const nlohmann::json& status, const std::string& where,
                 ResourceVector* out, UnreadableRequests* unreadable, Status* problem);

}  // namespace gantry::k8s
