// datalocality: prefer the nodes that cache the datasets a task reads (TaskSpec::datasets;
// what a node caches: model/datasets.h), so that it starts without filling a cache first.
//
// The score is the share of the task's data the node caches, weighted by the datasets'
// sizes where ClusterState::datasets() knows them (a dataset of unknown size weighs as
// the mean of the task's known ones; all unknown: each the same), scaled to at most
// bandPercent (default 10) per cent of kMaxNodeScore. That bound is the rule that keeps
// packing first: a packing scorer (binpack, gantry) spans the whole of kMaxNodeScore or
// more, so with weight 1 a node caching everything the task reads beats one caching
// nothing only where their packing scores are within a tenth of that range: among nodes
// that pack about as well. Under binpack's default weights one GPU of an 8-GPU node moves
// a GPU task's score by about 6% of the range; a task is never moved to an idle node over
// one it would nearly fill (tests/scenario/datalocality_packing_first.yaml). Under gantry
// (FGD steps of kMaxNodeScore) it only breaks FGD's ties. Raise weight (or bandPercent)
// to let data count for more. Like kube-scheduler's ImageLocality it never filters:
// nothing waits for a cached node.
//
// The search scores nodesToScore feasible nodes in packing order and stops; on a large
// idle cluster the nodes caching a task's data may come later than that (a hundred empty
// nodes pack alike). So the nodes caching any of the task's datasets are visited first
// (VisitFirst), beside those nodesToScore, when they are no more than nodesToScore.
//
// Per session: left out (ActiveInSession) while no spec names a dataset, and not asked
// for specs that name none (Scores), so that it costs a cluster without datasets nothing.
// What a spec needs (its datasets' label keys and weights, the nodes caching them) is
// worked out once per spec and session; the nodes from one pass over every node's cache
// list and Fluid labels, on the first spec that asks. The node's labels are read here,
// per node: they are not part of its shape class, which only static predicates read.
#include <algorithm>
#include <deque>
#include <unordered_map>

#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"
#include "model/int128.h"

namespace gantry {
namespace {

class DataLocalityScorer : public SessionCopyable<DataLocalityScorer>, public NodeScorer {
 public:
  DataLocalityScorer(int64_t weight, int64_t band_percent)
      : weight_(weight), max_score_(kMaxNodeScore / 100 * band_percent) {}

  std::string_view name() const override { return "datalocality"; }
  int64_t weight() const override { return weight_; }

  void OnSessionOpen(Session& s) override { active_ = s.cluster().specs_with_datasets() > 0; }
  bool ActiveInSession() const override { return active_; }
  bool Scores(const Session& /*s*/, const TaskSpec& spec) const override {
    return !spec.datasets.empty();
  }

  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId id,
                    const GpuChoice& /*gpus*/) const override {
    const Plan& plan = PlanFor(s, spec);
    if (plan.total <= 0) return 0;
    const Node& node = s.cluster().node(id);
    Int128 cached = 0;
    for (const Item& item : plan.items) {
      if (NodeCachesDataset(node.labels, node.cached_datasets, *item.dataset, item.fluid_label)) {
        cached += item.weight;
      }
    }
    return static_cast<int64_t>(cached * max_score_ / plan.total);
  }

  const std::vector<NodeId>* VisitFirst(const Session& s, const TaskSpec& spec) const override {
    const Plan& plan = PlanFor(s, spec);
    if (!plan.nodes_known) {
      const NodesByKey& index = Index(s.cluster());
      for (const Item& item : plan.items) {
        for (const std::string* key : {item.dataset, &item.fluid_label}) {
          auto it = index.find(*key);
          if (it != index.end())
            plan.nodes.insert(plan.nodes.end(), it->second.begin(), it->second.end());
        }
      }
      std::sort(plan.nodes.begin(), plan.nodes.end());
      plan.nodes.erase(std::unique(plan.nodes.begin(), plan.nodes.end()), plan.nodes.end());
      plan.nodes_known = true;
    }
    return &plan.nodes;
  }

