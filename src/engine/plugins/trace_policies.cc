// The baseline policies of the FGD paper's experiment, as its simulator defines them
// (see docs/research/fgd-simulator-notes.md, section 4). Scores are integers in 0..100,
// truncated where the paper truncates, so that ties come out as often as in the paper
// (its simulator gives ties to the first node in a shuffled order: tieBreak: shuffled). c and G are
// the node's free CPU and free GPU milli; C and Gm the largest node's CPU and GPU milli (128 cores
// and 8 GPUs on the openb cluster, the paper's constants).
#include <algorithm>
#include <map>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

// Shared by the policies: the normalizing constants and the node's free amounts.
class TracePolicy : public Plugin, public NodeScorer {
 public:
  explicit TracePolicy(int64_t weight) : weight_(weight) {}
  int64_t weight() const override { return weight_; }
  GpuPacking packing() const override { return GpuPacking::kTight; }

  void OnSessionOpen(Session& s) override {
    max_cpu_ = 1;
    max_gpu_ = 1;
    for (const Node& n : s.cluster().nodes()) {
      max_cpu_ = std::max(max_cpu_, n.allocatable.Get(kCpu));
      max_gpu_ = std::max(max_gpu_, n.allocatable.Get(kGpu));
    }
  }

 protected:
  static Milli CpuFree(const Session& s, NodeId n) { return s.searched_free(n, kCpu); }
  static Milli GpuFree(const Session& s, NodeId n) {
    return static_cast<Milli>(s.searched_node(n).gpu_count) * kGpuMilliWhole -
           s.searched_gpu_used_milli(n);
  }
  static Milli GpuRequestMilli(const GpuChoice& gpus) {
    return static_cast<Milli>(gpus.devices.size()) * gpus.milli_each;
  }

  int64_t weight_;
  Milli max_cpu_ = 1;
  Milli max_gpu_ = 1;
};

class RandomPolicy : public SessionCopyable<RandomPolicy, TracePolicy>, public DeviceChooser {
 public:
  using SessionCopyable::SessionCopyable;
  std::string_view name() const override { return "random"; }
  // An independent random score per feasible node: the best is uniform over them,
  // whatever the session's tie-break.
  int64_t ScoreNode(const Session& s, const TaskSpec&, NodeId, const GpuChoice&) const override {
    return static_cast<int64_t>(s.rng().Uniform(uint64_t{1} << 40));
  }
  // A shared task goes to a device chosen uniformly among those with room.
  bool ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node, GpuChoice* out,
                     int64_t* /*score*/) const override {
    if (!spec.gpu.shared()) return false;
    NodeGpus gpus = s.searched_gpus(node);
    int32_t chosen = -1;
    uint64_t seen = 0;
    int32_t chosen_share = 0;
    for (size_t i = 0; i < gpus.devices.size(); ++i) {
      const int32_t share = SharedFitOn(spec.gpu, gpus, i);
      if (share == 0) continue;
      if (s.rng().Uniform(++seen) == 0) chosen = static_cast<int32_t>(i), chosen_share = share;
    }
    if (chosen < 0) return false;
    out->devices.assign(1, chosen);
    out->milli_each = chosen_share;
    out->memory_each = spec.gpu.memory_mib;
    return true;
  }
};

class DotProdPolicy : public SessionCopyable<DotProdPolicy, TracePolicy> {
 public:
  using SessionCopyable::SessionCopyable;
  std::string_view name() const override { return "dotprod"; }
  // int(100 * (1 - (node . pod) / 2)) with node = (c/C, G/Gm), pod = (r_c/C, r_g/Gm).
  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId n,
                    const GpuChoice& gpus) const override {
    double c = static_cast<double>(CpuFree(s, n)) / static_cast<double>(max_cpu_);
    double g = static_cast<double>(GpuFree(s, n)) / static_cast<double>(max_gpu_);
    double rc = static_cast<double>(spec.requests.Get(kCpu)) / static_cast<double>(max_cpu_);
    double rg = static_cast<double>(GpuRequestMilli(gpus)) / static_cast<double>(max_gpu_);
    return static_cast<int64_t>(100.0 * (1.0 - (c * rc + g * rg) / 2.0));
  }
};

// The kind of GPU task a node runs, for gpuclustering: 0 shared, k for k whole GPUs.
int32_t GpuKind(const TaskSpec& spec) {
  return spec.gpu.shared() ? 0 : spec.gpu.count;
}

