// fgd: Fragmentation Gradient Descent (Weng et al., USENIX ATC '23). Places a task where
// the node's expected GPU fragmentation (see fragmentation.h) drops most, or grows least,
// and on a shared GPU picks the device that does so. The workload's task types come from
// ClusterState::workload_profile(); without one every node scores alike.
//
// A node whose GPUs are DRA devices has no GPU devices of the engine's (Node::gpus); its
// room for nvidia.com/gpu is what its devices count as (Node::device_capacity, through the
// configured map from DeviceClass to resource). The measure sees those as whole GPUs, as
// many as the capacity counts, with the free room on the fewest of them (DraGpuFree), and a
// task takes its claims' count from them best fit (TakeDraGpus), as the allocator packs
// shared devices. For whole devices (NVIDIA's DRA driver's GPUs) that is exact: every free
// device is alike. For devices shared through consumable capacity or partitions it assumes
// the room is packed, which the allocator's best fit makes likely but not certain. The
// devices' model is unknown to the measure (kDraGpuModel): task types that name models see
// such a node's GPUs as fragments. The devices the claims get are the allocator's choice
// (engine/device_reservations.h); this only chooses the node.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/fragmentation.h"
#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/device_backed.h"

namespace gantry {
namespace {

// No model of any device plugin's: types that name models do not fit it.
constexpr GpuModelId kDraGpuModel = std::numeric_limits<GpuModelId>::max();

// The free share of each of the node's DRA GPUs: the room packed onto the fewest devices.
void DraGpuFree(const Session& s, NodeId node, std::vector<int32_t>* out) {
  const Milli capacity = s.allocatable(node, kGpu);
  Milli free = std::clamp<Milli>(s.searched_free(node, kGpu), 0, capacity);
  const Milli devices = (capacity + kGpuMilliWhole - 1) / kGpuMilliWhole;
  out->assign(static_cast<size_t>(devices), 0);
  for (int32_t& device : *out) {
    device = static_cast<int32_t>(std::min<Milli>(free, kGpuMilliWhole));
    free -= device;
  }
}

// Takes `request` milli-GPUs from `free`, a whole GPU's worth at a time, each from the
// device with the least room that holds it (or the roomiest, when none does).
void TakeDraGpus(Milli request, std::vector<int32_t>* free) {
  while (request > 0) {
    const int32_t part = static_cast<int32_t>(std::min<Milli>(request, kGpuMilliWhole));
    int32_t* best = nullptr;
    int32_t* roomiest = nullptr;
    for (int32_t& device : *free) {
      if (device >= part && (best == nullptr || device < *best)) best = &device;
      if (device > 0 && (roomiest == nullptr || device > *roomiest)) roomiest = &device;
    }
    int32_t* from = best != nullptr ? best : roomiest;
    if (from == nullptr) return;  // more than the node has: the allocator decides
    const int32_t taken = std::min(part, *from);
    *from -= taken;
    request -= taken;
  }
}

}  // namespace

FgdScorer::FgdScorer(int64_t weight, int64_t coverage_pct)
    : weight_(weight), coverage_pct_(coverage_pct) {}

void FgdScorer::OnSessionOpen(Session& s) {
  measure_ = FragmentationMeasure(s.cluster().workload_profile(),
                                  static_cast<double>(coverage_pct_) / 100.0);
  frag_.assign(s.cluster().nodes().size(), 0);
  frag_known_.assign(s.cluster().nodes().size(), 0);
}

void FgdScorer::OnStateChange(const Session& /*s*/, StateChange /*change*/, TaskId /*task*/,
                              NodeId node, const GpuChoice& /*gpus*/, int /*sign*/) {
  frag_known_[node] = 0;
}

double FgdScorer::Frag(Milli cpu_free, GpuModelId model,
                       std::span<const int32_t> free_milli) const {
  return measure_.CachedNodeFragmentation(cpu_free, model, free_milli);
}

GpuModelId FgdScorer::NodeFree(const Session& s, NodeId node, std::vector<int32_t>* free) const {
  const NodeGpus gpus = s.searched_gpus(node);
  if (gpus.devices.empty() && s.has_dra_gpus(node)) [[unlikely]] {
    DraGpuFree(s, node, free);
    return kDraGpuModel;
  }
  free->assign(gpus.free_milli.begin(), gpus.free_milli.end());
  return gpus.devices.empty() ? 0 : gpus.devices[0].model;
}

double FgdScorer::FragOf(const Session& s, NodeId node) const {
  // The cache holds the room a task may take now; a search onto room being released
  // (Session::searching_future) sees another state of the node, so it is not cached.
  const bool cached = !s.searching_future();
  if (!cached || !frag_known_[node]) {
    const GpuModelId model = NodeFree(s, node, &free_);
    const double frag = Frag(s.searched_free(node, kCpu), model, free_);
    if (!cached) return frag;
    frag_[node] = frag;
    frag_known_[node] = 1;
  }
  return frag_[node];
}

int64_t FgdScorer::ScoreChoice(const Session& s, const TaskSpec& spec, NodeId node,
                               const GpuChoice& choice) const {
  const double before = FragOf(s, node);
  const Milli cpu_after = s.searched_free(node, kCpu) - spec.requests.Get(kCpu);
  const GpuModelId model = NodeFree(s, node, &free_);
  if (model == kDraGpuModel) [[unlikely]] {
    TakeDraGpus(DraGpuRequest(spec), &free_);
  } else {
    for (int32_t d : choice.devices) free_[static_cast<size_t>(d)] -= choice.milli_each;
  }
  return ScoreChange(s, spec, node, before, Frag(cpu_after, model, free_));
}

int64_t FgdScorer::ScoreChange(const Session& /*s*/, const TaskSpec& /*spec*/, NodeId /*node*/,
                               double before, double after) const {
  return FgdScore(before, after);
}

bool FgdScorer::ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node, GpuChoice* out,
                              int64_t* score) const {
  const NodeGpus gpus = s.searched_gpus(node);
  const double before = FragOf(s, node);
  const Milli cpu_after = s.searched_free(node, kCpu) - spec.requests.Get(kCpu);
  const GpuModelId model = gpus.devices.empty() ? 0 : gpus.devices[0].model;
  free_.assign(gpus.free_milli.begin(), gpus.free_milli.end());
  out->Clear();
  int64_t best = -1;
  if (spec.gpu.shared()) {
    // Try every device with room; the first with the highest score wins. Devices with the
    // same free share leave the node in the same state: try the first of them only.
    int32_t tried[8];
    size_t n_tried = 0;
    for (size_t i = 0; i < free_.size(); ++i) {
      const bool dedupe = spec.gpu.memory_mib == 0 && free_.size() <= 8;
      if (dedupe && std::find(tried, tried + n_tried, free_[i]) != tried + n_tried) continue;
      const int32_t share = SharedFitOn(spec.gpu, gpus, i);
      if (share == 0) continue;
      if (dedupe) tried[n_tried++] = free_[i];
      free_[i] -= share;
      int64_t score = ScoreChange(s, spec, node, before, Frag(cpu_after, model, free_));
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
    best = ScoreChoice(s, spec, node, *out);  // on a node with DRA GPUs, what claims take
  }
  *score = best;
  return true;
}

int64_t FgdScorer::ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                             const GpuChoice& gpus) const {
  // Devices another scorer chose (when fgd chose them, ChooseDevices gave the score).
  return ScoreChoice(s, spec, node, gpus);
}

Result<FragmentationArgs> ParseFragmentationArgs(const PluginConfig& config) {
  PluginArgs args(config);
  FragmentationArgs out;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &out.weight));
  GANTRY_RETURN_IF_ERROR(args.Int("coverage", &out.coverage_pct));
  if (out.coverage_pct < 1 || out.coverage_pct > 100) {
    return Status::Invalid("plugin " + config.name +
                           ": argument coverage must be a percentage in 1..100");
  }
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return out;
}

Result<std::unique_ptr<Plugin>> NewFgdPlugin(const PluginConfig& config) {
  auto args = ParseFragmentationArgs(config);
  if (!args.ok()) return args.status();
  return std::unique_ptr<Plugin>(new FgdScorer(args->weight, args->coverage_pct));
}

}  // namespace gantry
