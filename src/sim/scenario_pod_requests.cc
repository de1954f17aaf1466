#include "sim/scenario_pod_requests.h"

#include <utility>
#include <vector>

#include "model/numa.h"
#include "model/pod_requests.h"

namespace gantry {
namespace {

constexpr size_t kMaxContainers = 64;

// One container's requests: whole GPUs only (a share of one is the task's gpuFraction).
Status ReadContainer(const YamlReader& r, const YAML::Node& node, const std::string& field,
                     ResourceVector* out) {
  GANTRY_RETURN_IF_ERROR(r.Resources(node, field, NameSource::kWorkload, out));
  if (out->Get(kGpu) % kMilliPerUnit != 0) {
    return r.Error(node[std::string(kGpuResourceName)], field + ".nvidia.com/gpu",
                   "whole GPUs only; ask for a share of one GPU with gpuFraction");
  }
  return Status::Ok();
}

Status ReadInitContainers(const YamlReader& r, const YAML::Node& list, const std::string& field,
                          std::vector<ContainerResources>* out) {
  GANTRY_RETURN_IF_ERROR(r.List(list, field));
  if (list.size() > kMaxContainers) {
    return r.Error(list, field, "a task has at most 64 init containers");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(list[i], f, {"requests", "restartPolicy"}));
    ContainerResources c;
    if (list[i]["requests"]) {
      GANTRY_RETURN_IF_ERROR(ReadContainer(r, list[i]["requests"], f + ".requests", &c.spec));
    }
    if (list[i]["restartPolicy"]) {
      std::string policy;
      GANTRY_RETURN_IF_ERROR(r.String(list[i]["restartPolicy"], f + ".restartPolicy", &policy));
      if (policy != "Always") {
        return r.Error(list[i]["restartPolicy"], f + ".restartPolicy",
                       "an init container's restartPolicy may only be Always (a sidecar)");
      }
      c.sidecar = true;
    }
    out->push_back(std::move(c));
  }
  return Status::Ok();
}

}  // namespace

Status ParseTaskRequests(const YamlReader& r, const YAML::Node& t, const std::string& field,
                         TaskSpec* spec) {
  PodResources pod;
  const YAML::Node& containers = t["containers"];
  if (containers && t["requests"]) {
    return r.Error(containers, field + ".containers",
                   "give requests or containers, not both (the task asks for the containers' sum)");
  }
  if (t["requests"]) {
    ContainerResources c;
    GANTRY_RETURN_IF_ERROR(ReadContainer(r, t["requests"], field + ".requests", &c.spec));
    pod.containers.push_back(std::move(c));
  } else if (containers) {
    GANTRY_RETURN_IF_ERROR(r.List(containers, field + ".containers"));
    if (containers.size() == 0 || containers.size() > kMaxContainers) {
      return r.Error(containers, field + ".containers", "a task has 1 to 64 containers");
    }
    for (size_t i = 0; i < containers.size(); ++i) {
      ContainerResources c;
      GANTRY_RETURN_IF_ERROR(ReadContainer(
          r, containers[i], field + ".containers[" + std::to_string(i) + "]", &c.spec));
      pod.containers.push_back(std::move(c));
    }
  }
  if (t["initContainers"]) {
    GANTRY_RETURN_IF_ERROR(ReadInitContainers(r, t["initContainers"], field + ".initContainers",
                                              &pod.init_containers));
  }
  if (const YAML::Node& level = t["podResources"]) {
    ResourceVector requests;
    GANTRY_RETURN_IF_ERROR(
        r.Resources(level, field + ".podResources", NameSource::kWorkload, &requests));
    for (const auto& e : requests.entries()) {
      if (!PodLevelResource(e.id)) {
        return r.Error(level[ResourceName(e.id)], field + ".podResources." + ResourceName(e.id),
                       "pod-level resources may only set cpu, memory and hugepages");
      }
    }
    pod.pod_level = std::move(requests);
  }
  if (const YAML::Node& overhead = t["overhead"]) {
    GANTRY_RETURN_IF_ERROR(ReadContainer(r, overhead, field + ".overhead", &pod.overhead));
  }
  std::vector<NumaContainer> numa;
  std::vector<RequestOverflow> overflowed;
  spec->requests = PodRequests(pod, &overflowed);
  if (!overflowed.empty()) {
    return r.Error(t, field,
                   "the sum of the task's requests of " + ResourceName(overflowed.front().id) +
                       " is too large");
  }
  // The containers as the topology manager aligns them (k8s NumaDemandOf): init containers
  // first, each holding its room only if a sidecar, then the app containers.
  for (const ContainerResources& c : pod.init_containers) numa.push_back({c.spec, c.sidecar});
  for (const ContainerResources& c : pod.containers) numa.push_back({c.spec, true});
  if (numa.size() > 1) spec->numa.containers = std::move(numa);
  return Status::Ok();
}

}  // namespace gantry
