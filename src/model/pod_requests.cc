#include "model/pod_requests.h"

#include <algorithm>

#include "model/quantity.h"

namespace gantry {
namespace {

// *peak = the larger of *peak and `r`, resource by resource.
void RaiseTo(const ResourceVector& r, ResourceVector* peak) {
  for (const auto& e : r.entries()) {
    if (e.amount > peak->Get(e.id)) peak->Set(e.id, e.amount);
  }
}

using Part = RequestOverflow::Part;

class Summer {
 public:
  explicit Summer(std::vector<RequestOverflow>* overflowed) : overflowed_(overflowed) {}

  // *sum += add, resource by resource; a sum that would overflow stays, and the first
  // overflow of each resource is noted with what was added (`part`, `index`).
  void Add(const ResourceVector& add, Part part, size_t index, ResourceVector* sum) const {
    for (const auto& e : add.entries()) {
      Milli total = 0;
      if (CheckedAdd(sum->Get(e.id), e.amount, &total)) {
        sum->Set(e.id, total);
        continue;
      }
      const bool known = std::any_of(overflowed_->begin(), overflowed_->end(),
                                     [&](const RequestOverflow& o) { return o.id == e.id; });
      if (!known) overflowed_->push_back({e.id, part, index});
    }
  }

 private:
  std::vector<RequestOverflow>* overflowed_;
};

// Which requests of a container the pod's sum is taken over (component-helpers'
// containerSpecRequests, containerAllocatedRequests, containerActuatedRequests).
enum class Source { kSpec, kAllocated, kActuated };

// One container's requests as `source` takes them: the actuated ones else the allocated
// ones else the spec's; none for a resize found infeasible.
ResourceVector SourceRequests(const ContainerResources& c, Source source, bool infeasible) {
  if (source == Source::kSpec) return c.spec;
  if (source == Source::kActuated && c.actuated) return *c.actuated;
  if (c.allocated) return *c.allocated;
  return infeasible ? ResourceVector() : c.spec;
}

// The sum of the pod's containers, each as `source` takes it: the app containers and the
// sidecars, or, if more, the most any init container's moment takes (it runs alone beside
// the sidecars started before it).
ResourceVector Aggregate(const PodResources& pod, Source source, const Summer& summer) {
  ResourceVector sum;
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    summer.Add(SourceRequests(pod.containers[i], source, pod.resize_infeasible), Part::kContainer,
               i, &sum);
  }
  ResourceVector sidecars, init_peak;
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    const ContainerResources& c = pod.init_containers[i];
    const ResourceVector r = SourceRequests(c, source, pod.resize_infeasible);
    if (c.sidecar) {
      summer.Add(r, Part::kInitContainer, i, &sum);
      summer.Add(r, Part::kInitContainer, i, &sidecars);
      RaiseTo(sidecars, &init_peak);
    } else {
      ResourceVector moment = sidecars;
      summer.Add(r, Part::kInitContainer, i, &moment);
      RaiseTo(moment, &init_peak);
    }
  }
  RaiseTo(init_peak, &sum);
  return sum;
}

}  // namespace

bool PodLevelResource(ResourceId id) {
  return id == kCpu || id == kMemory || ResourceName(id).rfind("hugepages-", 0) == 0;
}

ResourceVector PodRequests(const PodResources& pod, std::vector<RequestOverflow>* overflowed) {
  const Summer summer(overflowed);
  const bool infeasible = pod.resize_infeasible;
  ResourceVector sum = Aggregate(pod, Source::kSpec, summer);
  if (pod.status_reported) {
    // The pod-level status holds the containers' totals where the kubelet writes it.
    ResourceVector allocated, actuated;
    if (pod.pod_allocated && pod.pod_actuated) {
      allocated = *pod.pod_allocated;
      actuated = *pod.pod_actuated;
    } else {
      allocated = Aggregate(pod, Source::kAllocated, summer);
      actuated = Aggregate(pod, Source::kActuated, summer);
    }
    if (infeasible) sum = ResourceVector();
    RaiseTo(allocated, &sum);
    RaiseTo(actuated, &sum);
  }
  // Pod-level resources replace the containers' sum for the resources they may set.
  // Resized, the largest of the spec's (unless infeasible) and the pod's status.
  if (pod.pod_level) {
    ResourceVector effective = *pod.pod_level;
    if (pod.pod_status_resources) {
      if (infeasible) effective = ResourceVector();
      if (pod.pod_actuated) RaiseTo(*pod.pod_actuated, &effective);
      if (pod.pod_allocated) RaiseTo(*pod.pod_allocated, &effective);
    }
    if (!pod.pod_level->empty()) {
      for (const auto& e : effective.entries()) {
        if (PodLevelResource(e.id)) sum.Set(e.id, e.amount);
      }
    }
  }
  summer.Add(pod.overhead, Part::kOverhead, 0, &sum);
  return sum;
}

}  // namespace gantry
