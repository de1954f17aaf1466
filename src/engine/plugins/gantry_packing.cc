// gantry: Gantry's GPU packing policy: FGD's score first (fgd.cc), and a better answer
// than FGD's where FGD sees no difference. FGD's score is a coarse (100-step) view of the
// change in expected fragmentation, so many nodes tie; FGD then takes any of them. Gantry
// breaks those ties so that what later tasks need stays available:
// - a GPU task goes to a node that already runs GPU tasks rather than an idle one, and
//   among those to the node whose free (CPU, GPU) points most nearly the way the task
//   does (cosine similarity, each as a share of the node's capacity), so that CPU and
//   GPUs run out together instead of leaving GPUs stranded without CPU;
// - when it must open an idle node, it opens last the nodes that a rare kind of task
//   needs (a task type that fewer than 5% of the nodes can host at all, such as an 8-GPU
//   task with 120 cores that only the 128-core 8-GPU nodes fit), then the nodes big
//   enough for the workload's largest multi-GPU tasks (in the order FGD would take
//   them: steering by the small task's shape would open the CPU-rich ones first, which
//   big tasks need most), and first the smaller idle nodes, by the same cosine;
// - a task without GPUs goes where free CPU is most plentiful per free GPU share (nodes
//   whose GPUs are all taken first), keeping GPU nodes' CPU for GPU tasks.
// The CPU rules (cosine, CPU-only placement) apply while tasks without GPUs are under
// 24% of the workload's tasks. Above that, CPU is a main demand of its own: gantry then
// orders like FGD (with the idle-node order above), and measures fragmentation as the
// mean of FGD's one-task view and a look-ahead that sees a node's CPU running out before
// its GPUs do (FragmentationMeasure::FillFragmentation).
// On the FGD paper's experiment this allocates at least as much as FGD on every openb pod
// list, and more on most (see docs/research/fgd-simulator-notes.md and the issue notes).
#include <algorithm>
#include <cmath>

#include "engine/filter.h"
#include "engine/fragmentation.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/device_backed.h"
#include "model/int128.h"

namespace gantry {
namespace {

class GantryPackingScorer : public SessionCopyable<GantryPackingScorer, FgdScorer> {
 public:
  using SessionCopyable::SessionCopyable;
  std::string_view name() const override { return "gantry"; }

  void OnSessionOpen(Session& s) override {
    FgdScorer::OnSessionOpen(s);
    const WorkloadProfile& profile = s.cluster().workload_profile();
    int64_t cpu_only = 0;
    largest_gpus_ = 0;
    for (const TaskType& t : profile.types) {
      cpu_only += t.gpu.wants_gpu() ? 0 : t.count;
      largest_gpus_ = std::max(largest_gpus_, t.gpu.count);
    }
    if (largest_gpus_ < 2) largest_gpus_ = 0;  // no multi-GPU tasks: no node is "big"
    cpu_only_minority_ =
        profile.total == 0 || cpu_only * 1000 < profile.total * kCpuOnlyMinorityPermille;
    FindRareCapabilityClasses(s.cluster());
  }

 protected:
  double Frag(Milli cpu_free, GpuModelId model,
              std::span<const int32_t> free_milli) const override {
    const double one_task = measure_.CachedNodeFragmentation(cpu_free, model, free_milli);
    if (cpu_only_minority_) return one_task;
    return 0.5 * (one_task + measure_.FillFragmentation(cpu_free, model, free_milli));
  }

  int64_t ScoreChange(const Session& s, const TaskSpec& spec, NodeId node, double before,
                      double after) const override {
    constexpr int64_t kTieRange = 1'000'000;  // tie-breakers stay below one FGD step
    const int64_t fgd = FgdScore(before, after) * kTieRange;
    const GpuRoom room = RoomOf(s, spec, node);
    if (!room.wanted) {
      if (!cpu_only_minority_) return fgd;
      const Milli gpu_free = room.total - room.used;
      const Milli cpu_free = s.searched_free(node, kCpu);
      // CPU per free milli-GPU; a node without free GPUs is best of all.
      return fgd + (gpu_free <= 0 ? kTieRange - 1
                                  : static_cast<Milli>(std::min<Int128>(
                                        kTieRange - 2, MulDiv(cpu_free, 1000, gpu_free))));
    }
    const double cosine = cpu_only_minority_ ? ShapeCosine(s, spec, node, room) : 0;
    // Nodes in use: [kTieRange / 2, kTieRange); idle nodes below them.
    if (room.used > 0) {
      return fgd + kTieRange / 2 +
             static_cast<int64_t>(cosine * static_cast<double>(kTieRange / 2 - 1));
    }
    if (rare_capability_[s.cluster().node(node).shape_class]) return fgd;
    if (largest_gpus_ > 0 && room.total >= static_cast<Milli>(largest_gpus_) * kGpuMilliWhole) {
      return fgd + 1;
    }
    return fgd + 2 + static_cast<int64_t>(cosine * static_cast<double>(kTieRange / 2 - 3));
  }

