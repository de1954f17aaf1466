// What a pod asks of a node, counted as kube-scheduler and the kubelet count it
// (component-helpers' resource.PodRequests, with in-place resize on as in Kubernetes 1.35+):
// the containers summed, an init container's moment counted with the sidecars started
// before it (restartPolicy Always), pod-level spec.resources for cpu, memory and
// hugepages, the pod overhead; and, once the kubelet reports a resize, each the largest of
// what the spec asks, what was allocated and what is actuated (an infeasible resize: of
// the last two only).
//
// One function for every reader of pods: the daemon's (k8s/pod_requests.h reads a pod's
// JSON into PodResources) and the scenario reader's (a task's containers, initContainers,
// podResources and overhead), so that a scenario counts a pod as the cluster does.
#pragma once

#include <optional>
#include <vector>

#include "model/resources.h"

namespace gantry {

// One container as the pod and the kubelet's status give it.
struct ContainerResources {
  ResourceVector spec;                      // its requests, limits standing in for absent ones
  std::optional<ResourceVector> allocated;  // status: allocatedResources
  std::optional<ResourceVector> actuated;   // status: resources.requests
  bool sidecar = false;                     // an init container with restartPolicy Always
};

struct PodResources {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> init_containers;
  // spec.resources (requests, limits standing in for absent ones); only cpu, memory and
  // hugepages count (the API server refuses others).
  std::optional<ResourceVector> pod_level;
  ResourceVector overhead;
  // The kubelet's report: whether any container's or the pod's status gives allocated or
  // actuated resources (then the resize rule applies), the pod's own totals where it
  // writes them, and whether a resize was found infeasible (PodResizePending, Infeasible).
  bool status_reported = false;
  bool pod_status_resources = false;            // status.resources is given
  std::optional<ResourceVector> pod_allocated;  // status.allocatedResources
  std::optional<ResourceVector> pod_actuated;   // status.resources.requests
  bool resize_infeasible = false;
};

// A sum that would overflow: of which resource, and what was being added to it.
struct RequestOverflow {
  enum class Part { kContainer, kInitContainer, kOverhead };
  ResourceId id = 0;
  Part part = Part::kContainer;
  size_t index = 0;  // of the container in its list
};

// The pod's requests. A sum that would overflow keeps the part summed before, and the
// first overflow of each resource goes to *overflowed.
ResourceVector PodRequests(const PodResources& pod, std::vector<RequestOverflow>* overflowed);

// Whether pod-level resources may set the resource: cpu, memory and hugepages-*.
bool PodLevelResource(ResourceId id);

}  // namespace gantry
