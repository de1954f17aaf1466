#include "engine/placement_search.h"

#include <algorithm>

#include "engine/dra/extended_resources.h"

namespace gantry {
namespace {

// Keeps the best-scoring candidate, breaking ties by lowest node id or uniformly at
// random (reservoir sampling: the k-th tie replaces the choice with probability 1/k).
class BestCandidate {
 public:
  // `rank`: when not empty, ties go to the node of lowest rank (TieBreak::kShuffled).
  BestCandidate(bool random_ties, Rng* rng, const std::vector<uint32_t>& rank)
      : random_ties_(random_ties), rng_(rng), rank_(rank) {}

  // Returns true when `node` becomes the choice.
  bool Offer(NodeId node, int64_t score) {
    if (best_ == kNone || score > score_) {
      best_ = node;
      score_ = score;
      ties_ = 1;
      return true;
    }
    if (score < score_) return false;
    if (random_ties_) {
      if (rng_->Uniform(++ties_) != 0) return false;
    } else if (!rank_.empty()) {
      if (rank_[node] > rank_[best_]) return false;
    } else if (node > best_) {
      return false;
    }
    best_ = node;
    return true;
  }
  NodeId best() const { return best_; }

 private:
  bool random_ties_;
  Rng* rng_;
  const std::vector<uint32_t>& rank_;
  NodeId best_ = kNone;
  int64_t score_ = 0;
  uint64_t ties_ = 0;
};

}  // namespace

PlacementSearch::PlacementSearch(const Session& session, WorkingState& state,
                                 const PluginSet& plugins, const SchedulerConfig& config,
                                 uint64_t seed, Rng& rng)
    : session_(session), state_(state), plugins_(plugins), config_(config), rng_(rng) {
  rotation_ = seed;
  const ClusterState& c = state.cluster();
  if (config_.tie_break == SchedulerConfig::TieBreak::kShuffled) {
    // Its own generator, so that the order does not depend on other random draws.
    Rng order_rng(seed ^ 0x5deece66dULL);
    const size_t n = c.nodes().size();
    std::vector<uint32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[order_rng.Uniform(i)]);
    tie_rank_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) tie_rank_[order[i]] = static_cast<uint32_t>(i);
  }
  static_verdicts_.assign(c.specs().size(), {});
  spec_plugins_.assign(c.specs().size(), {});
  unschedulable_.assign(c.specs().size(), 0);
  unschedulable_why_.assign(c.specs().size(), {});
}

std::vector<PlacementSearch::StaticVerdict>& PlacementSearch::StaticVerdictsOf(SpecId spec_id) {
  std::vector<StaticVerdict>& verdicts = static_verdicts_[spec_id];
  const size_t classes = state_.cluster().shape_classes().count();
  if (verdicts.size() < classes) verdicts.resize(classes);
  return verdicts;
}

const FilterResult& PlacementSearch::StaticResult(const TaskSpec& spec,
                                                  std::vector<StaticVerdict>& verdicts,
                                                  NodeId node) {
  StaticVerdict& v = verdicts[state_.searched_node(node).shape_class];
  if (!v.known) {
    for (const NodePredicate* p : plugins_.predicates()) {
      v.result = p->FilterStatic(spec, state_.cluster().node(node));
      if (!v.result.ok()) break;
    }
    v.known = true;
  }
  return v.result;
}

void PlacementSearch::LearnPlugins(const TaskSpec& spec, SpecPlugins* out) const {
  out->unblockable = spec.placements_can_unblock();
  for (const NodePredicate* predicate : plugins_.predicates()) {
    if (!predicate->FiltersDynamically(session_, spec)) continue;
    out->dynamic.push_back(predicate);
    out->unblockable = out->unblockable || predicate->PlacementsCanUnblock(spec);
  }
  const auto& scorers = plugins_.scorers();
  for (uint32_t i = 0; i < scorers.size(); ++i) {
    if (!scorers[i]->Scores(session_, spec)) continue;
    out->scorers.push_back(i);
    out->normalizing =
        out->normalizing || (scorers[i]->normalizes() && scorers[i]->NormalizesFor(spec));
    const std::vector<NodeId>* first = scorers[i]->VisitFirst(session_, spec);
    if (out->visit_first == nullptr && first != nullptr && !first->empty() &&
        config_.nodes_to_score > 0 &&
        first->size() <= static_cast<size_t>(config_.nodes_to_score)) {
      out->visit_first = first;
    }
  }
  out->known = true;
}

