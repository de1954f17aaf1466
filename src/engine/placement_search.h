// Finding a node (and GPU devices) for one task: candidates visited best first, the
// plugins' predicates and scorers asked, the best scoring node kept. Owns the caches that
// make it fast, and keeps them right as the working state changes:
//   - static verdicts per (task spec, node shape class), which no placement changes;
//   - "fits nowhere" per task spec, for searches of every node's free room: a statement
//     that gives room back (a rollback, an eviction) forgets the verdicts it may have
//     made wrong (see UnschedulableMark).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/filter.h"
#include "engine/gpu_placement.h"
#include "engine/plugin_set.h"
#include "engine/random.h"
#include "engine/working_state.h"

namespace gantry {

class Session;

// Which nodes a search looks at, and onto which room.
struct SearchScope {
  // Null: every node, in the order the scorers' packing prefers. Else only these nodes
  // (a topology domain, the nodes of some victims), in this order.
  const std::vector<NodeId>* nodes = nullptr;
  // Onto room that is being released (a placement to Pipeline) instead of free room.
  bool future = false;
};

class PlacementSearch {
 public:
  PlacementSearch(const Session& session, WorkingState& state, const PluginSet& plugins,
                  const SchedulerConfig& config, uint64_t seed, Rng& rng);

  // Finds the best node for a task, or returns false and explains why none fits
  // ("0/5000 nodes are available: 4000 Insufficient cpu, ...").
  bool Find(TaskId task, const SearchScope& scope, Placement* out, std::string* why_not);
  // Why a task fits no node, in kube-scheduler's words (its FitError) over the scope's
  // nodes (every live node when it names none), in the searched room: "0/5000 nodes are
  // available: 1000 node(s) had untolerated taint(s), 4000 Insufficient free whole GPUs
  // (nvidia.com/gpu)."; with no node at all, "no nodes available to schedule pods". Only on
  // the path where a search found nothing (diagnosis.cc).
  std::string DiagnoseNoNode(const TaskSpec& spec, SpecId spec_id, const SearchScope& scope);
  // Every predicate's verdict on one node, in the searched room.
  FilterResult Filter(const TaskSpec& spec, SpecId spec_id, NodeId node) {
    return FilterFor(spec, spec_id)(node);
  }
  // Filter for many nodes of one spec (the diagnosis asks every node): the spec's static
  // verdicts and dynamic predicates are looked up once. Valid while no other spec is
  // filtered or searched.
  class SpecFilter;  // defined below, with the private types it holds
  SpecFilter FilterFor(const TaskSpec& spec, SpecId spec_id);
  // Devices for the task on the node: the first scorer that chooses, else by packing.
  // `chosen`: the scorer that chose and the score it gave its choice, when it gave one.
  struct ChosenScore {
    const NodeScorer* scorer = nullptr;
    int64_t score = -1;
  };
  bool ChooseDevicesFor(const TaskSpec& spec, NodeId node, GpuChoice* out,
                        ChosenScore* chosen) const;

  // "Fits nowhere" verdicts made after `mark` may be wrong once the room taken since
  // then is given back; earlier ones stay right, since room only shrinks otherwise.
  // Marks are stamps from a counter that never goes back, so a mark taken before some
  // verdicts were forgotten still covers the verdicts made after it.
  uint64_t UnschedulableMark() const { return next_stamp_; }
  void ForgetUnschedulableSince(uint64_t mark);

 private:
  // Per (spec, node shape class): the static verdict, once known. The detail (which
  // taint) is the same for the whole class, since taints are part of its key.
  struct StaticVerdict {
    bool known = false;
    FilterResult result;
  };
  std::vector<StaticVerdict>& StaticVerdictsOf(SpecId spec_id);

 public:
  class SpecFilter {
   public:
    FilterResult operator()(NodeId node) const;

   private:
    friend class PlacementSearch;
    SpecFilter(PlacementSearch* search, const TaskSpec* spec, std::vector<StaticVerdict>* verdicts,
               const std::vector<const NodePredicate*>* dynamic)
        : search_(search), spec_(spec), verdicts_(verdicts), dynamic_(dynamic) {}
    PlacementSearch* search_;
    const TaskSpec* spec_;
    std::vector<StaticVerdict>* verdicts_;
    const std::vector<const NodePredicate*>* dynamic_;
  };

 private:
  // Per spec: the predicates whose FilterDynamic it needs and the scorers (by index in
  // PluginSet::scorers()) that tell its candidates apart, so that a rule a spec does not
  // use costs its searches nothing; and whether some scorer normalizes its scores.
  struct SpecPlugins {
    bool known = false;
    bool normalizing = false;
    bool unblockable = false;  // placements can unblock it: its "fits nowhere" is not kept
    std::vector<const NodePredicate*> dynamic;
    std::vector<uint32_t> scorers;
    // A scorer's nodes to visit before the packing order (NodeScorer::VisitFirst), when
    // scoring stops after nodesToScore and the list is no longer.
    const std::vector<NodeId>* visit_first = nullptr;
  };
  // Inline: the diagnosis asks it for every node.
  const SpecPlugins& PluginsOf(SpecId spec_id, const TaskSpec& spec) {
    SpecPlugins& p = spec_plugins_[spec_id];
    if (!p.known) LearnPlugins(spec, &p);
    return p;
  }
  void LearnPlugins(const TaskSpec& spec, SpecPlugins* out) const;
  const FilterResult& StaticResult(const TaskSpec& spec, std::vector<StaticVerdict>& verdicts,
                                   NodeId node);
  // Filter(...).ok(), for the hot loop: no result to copy, verdicts and the spec's
  // dynamic predicates (PluginsOf) already at hand.
  bool Passes(const TaskSpec& spec, std::vector<StaticVerdict>& verdicts,
              const std::vector<const NodePredicate*>& dynamic, NodeId node);
  // fn(node) returns false to stop.
  template <typename Fn>
  void ForEachCandidate(const TaskSpec& spec, const SearchScope& scope, Fn&& fn) const;

  const Session& session_;
  WorkingState& state_;
  const PluginSet& plugins_;
  const SchedulerConfig& config_;
  Rng& rng_;
  std::vector<uint32_t> tie_rank_;  // per node, for TieBreak::kShuffled
  uint64_t rotation_ = 0;           // start offset for unordered candidate scans

  std::vector<std::vector<StaticVerdict>> static_verdicts_;
  std::vector<SpecPlugins> spec_plugins_;
  // Per spec: 1 when it found no node, so that its other tasks fail fast.
  std::vector<uint8_t> unschedulable_;
  std::vector<std::string> unschedulable_why_;
  struct Marked {
    SpecId spec;
    uint64_t stamp;
  };
  std::vector<Marked> unschedulable_log_;  // in the order they were marked
  uint64_t next_stamp_ = 0;
  // Candidates of the task being placed, when scores are normalized.
  std::vector<NodeId> candidate_nodes_;
  std::vector<GpuChoice> candidate_gpus_;
  std::vector<std::vector<int64_t>> candidate_scores_;  // per scorer
  std::vector<uint8_t> visit_first_mark_;               // per node: visited first in this search
};

}  // namespace gantry
