#include <algorithm>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

// kube-scheduler's NodeUnschedulable: a pod that tolerates the taint Kubernetes puts on a
// cordoned node tolerates the cordon (DaemonSet pods do).
bool ToleratesCordon(const std::vector<Toleration>& tolerations) {
  const Taint cordon{"node.kubernetes.io/unschedulable", "", TaintEffect::kNoSchedule};
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return t.Tolerates(cordon); });
}

class PredicatesPlugin : public SessionCopyable<PredicatesPlugin>, public NodePredicate {
 public:
  std::string_view name() const override { return "predicates"; }

  FilterResult FilterStatic(const TaskSpec& spec, const Node& node) const override {
    if (node.unschedulable && !ToleratesCordon(spec.tolerations)) {
      return FilterResult::Fail(FilterCode::kUnschedulable);
    }
    if (!MatchesNodeSelector(spec.node_selector, node.labels)) {
      return FilterResult::Fail(FilterCode::kNodeSelector);
    }
    if (!spec.affinity.Matches(node.labels, node.name)) {
      return FilterResult::Fail(FilterCode::kNodeAffinity);
    }
    const Taint* blocking = nullptr;
    if (!ToleratesAll(spec.tolerations, node.taints, &blocking)) {
      return FilterResult::Fail(FilterCode::kTaint,
                                static_cast<uint32_t>(blocking - node.taints.data()));
    }
    return FilterByCapacity(spec.requests, spec.gpu, node);
  }

  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId id) const override {
    const NodeWork& w = s.node(id);
    if (w.max_pods > 0 && static_cast<Milli>(w.tasks + 1) * kMilliPerUnit > w.max_pods) {
      return FilterResult::Fail(FilterCode::kTooManyPods);
    }
    int64_t over = s.FirstShort(spec.requests, id);
    if (over >= 0)
      return FilterResult::Fail(FilterCode::kInsufficient, static_cast<uint32_t>(over));
    const GpuRequest& gpu = spec.gpu;
    if (!gpu.wants_gpu()) return FilterResult::Ok();
    if (!gpu.shared()) {
      if (w.whole_free < gpu.count) return FilterResult::Fail(FilterCode::kInsufficientGpus);
      return FilterResult::Ok();
    }
    // Common case first: any model, share only: the roomiest device decides.
    if (gpu.models.empty() && gpu.memory_mib == 0) {
      return w.max_free_milli >= gpu.milli ? FilterResult::Ok()
                                           : FilterResult::Fail(FilterCode::kNoGpuShareFits);
    }
    NodeGpus gpus = s.node_gpus(id);
    for (size_t i = 0; i < gpus.devices.size(); ++i) {
      if (SharedFitOn(gpu, gpus, i) > 0) return FilterResult::Ok();
    }
    return FilterResult::Fail(FilterCode::kNoGpuShareFits);
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewPredicatesPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new PredicatesPlugin());
}

}  // namespace gantry