PlacementSearch::SpecFilter PlacementSearch::FilterFor(const TaskSpec& spec, SpecId spec_id) {
  const std::vector<const NodePredicate*>* dynamic = &PluginsOf(spec_id, spec).dynamic;
  return SpecFilter(this, &spec, &StaticVerdictsOf(spec_id), dynamic);
}

FilterResult PlacementSearch::SpecFilter::operator()(NodeId node) const {
  FilterResult r = search_->StaticResult(*spec_, *verdicts_, node);
  if (!r.ok()) return r;
  for (const NodePredicate* p : *dynamic_) {
    r = p->FilterDynamic(search_->session_, *spec_, node);
    if (!r.ok()) return r;
  }
  return r;
}

bool PlacementSearch::Passes(const TaskSpec& spec, std::vector<StaticVerdict>& verdicts,
                             const std::vector<const NodePredicate*>& dynamic, NodeId node) {
  if (!StaticResult(spec, verdicts, node).ok()) return false;
  for (const NodePredicate* p : dynamic) {
    if (!p->FilterDynamic(session_, spec, node).ok()) return false;
  }
  return true;
}

template <typename Fn>
void PlacementSearch::ForEachCandidate(const TaskSpec& spec, const SearchScope& scope,
                                       Fn&& fn) const {
  const size_t n = state_.cluster().nodes().size();
  if (scope.nodes != nullptr) {
    for (NodeId node : *scope.nodes) {
      if (node >= n || state_.searched_node(node).removed) continue;
      if (!fn(node)) return;
    }
    return;
  }
  const GpuPacking packing = plugins_.packing();
  if (packing == GpuPacking::kNone || scope.future) {
    // No preferred order (or none kept for the future view): every node, from a rotating
    // start so that equal nodes share the load.
    if (n == 0) return;
    const size_t start = packing == GpuPacking::kNone ? static_cast<size_t>(rotation_ % n) : 0;
    for (size_t k = 0; k < n; ++k) {
      const auto node = static_cast<NodeId>((start + k) % n);
      if (state_.searched_node(node).removed) continue;
      if (!fn(node)) return;
    }
    return;
  }
  // Each GPU node is visited at most once.
  const NodeIndex& index = state_.index();
  auto visit = [&](const std::vector<NodeId>& nodes, bool skip_partial) {
    for (NodeId node : nodes) {
      if (skip_partial && index.is_partial(node)) continue;
      if (!fn(node)) return false;
    }
    return true;
  };
  const int32_t max = index.max_whole();
  const GpuRequest& gpu = spec.gpu;
  const bool tight = packing == GpuPacking::kTight;
  if (!gpu.wants_gpu()) {
    // CPU-only tasks: CPU-only nodes first, then GPU nodes from the fullest (tight) or
    // the emptiest (loose), so that GPU nodes keep their CPU for GPU tasks.
    if (!visit(index.cpu_only(), false)) return;
    for (int32_t k = 0; k <= max; ++k) {
      if (!visit(index.with_whole_free(tight ? k : max - k), false)) return;
    }
    return;
  }
  if (gpu.shared()) {
    if (tight && !visit(index.partial(), false)) return;
    for (int32_t k = 1; k <= max; ++k) {
      if (!visit(index.with_whole_free(tight ? k : max + 1 - k), true)) return;
    }
    if (!tight) visit(index.partial(), false);
    return;
  }
  for (int32_t k = gpu.count; k <= max; ++k) {
    if (!visit(index.with_whole_free(tight ? k : max + gpu.count - k), false)) return;
  }
  // GPUs a DeviceClass serves (DRA's extended resources) come from DRA on nodes without
  // GPU devices of the device plugin's: those are candidates too, after the GPU nodes.
  if (std::any_of(spec.device_backed.begin(), spec.device_backed.end(),
                  [](const DeviceBackedResource& r) { return r.resource == kGpu; })) [[unlikely]] {
    visit(index.cpu_only(), false);
  }
}

