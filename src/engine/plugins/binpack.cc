// binpack and spread: score a node by how full (binpack) or empty (spread) it would be
// with the task on it, over the resources the task asks for, each with its weight.
#include <map>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/device_backed.h"

namespace gantry {
namespace {

struct ResourceWeight {
  ResourceId id;
  int64_t weight;
};

class UsageScorer : public SessionCopyable<UsageScorer>, public NodeScorer {
 public:
  UsageScorer(bool pack, int64_t weight, std::vector<ResourceWeight> weights)
      : pack_(pack), weight_(weight), weights_(std::move(weights)) {}

  std::string_view name() const override { return pack_ ? "binpack" : "spread"; }
  GpuPacking packing() const override { return pack_ ? GpuPacking::kTight : GpuPacking::kLoose; }
  int64_t weight() const override { return weight_; }

  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId id,
                    const GpuChoice& gpus) const override {
    const NodeWork& w = s.searched_node(id);
    // GPUs that DRA devices give (a node's Node::device_capacity counted as nvidia.com/gpu
    // through the configured class map, in the allocatable table with its devices): the
    // node has no GPU devices of the engine's, and the task's GPUs are what its claims
    // count as, or its nvidia.com/gpu served by DRA.
    const bool dra_gpus = s.has_dra_gpus(id);
    const Milli dra_request = dra_gpus ? DraGpuRequest(spec) : 0;
    // CPU-only tasks score zero on GPU nodes, so that they go to CPU nodes when those
    // have room and leave GPU nodes' CPU and memory to GPU tasks.
    if (!spec.gpu.wants_gpu() && spec.mig_resources.ids.empty() && dra_request == 0 &&
        (w.gpu_count > 0 || dra_gpus)) {
      return 0;
    }
    int64_t sum = 0;
    int64_t weights = 0;
    for (const ResourceWeight& rw : weights_) {
      Milli request;
      Milli used;
      Milli total = s.allocatable(id, rw.id);
      if (rw.id == kGpu && dra_gpus) {
        request = dra_request;
        used = total - s.searched_free(id, kGpu);
      } else if (rw.id == kGpu) {
        request = static_cast<Milli>(gpus.devices.size()) * gpus.milli_each;
        used = s.searched_gpu_used_milli(id);
      } else {
        request = spec.requests.Get(rw.id);
        used = total - s.searched_free(id, rw.id);
      }
      AddMeasure(request, used, total, rw.weight, &sum, &weights);
    }
    if (!spec.mig_resources.ids.empty()) [[unlikely]] {
      AddMigDevices(s, spec, id, &sum, &weights);
    }
    // +1: a feasible node never scores the zero reserved for "wrong kind of node".
    if (weights == 0) return 1;
    return static_cast<int64_t>(sum / weights) + 1;
  }

 private:
  // Adds how full (binpack) or empty (spread) `request` leaves the node, in millionths of
  // `total`, with its weight.
  void AddMeasure(Milli request, Milli used, Milli total, int64_t weight, int64_t* sum,
                  int64_t* weights) const {
    if (request == 0 || total <= 0) return;
    Milli after = std::min(used + request, total);
    Milli measure = pack_ ? after : total - after;
    // measure/total in millionths, in 64 bits: scale both down while the product
    // would overflow (memory in milli-bytes is large); exact for everything smaller.
    while (measure > INT64_MAX / kMaxNodeScore) {
      measure >>= 10;
      total >>= 10;
    }
    *sum += weight * (measure * kMaxNodeScore / total);
    *weights += weight;
  }

  // MIG devices count as GPUs do, with the GPU's weight (unless the weights name them
  // already), so that MIG tasks fill the nodes whose devices are in use.
  void AddMigDevices(const Session& s, const TaskSpec& spec, NodeId id, int64_t* sum,
                     int64_t* weights) const {
    int64_t gpu_weight = 1;
    for (const ResourceWeight& rw : weights_) {
      if (rw.id == kGpu) gpu_weight = rw.weight;
    }
    for (ResourceId mig : spec.mig_resources.ids) {
      bool named = std::any_of(weights_.begin(), weights_.end(),
                               [&](const ResourceWeight& rw) { return rw.id == mig; });
      if (named) continue;
      Milli total = s.allocatable(id, mig);
      AddMeasure(spec.requests.Get(mig), total - s.searched_free(id, mig), total, gpu_weight, sum,
                 weights);
    }
  }

  bool pack_;
  int64_t weight_;
  std::vector<ResourceWeight> weights_;
};

Result<std::unique_ptr<Plugin>> NewUsageScorer(const PluginConfig& config, bool pack) {
  PluginArgs args(config);
  int64_t weight = 1;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  std::map<std::string, int64_t> by_name = {
      {"cpu", 1}, {"memory", 1}, {std::string(kGpuResourceName), 2}};
  for (const std::string& key : args.Rest()) {
    // Resource names: the core ones, hugepages, or a domain-qualified extended resource.
    bool resource_name = key == "cpu" || key == "memory" || key == "pods" ||
                         key == "ephemeral-storage" || key.rfind("hugepages-", 0) == 0 ||
                         key.find('/') != std::string::npos;
    if (!resource_name) {
      return Status::Invalid("plugin " + config.name + ": unknown argument \"" + key +
                             "\" (known: weight, or a resource name such as cpu, memory, " +
                             std::string(kGpuResourceName) + ")");
    }
    int64_t w = 0;
    GANTRY_RETURN_IF_ERROR(args.Int(key, &w));
    by_name[key] = w;
  }
  std::vector<ResourceWeight> weights;
  for (const auto& [name, w] : by_name) {
    if (w > 0) weights.push_back({InternResource(name), w});
  }
  return std::unique_ptr<Plugin>(new UsageScorer(pack, weight, std::move(weights)));
}

}  // namespace

Result<std::unique_ptr<Plugin>> NewBinpackPlugin(const PluginConfig& config) {
  return NewUsageScorer(config, /*pack=*/true);
}

Result<std::unique_ptr<Plugin>> NewSpreadPlugin(const PluginConfig& config) {
  return NewUsageScorer(config, /*pack=*/false);
}

}  // namespace gantry