 private:
  struct Item {
    const std::string* dataset;  // in the spec, which outlives the session
    std::string fluid_label;     // FluidCacheLabel's key; "" when it cannot be known
    int64_t weight = 1;
  };
  struct Plan {
    std::vector<Item> items;
    Int128 total = 0;
    // The nodes caching any of its datasets (VisitFirst), once asked.
    mutable bool nodes_known = false;
    mutable std::vector<NodeId> nodes;
  };
  // Live nodes by what says they cache a dataset: a name of their cache lists, or a key of
  // their Fluid labels (value "true").
  using NodesByKey = std::unordered_map<std::string, std::vector<NodeId>>;

  const NodesByKey& Index(const ClusterState& cluster) const {
    if (index_built_) return index_;
    index_built_ = true;
    for (NodeId id = 0; id < cluster.nodes().size(); ++id) {
      const Node& node = cluster.node(id);
      if (node.removed) continue;
      for (const std::string& dataset : node.cached_datasets) index_[dataset].push_back(id);
      const auto& labels = node.labels.pairs();
      auto it = std::lower_bound(labels.begin(), labels.end(), kFluidCacheLabelPrefix,
                                 [](const auto& pair, std::string_view prefix) {
                                   return std::string_view(pair.first) < prefix;
                                 });
      for (; it != labels.end() && std::string_view(it->first).starts_with(kFluidCacheLabelPrefix);
           ++it) {
        if (it->second == "true") index_[it->first].push_back(id);
      }
    }
    return index_;
  }

  static Plan MakePlan(const ClusterState& cluster, const TaskSpec& spec) {
    Plan plan;
    Int128 known_sum = 0;
    int64_t known = 0;
    for (const std::string& dataset : spec.datasets) {
      const DatasetInfo* info = cluster.datasets().Find(dataset);
      Item item{&dataset, FluidCacheLabel(dataset, info ? std::string_view(info->uid) : ""), 0};
      if (info != nullptr && info->size_bytes > 0) {
        item.weight = info->size_bytes;
        known_sum += info->size_bytes;
        ++known;
      }
      plan.items.push_back(std::move(item));
    }
    // Unknown sizes weigh as the mean known one (each 1 when none is known).
    const auto unknown_weight = known == 0 ? int64_t{1} : static_cast<int64_t>(known_sum / known);
    for (Item& item : plan.items) {
      if (item.weight == 0) item.weight = std::max<int64_t>(1, unknown_weight);
      plan.total += item.weight;
    }
    return plan;
  }

  // The plan of one of the cluster's specs, made on first use in the session.
  const Plan& PlanFor(const Session& s, const TaskSpec& spec) const {
    const std::vector<TaskSpec>& specs = s.cluster().specs();
    const std::less<const TaskSpec*> before;
    if (specs.empty() || before(&spec, specs.data()) ||
        !before(&spec, specs.data() + specs.size())) {
      // Every caller in the engine passes the cluster's own specs; any other is planned anew.
      scratch_ = MakePlan(s.cluster(), spec);
      return scratch_;
    }
    const auto id = static_cast<size_t>(&spec - specs.data());
    if (plan_of_spec_.size() != specs.size()) plan_of_spec_.resize(specs.size(), -1);
    if (plan_of_spec_[id] < 0) {
      plans_.push_back(MakePlan(s.cluster(), spec));
      plan_of_spec_[id] = static_cast<int32_t>(plans_.size() - 1);
    }
    return plans_[static_cast<size_t>(plan_of_spec_[id])];
  }

  int64_t weight_;
  int64_t max_score_;
  bool active_ = true;
  // Session state (the prototype's stays empty).
  mutable std::vector<int32_t> plan_of_spec_;  // per SpecId: index in plans_, or -1
  mutable std::deque<Plan> plans_;             // stable: callers hold a reference
  mutable Plan scratch_;
  mutable bool index_built_ = false;
  mutable NodesByKey index_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewDataLocalityPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  int64_t band_percent = 10;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  GANTRY_RETURN_IF_ERROR(args.Int("bandPercent", &band_percent));
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  if (band_percent < 1 || band_percent > 100) {
    return Status::Invalid("plugin " + config.name +
                           ": argument bandPercent must be 1 to 100, got " +
                           std::to_string(band_percent));
  }
  if (weight > 1000) {
    return Status::Invalid("plugin " + config.name +
                           ": argument weight must be at most 1000, got " + std::to_string(weight));
  }
  return std::unique_ptr<Plugin>(new DataLocalityScorer(weight, band_percent));
}

}  // namespace gantry