bool PlacementSearch::ChooseDevicesFor(const TaskSpec& spec, NodeId node, GpuChoice* out,
                                       ChosenScore* chosen) const {
  if (!spec.device_backed.empty() && spec.gpu.wants_gpu() &&
      ServedByDraFor(spec.device_backed, kGpu, state_.cluster().node(node))) [[unlikely]] {
    // No GPU of the node's: DeviceReservations allocates the task's GPUs from DRA.
    *chosen = ChosenScore{};
    out->Clear();
    return true;
  }
  for (const PluginSet::Chooser& c : plugins_.device_choosers()) {
    int64_t score = -1;
    if (c.chooser->ChooseDevices(session_, spec, node, out, &score)) {
      *chosen = ChosenScore{score >= 0 ? c.as_scorer : nullptr, score};
      return true;
    }
  }
  *chosen = ChosenScore{};
  const GpuPacking packing =
      plugins_.packing() == GpuPacking::kNone ? GpuPacking::kTight : plugins_.packing();
  return ChooseGpus(spec.gpu, state_.searched_gpus(node), packing, out);
}

bool PlacementSearch::Find(TaskId task_id, const SearchScope& scope, Placement* out,
                           std::string* why_not) {
  const ClusterState& c = state_.cluster();
  const SpecId spec_id = c.task(task_id).spec;
  const TaskSpec& spec = c.spec(spec_id);
  // The memo is of searches over every node's free room; others neither read nor write
  // it. Nor do specs that placements can unblock: their "fits nowhere" may not last.
  // Nor while nodes are held for a job (reserve): a verdict for one job is not another's.
  const bool held = state_.HasReservations();
  const JobId job = c.task(task_id).job;
  const bool memo =
      scope.nodes == nullptr && !scope.future && !held && !PluginsOf(spec_id, spec).unblockable;
  if (memo && unschedulable_[spec_id]) {
    *why_not = unschedulable_why_[spec_id];
    return false;
  }
  const WorkingState::FutureSearch future(&state_, scope.future);
  const auto& scorers = plugins_.scorers();
  const auto& weights = plugins_.scorer_weights();
  const SpecPlugins& active = PluginsOf(spec_id, spec);
  const bool normalizing = active.normalizing;
  BestCandidate best(config_.tie_break == SchedulerConfig::TieBreak::kRandom, &rng_, tie_rank_);
  int32_t found = 0;
  size_t visited = 0;
  GpuChoice choice;
  ChosenScore chosen;
  const int32_t enough = config_.nodes_to_score;
  if (normalizing) {
    candidate_nodes_.clear();
    candidate_gpus_.clear();
    candidate_scores_.resize(scorers.size());
    for (auto& scores : candidate_scores_) scores.clear();
  }
  // Looked up once here rather than per candidate.
  std::vector<StaticVerdict>& verdicts = StaticVerdictsOf(spec_id);
  int32_t held_for_others = 0;
  // A scorer's nodes to visit first (VisitFirst), found beside the nodesToScore of the
  // packing order, which then skips them.
  const std::vector<NodeId>* first =
      scope.nodes == nullptr && !scope.future ? active.visit_first : nullptr;
  auto visit = [&](NodeId n) {
    ++visited;
    if (held && state_.ReservedFor(n) != kNone && state_.ReservedFor(n) != job) {
      ++held_for_others;
      return true;
    }
    if (!Passes(spec, verdicts, active.dynamic, n)) return true;
    if (!ChooseDevicesFor(spec, n, &choice, &chosen)) return true;
    ++found;
    if (normalizing) {
      candidate_nodes_.push_back(n);
      candidate_gpus_.push_back(choice);
      for (uint32_t i : active.scorers) {
        candidate_scores_[i].push_back(scorers[i] == chosen.scorer
                                           ? chosen.score
                                           : scorers[i]->ScoreNode(session_, spec, n, choice));
      }
    } else {
      int64_t score = 0;
      for (uint32_t i : active.scorers) {
        const int64_t s = scorers[i] == chosen.scorer
                              ? chosen.score
                              : scorers[i]->ScoreNode(session_, spec, n, choice);
        score += weights[i] * s;
      }
      if (best.Offer(n, score)) out->gpus = choice;
    }
    return enough <= 0 || found < enough;
  };
  if (first == nullptr) {
    ForEachCandidate(spec, scope, visit);
  } else {
    if (visit_first_mark_.size() < c.nodes().size()) visit_first_mark_.resize(c.nodes().size());
    for (NodeId n : *first) {
      if (n >= c.nodes().size() || state_.searched_node(n).removed) continue;
      visit_first_mark_[n] = 1;
      visit(n);
    }
    // The packing order finds `enough` more; `found` counts them all again after.
    const int32_t found_first = found;
    found = 0;
    ForEachCandidate(spec, scope, [&](NodeId n) { return visit_first_mark_[n] != 0 || visit(n); });
    found += found_first;
    for (NodeId n : *first) {
      if (n < visit_first_mark_.size()) visit_first_mark_[n] = 0;
    }
  }
  rotation_ += visited;
  if (normalizing && found > 0) {
    for (uint32_t i : active.scorers) {
      if (scorers[i]->normalizes() && scorers[i]->NormalizesFor(spec)) {
        scorers[i]->NormalizeCandidates(session_, spec, candidate_nodes_, candidate_scores_[i]);
      }
    }
    size_t chosen = 0;
    for (size_t k = 0; k < candidate_nodes_.size(); ++k) {
      int64_t score = 0;
      for (uint32_t i : active.scorers) score += weights[i] * candidate_scores_[i][k];
      if (best.Offer(candidate_nodes_[k], score)) chosen = k;
    }
    out->gpus = candidate_gpus_[chosen];
  }
  if (best.best() == kNone) {
    if (held_for_others == 0) {
      *why_not = DiagnoseNoNode(spec, spec_id, scope);
    } else {  // rare: the words of the nodes not held, after the count of those held
      std::vector<NodeId> others;
      const size_t n = scope.nodes ? scope.nodes->size() : c.nodes().size();
      for (size_t i = 0; i < n; ++i) {
        const NodeId node = scope.nodes ? (*scope.nodes)[i] : static_cast<NodeId>(i);
        const JobId holder = state_.ReservedFor(node);
        if (holder == kNone || holder == job) others.push_back(node);
      }
      *why_not =
          std::to_string(held_for_others) + " node(s) are reserved for a job that waited too long";
      if (!others.empty()) {
        *why_not +=
            "; the others: " + DiagnoseNoNode(spec, spec_id, SearchScope{&others, scope.future});
      }
    }
    if (memo) {
      unschedulable_[spec_id] = 1;
      unschedulable_log_.push_back(Marked{spec_id, next_stamp_++});
      unschedulable_why_[spec_id] = *why_not;
    }
    return false;
  }
  out->node = best.best();
  return true;
}

void PlacementSearch::ForgetUnschedulableSince(uint64_t mark) {
  while (!unschedulable_log_.empty() && unschedulable_log_.back().stamp >= mark) {
    unschedulable_[unschedulable_log_.back().spec] = 0;
    unschedulable_log_.pop_back();
  }
}

}  // namespace gantry