class GpuClusteringPolicy : public SessionCopyable<GpuClusteringPolicy, TracePolicy>,
                            public PlacementListener {
 public:
  using SessionCopyable::SessionCopyable;
  std::string_view name() const override { return "gpuclustering"; }

  void OnSessionOpen(Session& s) override {
    TracePolicy::OnSessionOpen(s);
    kinds_.assign(s.cluster().nodes().size(), {});
    known_.assign(s.cluster().nodes().size(), 0);
  }

  // What runs on a node now: allocations only (an evicted task still runs until it ends).
  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice&, int sign) override {
    if (change != StateChange::kAllocate) return;
    const TaskSpec& spec = s.cluster().spec_of(task);
    if (!spec.gpu.wants_gpu()) return;
    Kinds(s, node)[GpuKind(spec)] += sign;
  }

  // base + 25 * (Gm - G) / Gm: base 75 when the node runs only tasks of this kind, 50 when
  // this kind and others, 25 when no GPU tasks, 0 when only other kinds. CPU-only: 0.
  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId n,
                    const GpuChoice&) const override {
    if (!spec.gpu.wants_gpu()) return 0;
    const auto& kinds = Kinds(s, n);
    int32_t mine = 0, others = 0;
    for (const auto& [kind, count] : kinds) {
      if (count <= 0) continue;
      (kind == GpuKind(spec) ? mine : others) += count;
    }
    int64_t base = mine > 0 ? (others > 0 ? 50 : 75) : (others > 0 ? 0 : 25);
    return base + 25 * (max_gpu_ - GpuFree(s, n)) / max_gpu_;
  }

 private:
  std::map<int32_t, int32_t>& Kinds(const Session& s, NodeId n) const {
    if (!known_[n]) {
      for (TaskId t : s.cluster().tasks_on(n)) {
        const TaskSpec& spec = s.cluster().spec_of(t);
        if (spec.gpu.wants_gpu()) kinds_[n][GpuKind(spec)]++;
      }
      known_[n] = 1;
    }
    return kinds_[n];
  }
  mutable std::vector<std::map<int32_t, int32_t>> kinds_;
  mutable std::vector<uint8_t> known_;
};

class GpuPackingPolicy : public SessionCopyable<GpuPackingPolicy, TracePolicy> {
 public:
  using SessionCopyable::SessionCopyable;
  std::string_view name() const override { return "gpupacking"; }

  // An idle node: max(33 - n, n). Else take the first k devices with room in ascending
  // free order: if some is wholly free, max(50 - wholly free taken, 33); if all are partly
  // used, max(100 - sum(free * 100 / 1000) / 10, 50). CPU-only: 0.
  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId n,
                    const GpuChoice&) const override {
    if (!spec.gpu.wants_gpu()) return 0;
    NodeGpus gpus = s.searched_gpus(n);
    const auto count = static_cast<int64_t>(gpus.devices.size());
    if (s.searched_gpu_used_milli(n) == 0) return std::max<int64_t>(33 - count, count);
    order_.resize(gpus.devices.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int32_t>(i);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int32_t a, int32_t b) { return gpus.free_milli[a] < gpus.free_milli[b]; });
    const int32_t need = spec.gpu.shared() ? 1 : spec.gpu.count;
    const int32_t milli = spec.gpu.shared() ? spec.gpu.milli : kGpuMilliWhole;
    int32_t taken = 0, whole_taken = 0;
    int64_t sum = 0;
    for (int32_t i : order_) {
      if (taken == need) break;
      int32_t free = gpus.free_milli[static_cast<size_t>(i)];
      if (free < milli) continue;
      ++taken;
      if (free == kGpuMilliWhole) ++whole_taken;
      sum += free * 100 / kGpuMilliWhole;
    }
    if (whole_taken > 0) return std::max<int64_t>(50 - whole_taken, 33);
    return std::max<int64_t>(100 - sum / 10, 50);
  }

 private:
  mutable std::vector<int32_t> order_;
};

class BestFitPolicy : public SessionCopyable<BestFitPolicy, TracePolicy> {
 public:
  using SessionCopyable::SessionCopyable;
  std::string_view name() const override { return "bestfit"; }

  // int(100 * (1 - (0.5 (c - r_c) / C + 0.5 (G - r_g) / Gm))), then min-max scaled.
  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId n,
                    const GpuChoice& gpus) const override {
    double cpu_left = static_cast<double>(CpuFree(s, n) - spec.requests.Get(kCpu)) /
                      static_cast<double>(max_cpu_);
    double gpu_left =
        static_cast<double>(GpuFree(s, n) - GpuRequestMilli(gpus)) / static_cast<double>(max_gpu_);
    return static_cast<int64_t>(100.0 * (1.0 - (0.5 * cpu_left + 0.5 * gpu_left)));
  }
  bool normalizes() const override { return true; }
  // (s - lo) * 100 / (hi - lo) in integers; all zero when every score is the same.
  void NormalizeScores(std::span<int64_t> scores) const override {
    if (scores.empty()) return;
    auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    int64_t low = *lo, high = *hi;
    for (int64_t& v : scores) v = high == low ? 0 : (v - low) * 100 / (high - low);
  }
};

template <typename Policy>
Result<std::unique_ptr<Plugin>> NewPolicy(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new Policy(weight));
}

}  // namespace

Result<std::unique_ptr<Plugin>> NewRandomPlugin(const PluginConfig& c) {
  return NewPolicy<RandomPolicy>(c);
}
Result<std::unique_ptr<Plugin>> NewDotProdPlugin(const PluginConfig& c) {
  return NewPolicy<DotProdPolicy>(c);
}
Result<std::unique_ptr<Plugin>> NewGpuClusteringPlugin(const PluginConfig& c) {
  return NewPolicy<GpuClusteringPolicy>(c);
}
Result<std::unique_ptr<Plugin>> NewGpuPackingPlugin(const PluginConfig& c) {
  return NewPolicy<GpuPackingPolicy>(c);
}
Result<std::unique_ptr<Plugin>> NewBestFitPlugin(const PluginConfig& c) {
  return NewPolicy<BestFitPolicy>(c);
}

}  // namespace gantry
