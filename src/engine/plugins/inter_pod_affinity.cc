// interpodaffinity: kube-scheduler's InterPodAffinity (pkg/scheduler/framework/plugins/
// interpodaffinity, filtering.go and scoring.go), as a predicate and a scorer.
//
// Filter, for a pod P on node N, in kube-scheduler's order:
//   1. P's required affinity: every term has a pod matching all the terms in N's domain of
//      its key, and N has every key; or no pod anywhere matches and P matches its own
//      terms (the first pod of a group with affinity to itself).
//   2. P's required anti-affinity: no pod matching a term in N's domain of its key.
//   3. existing pods' required anti-affinity: no pod with a term that P matches in N's
//      domain of that term's key.
// Score: the weights of P's preferred terms times the matching pods in N's domains (minus
// for anti-affinity), plus existing pods' preferred terms that P matches and their
// required affinity terms times hardPodAffinityWeight; min-max scaled over the candidates.
//
// Which pods count, as kube-scheduler counts them:
//   running, allocated in this session  always (assigned and assumed pods);
//   releasing (evicted in this session)  when placing onto free room now (a terminating
//       pod stays in kube-scheduler's cache until it is gone), not in the future view
//       (placing onto room being released: preemption's check removes the victims);
//   pipelined                            in filters, only on the node being filtered and
//       only those of at least the pod's priority, never in scores (nominated pods, as
//       RunFilterPluginsWithNominatedPods adds them);
//   pending, done                        never.
//
// Costs nothing in a session where no pod (running or pending) has a term: the plugin is
// left out of the session (ActiveInSession). Otherwise its index (pod_affinity_index.h)
// holds the live specs' terms, and the search leaves the plugin out for specs that no
// term bears on (FiltersDynamically, Scores); the pods are counted on the first search or
// change that needs counts, and kept in step with every change of the session since.
#include <algorithm>
#include <memory>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/pod_affinity_index.h"
#include "engine/session.h"
#include "model/int128.h"

namespace gantry {
namespace {

class InterPodAffinityPlugin : public SessionCopyable<InterPodAffinityPlugin>,
                               public NodePredicate,
                               public NodeScorer,
                               public PlacementListener {
 public:
  InterPodAffinityPlugin(int64_t weight, int32_t hard_pod_affinity_weight)
      : weight_(weight), hard_weight_(hard_pod_affinity_weight) {}
  // A session's copy: the arguments, no session state.
  InterPodAffinityPlugin(const InterPodAffinityPlugin& other)
      : SessionCopyable(other),
        NodePredicate(other),
        NodeScorer(other),
        PlacementListener(other),
        weight_(other.weight_),
        hard_weight_(other.hard_weight_) {}

  std::string_view name() const override { return "interpodaffinity"; }
  int64_t weight() const override { return weight_; }
  bool normalizes() const override { return true; }

  void OnSessionOpen(Session& s) override {
    const ClusterState& c = s.cluster();
    const size_t n = c.specs().size();
    std::vector<uint8_t> with_terms(n, 0);
    bool any = false;
    for (SpecId id = 0; id < n; ++id) {
      with_terms[id] = c.spec(id).pod_affinity.empty() ? 0 : 1;
      any = any || with_terms[id] != 0;
    }
    if (!any) return;
    // Specs left behind by tasks that are gone do not count: only those of live tasks.
    std::vector<uint8_t> live(n, 0);
    for (const Task& t : c.tasks()) {
      if (t.state != TaskState::kDone && t.spec < n && with_terms[t.spec] != 0) live[t.spec] = 1;
    }
    for (SpecId id = 0; id < n; ++id) {
      if (live[id] != 0) specs_.push_back(id);
    }
  }
  bool ActiveInSession() const override { return !specs_.empty(); }

  // Nothing here depends on the node's shape alone: its topology labels are not part of
  // its shape class.
  FilterResult FilterStatic(const TaskSpec& /*spec*/, const Node& /*node*/) const override {
    return FilterResult::Ok();
  }

  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId node) const override {
    if (!Terms(s).Filters(spec)) return FilterResult::Ok();
    PodAffinityIndex& index = Counted(s);
    nominated_.clear();
    if (node < nominated_on_.size()) {
      for (TaskId q : nominated_on_[node]) {
        if (s.cluster().spec_of(q).priority >= spec.priority) nominated_.push_back(q);
      }
    }
    return index.Filter(spec, node, s.searching_future(), nominated_);
  }

  bool FiltersDynamically(const Session& s, const TaskSpec& spec) const override {
    return Terms(s).Filters(spec);
  }
  bool Scores(const Session& s, const TaskSpec& spec) const override {
    return Terms(s).Scores(spec);
  }

  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                    const GpuChoice& /*gpus*/) const override {
    if (!Terms(s).Scores(spec)) return 0;
    return Counted(s).Score(spec, node, s.searching_future());
  }

  // (s - min) * kMaxNodeScore / (max - min) over the candidates; all zero when they are
  // equal (kube-scheduler's NormalizeScore, on our scale).
  void NormalizeScores(std::span<int64_t> scores) const override {
    if (scores.empty()) return;
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    const int64_t low = *lo;
    const int64_t range = *hi - *lo;
    for (int64_t& v : scores) {
      v = range == 0 ? 0 : static_cast<int64_t>(MulDiv(v - low, kMaxNodeScore, range));
    }
  }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& /*gpus*/, int sign) override {
    const SpecId spec = s.cluster().task(task).spec;
    switch (change) {
      case StateChange::kAllocate:
      case StateChange::kEvict:
        if (Terms(s).Inert(spec)) break;
        Counted(s).Count(spec, node, /*releasing=*/change == StateChange::kEvict, sign);
        break;
      case StateChange::kPipeline: {
        if (nominated_on_.size() <= node) nominated_on_.resize(s.cluster().nodes().size());
        std::vector<TaskId>& on = nominated_on_[node];
        if (sign > 0) {
          on.push_back(task);
        } else if (auto it = std::find(on.rbegin(), on.rend(), task); it != on.rend()) {
          on.erase(std::next(it).base());
        }
        break;
      }
    }
  }

 private:
  // The index of the live specs' terms, made on first need.
  PodAffinityIndex& Terms(const Session& s) const {
    if (index_ == nullptr) {
      index_ = std::make_unique<PodAffinityIndex>(s.cluster(), specs_, hard_weight_);
    }
    return *index_;
  }
  // The index counting pods, on the first search or change that needs counts: from the
  // running tasks, then every change since (changes of pods that add to no count, the
  // only ones that may come before, need not be replayed).
  PodAffinityIndex& Counted(const Session& s) const {
    PodAffinityIndex& index = Terms(s);
    if (!index.counting()) index.CountRunning();
    return index;
  }

  int64_t weight_;
  int32_t hard_weight_;
  std::vector<SpecId> specs_;  // live specs with terms; none: inactive
  mutable std::unique_ptr<PodAffinityIndex> index_;
  std::vector<std::vector<TaskId>> nominated_on_;  // pipelined tasks, by node
  mutable std::vector<TaskId> nominated_;          // scratch
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewInterPodAffinityPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  int64_t hard = 1;  // kube-scheduler's default
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  GANTRY_RETURN_IF_ERROR(args.Int("hardPodAffinityWeight", &hard));
  if (hard > 100) {
    return Status::Invalid("plugin " + config.name +
                           ": hardPodAffinityWeight must be in 0..100 (as kube-scheduler's), got " +
                           std::to_string(hard));
  }
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new InterPodAffinityPlugin(weight, static_cast<int32_t>(hard)));
}

}  // namespace gantry
