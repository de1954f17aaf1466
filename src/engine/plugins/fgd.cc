// fgd: Fragmentation Gradient Descent (Weng et al., USENIX ATC '23). Places a task where
// the node's expected GPU fragmentation (see fragmentation.h) drops most, or grows least,
// and on a shared GPU picks the device that does so. The workload's task types come from
// ClusterState::workload_profile(); without one every node scores alike.
#include <algorithm>

#include "engine/fragmentation.h"
#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {

FgdScorer::FgdScorer(int64_t weight) : weight_(weight) {}

void FgdScorer::OnSessionOpen(Session& s) {
  measure_ = FragmentationMeasure(s.cluster().workload_profile());
  frag_.assign(s.cluster().nodes().size(), 0);
  frag_known_.assign(s.cluster().nodes().size(), 0);
  last_node_ = kNone;
}

void FgdScorer::OnPlacement(const Session& /*s*/, TaskId /*task*/, NodeId node,
                            const GpuChoice& /*gpus*/, int /*sign*/) {
  frag_known_[node] = 0;
  last_node_ = kNone;
}

double FgdScorer::FragOf(const Session& s, NodeId node) const {
  if (!frag_known_[node]) {
    NodeGpus gpus = s.node_gpus(node);
    GpuModelId model = gpus.devices.empty() ? 0 : gpus.devices[0].model;
    frag_[node] = measure_.CachedNodeFragmentation(s.node(node).free.Get(kCpu), model, gpus.free_milli);
    frag_known_[node] = 1;
  }
  return frag_[node];
}

bool FgdScorer::ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node,
                              GpuChoice* out) const {
  const NodeGpus gpus = s.node_gpus(node);
  const double before = FragOf(s, node);
  const Milli cpu_after = s.node(node).free.Get(kCpu) - spec.requests.Get(kCpu);
  const GpuModelId model = gpus.devices.empty() ? 0 : gpus.devices[0].model;
  free_.assign(gpus.free_milli.begin(), gpus.free_milli.end());
  out->Clear();
  int64_t best = -1;
  if (spec.gpu.shared()) {
    // Try every device with room; the first with the highest score wins. Devices of one
    // model with the same free share leave the node in the same state: try one of them.
    int32_t tried[8];
    size_t n_tried = 0;
    for (size_t i = 0; i < free_.size(); ++i) {
      const GpuDevice& device = gpus.devices[i];
      if (spec.gpu.memory_mib == 0 && free_.size() <= 8) {
        if (std::find(tried, tried + n_tried, free_[i]) != tried + n_tried) continue;
      }
      if (!spec.gpu.AllowsModel(device.model)) continue;
      int32_t share = ClusterState::GpuShareOn(spec.gpu, device);
      if (free_[i] < share) continue;
      if (spec.gpu.memory_mib > 0 && device.memory_mib > 0 &&
          gpus.free_memory_mib[i] < spec.gpu.memory_mib) {
        continue;
      }
      if (n_tried < 8) tried[n_tried++] = free_[i];
      free_[i] -= share;
      int64_t score = FgdScore(before, measure_.CachedNodeFragmentation(cpu_after, model, free_));
      free_[i] += share;
      if (score > best) {
        best = score;
        out->devices.assign(1, static_cast<int32_t>(i));
        out->milli_each = share;
        out->memory_each = spec.gpu.memory_mib;
      }
    }
    if (best < 0) return false;
  } else {
    if (!ChooseGpus(spec.gpu, gpus, GpuPacking::kTight, out)) return false;
    for (int32_t d : out->devices) free_[static_cast<size_t>(d)] -= out->milli_each;
    best = FgdScore(before, measure_.CachedNodeFragmentation(cpu_after, model, free_));
  }
  last_node_ = node;
  last_score_ = best;
  return true;
}

int64_t FgdScorer::ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                             const GpuChoice& gpus) const {
  // ChooseDevices just scored this node for this task; reuse it.
  if (last_node_ == node) return last_score_;
  GpuChoice choice;
  ChooseDevices(s, spec, node, &choice);
  (void)gpus;
  return last_score_;
}

Result<std::unique_ptr<Plugin>> NewFgdPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new FgdScorer(weight));
}

}  // namespace gantry
