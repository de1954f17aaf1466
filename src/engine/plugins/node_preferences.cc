// Scores from what a pod prefers of a node, as kube-scheduler's default profile scores them:
//   nodeaffinity     (NodeAffinity's Score) the sum of the weights of the pod's preferred
//                    node affinity terms that the node matches, scaled so that the best
//                    candidate scores kMaxNodeScore;
//   tainttoleration  (TaintToleration's Score) the node's PreferNoSchedule taints that the
//                    pod does not tolerate, counted and reversed: the fewest score most.
// Both normalize as kube-scheduler's DefaultNormalizeScore does, over the candidates of
// one task, to [0, kMaxNodeScore] where kube-scheduler scales to [0, 100]. A pod they can
// tell no node apart for (no preferred terms; no node with a PreferNoSchedule taint) is
// not scored by them at all, as kube-scheduler's PreScore skips it.
#include <algorithm>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/int128.h"

namespace gantry {
namespace {

// kube-scheduler's helper.DefaultNormalizeScore: each score times the maximum over the
// highest; reversed, the maximum less that. All zero: all zero, or reversed all the maximum.
void DefaultNormalizeScore(std::span<int64_t> scores, bool reverse) {
  int64_t highest = 0;
  for (int64_t score : scores) highest = std::max(highest, score);
  for (int64_t& score : scores) {
    const int64_t scaled =
        highest == 0 ? 0 : static_cast<int64_t>(MulDiv(kMaxNodeScore, score, highest));
    score = reverse ? kMaxNodeScore - scaled : scaled;
  }
}

class NodeAffinityScorer : public SessionCopyable<NodeAffinityScorer>, public NodeScorer {
 public:
  explicit NodeAffinityScorer(int64_t weight) : weight_(weight) {}
  std::string_view name() const override { return "nodeaffinity"; }
  int64_t weight() const override { return weight_; }
  bool Scores(const Session& /*s*/, const TaskSpec& spec) const override {
    return !spec.affinity.preferred.empty();
  }
  bool normalizes() const override { return true; }

  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId id,
                    const GpuChoice& /*gpus*/) const override {
    const Node& node = s.cluster().node(id);
    return spec.affinity.PreferredWeight(node.labels, node.name);
  }
  void NormalizeScores(std::span<int64_t> scores) const override {
    DefaultNormalizeScore(scores, /*reverse=*/false);
  }

 private:
  int64_t weight_;
};

class TaintTolerationScorer : public SessionCopyable<TaintTolerationScorer>, public NodeScorer {
 public:
  explicit TaintTolerationScorer(int64_t weight) : weight_(weight) {}
  std::string_view name() const override { return "tainttoleration"; }
  int64_t weight() const override { return weight_; }
  bool normalizes() const override { return true; }

  void OnSessionOpen(Session& s) override {
    const auto& nodes = s.cluster().nodes();
    any_preference_ = std::any_of(nodes.begin(), nodes.end(), [](const Node& node) {
      return std::any_of(node.taints.begin(), node.taints.end(), [](const Taint& taint) {
        return taint.effect == TaintEffect::kPreferNoSchedule;
      });
    });
  }
  // Every node scores alike while none has a PreferNoSchedule taint.
  bool Scores(const Session& /*s*/, const TaskSpec& /*spec*/) const override {
    return any_preference_;
  }

  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId id,
                    const GpuChoice& /*gpus*/) const override {
    int64_t untolerated = 0;
    for (const Taint& taint : s.cluster().node(id).taints) {
      if (taint.effect != TaintEffect::kPreferNoSchedule) continue;
      // A toleration for another effect does not count; one without an effect does
      // (Toleration::Tolerates checks both).
      const bool tolerated =
          std::any_of(spec.tolerations.begin(), spec.tolerations.end(),
                      [&](const Toleration& toleration) { return toleration.Tolerates(taint); });
      untolerated += tolerated ? 0 : 1;
    }
    return untolerated;
  }
  void NormalizeScores(std::span<int64_t> scores) const override {
    DefaultNormalizeScore(scores, /*reverse=*/true);
  }

 private:
  int64_t weight_;
  bool any_preference_ = false;
};

Result<int64_t> WeightArgument(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return weight;
}

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodeAffinityPlugin(const PluginConfig& config) {
  auto weight = WeightArgument(config);
  if (!weight.ok()) return weight.status();
  return std::unique_ptr<Plugin>(new NodeAffinityScorer(*weight));
}

Result<std::unique_ptr<Plugin>> NewTaintTolerationPlugin(const PluginConfig& config) {
  auto weight = WeightArgument(config);
  if (!weight.ok()) return weight.status();
  return std::unique_ptr<Plugin>(new TaintTolerationScorer(*weight));
}

}  // namespace gantry