 private:
  // Tasks without GPUs under this share (per mille) of the workload: the CPU rules apply.
  // Tuned on the openb lists: 23.5% (cpu235) still gains from them, 25% (cpu250) loses.
  static constexpr int64_t kCpuOnlyMinorityPermille = 240;
  // A task type that at most this share (%) of the nodes can host makes them worth keeping.
  static constexpr int64_t kRareCapabilityPercent = 5;

  // A node's GPUs and what a task takes of them, in milli-GPUs: its GPU devices and the
  // task's GPU request, or, where its GPUs are DRA devices (fgd.cc), what the devices and
  // the task's claims count as.
  struct GpuRoom {
    Milli total = 0;
    Milli used = 0;
    Milli request = 0;
    bool wanted = false;  // the task takes GPUs there
  };
  static GpuRoom RoomOf(const Session& s, const TaskSpec& spec, NodeId node) {
    GpuRoom room;
    if (s.has_dra_gpus(node)) [[unlikely]] {
      room.total = s.allocatable(node, kGpu);
      room.used = room.total - s.searched_free(node, kGpu);
      room.request = DraGpuRequest(spec);
      room.wanted = room.request > 0;
      return room;
    }
    const NodeWork& w = s.searched_node(node);
    room.total = static_cast<Milli>(w.gpu_count) * kGpuMilliWhole;
    room.used = w.gpu_used;
    room.request =
        spec.gpu.shared() ? spec.gpu.milli : static_cast<Milli>(spec.gpu.count) * kGpuMilliWhole;
    room.wanted = spec.gpu.wants_gpu();
    return room;
  }

  // Cosine similarity of the node's free (CPU, GPU) and the task's request, each as a
  // share of the node's capacity.
  static double ShapeCosine(const Session& s, const TaskSpec& spec, NodeId node,
                            const GpuRoom& room) {
    const double cpu_cap = static_cast<double>(std::max<Milli>(1, s.allocatable(node, kCpu)));
    const double gpu_cap = static_cast<double>(std::max<Milli>(1, room.total));
    const double c = static_cast<double>(s.searched_free(node, kCpu)) / cpu_cap;
    const double g = static_cast<double>(room.total - room.used) / gpu_cap;
    const double rc = static_cast<double>(spec.requests.Get(kCpu)) / cpu_cap;
    const double rg = static_cast<double>(room.request) / gpu_cap;
    const double norms = std::sqrt(c * c + g * g) * std::sqrt(rc * rc + rg * rg);
    return norms > 0 ? (c * rc + g * rg) / norms : 0;
  }

  // Marks the node shape classes that can host a GPU task type which at most
  // kRareCapabilityPercent of the schedulable nodes can host. Nodes alike share a class,
  // so this costs classes x types, not nodes x types.
  void FindRareCapabilityClasses(const ClusterState& cluster) {
    rare_capability_.assign(cluster.shape_classes().count(), 0);
    const WorkloadProfile& profile = cluster.workload_profile();
    std::vector<int64_t> nodes_of_class(cluster.shape_classes().count(), 0);
    std::vector<NodeId> example(cluster.shape_classes().count(), kNone);
    int64_t schedulable = 0;
    for (NodeId n = 0; n < cluster.nodes().size(); ++n) {
      const Node& node = cluster.node(n);
      if (node.removed || node.unschedulable) continue;
      ++schedulable;
      ++nodes_of_class[node.shape_class];
      example[node.shape_class] = n;
    }
    std::vector<uint8_t> fits(example.size());
    for (const TaskType& type : profile.types) {
      if (!type.gpu.wants_gpu()) continue;
      int64_t hosts = 0;
      for (uint32_t c = 0; c < example.size(); ++c) {
        fits[c] = example[c] != kNone &&
                  FilterByCapacity(type.requests, type.gpu, cluster.node(example[c])).ok();
        if (fits[c]) hosts += nodes_of_class[c];
      }
      if (hosts == 0 || hosts * 100 > schedulable * kRareCapabilityPercent) continue;
      for (uint32_t c = 0; c < example.size(); ++c) rare_capability_[c] |= fits[c];
    }
  }

  bool cpu_only_minority_ = true;
  int32_t largest_gpus_ = 0;              // the largest multi-GPU request; 0 if none
  std::vector<uint8_t> rare_capability_;  // per shape class
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewGantryPlugin(const PluginConfig& config) {
  auto args = ParseFragmentationArgs(config);
  if (!args.ok()) return args.status();
  return std::unique_ptr<Plugin>(new GantryPackingScorer(args->weight, args->coverage_pct));
}

}  // namespace gantry
