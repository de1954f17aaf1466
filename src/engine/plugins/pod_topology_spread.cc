// podtopologyspread: kube-scheduler's PodTopologySpread (Kubernetes v1.37,
// pkg/scheduler/framework/plugins/podtopologyspread), as a predicate for the
// DoNotSchedule constraints and a scorer for the ScheduleAnyway ones.
//
// Filter (filtering.go): a node without a constraint's topology key fails; otherwise it
// fails when matchNum + selfMatch - minMatchNum > maxSkew, where matchNum counts the
// matching pods in the node's domain over the eligible nodes (those with every
// DoNotSchedule topology key of the pod, and that pass the constraint's node inclusion
// policies), selfMatch is 1 when the selector matches the pod's own labels, and
// minMatchNum is the smallest count of an eligible domain, or 0 when there are fewer
// eligible domains than minDomains. Constraints are checked in order; the first failure
// is the reason.
//
// Score (scoring.go): each candidate gets, for each ScheduleAnyway constraint whose key
// it has, count x log(domains + 2) + maxSkew - 1, where count is the matching pods on the
// node itself (hostname key) or in its domain over the eligible nodes, and domains is
// how many domains the candidates are in (for the hostname key: how many candidates);
// the sum is rounded, then reversed and scaled to [0, kMaxNodeScore] over the
// candidates: max + min - score, times kMaxNodeScore / max (all kMaxNodeScore when the
// maximum is 0). Candidates without every key (unless the system defaults apply) score 0.
//
// Default constraints: a pod without constraints of its own gets the plugin's default
// constraints (defaultingType System: hostname maxSkew 3 and zone maxSkew 5, both
// ScheduleAnyway; List: defaultConstraints), each with the selector the daemon computed
// from the pod's Services and owners (TaskSpec::default_spread_selector).
//
// The counts come from a SpreadIndex, built lazily and kept in step through
// PlacementListener, so that the members of a gang placed in one statement see each
// other, and a rollback takes them back.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <functional>
#include <set>

#include "engine/plugin_argument.h"
#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/plugins/spread_index.h"
#include "engine/session.h"
#include "model/limits.h"
#include "model/quote.h"

namespace gantry {
namespace {

constexpr std::string_view kHostnameKey = "kubernetes.io/hostname";
constexpr std::string_view kZoneKey = "topology.kubernetes.io/zone";
constexpr std::string_view kName = "podtopologyspread";

using Constraint = TopologySpreadConstraint;
using When = TopologySpreadConstraint::WhenUnsatisfiable;

std::vector<Constraint> SystemDefaultConstraints() {
  Constraint hostname;
  hostname.topology_key = std::string(kHostnameKey);
  hostname.when_unsatisfiable = When::kScheduleAnyway;
  hostname.max_skew = 3;
  Constraint zone;
  zone.topology_key = std::string(kZoneKey);
  zone.when_unsatisfiable = When::kScheduleAnyway;
  zone.max_skew = 5;
  return {hostname, zone};
}

class PodTopologySpreadPlugin : public SessionCopyable<PodTopologySpreadPlugin>,
                                public NodePredicate,
                                public NodeScorer,
                                public PlacementListener {
 public:
  PodTopologySpreadPlugin(int64_t weight, std::vector<Constraint> defaults, bool system_defaulted)
      : weight_(weight), defaults_(std::move(defaults)), system_defaulted_(system_defaulted) {
    for (const Constraint& c : defaults_) {
      (c.filters() ? default_filters_ : default_scores_) = true;
    }
  }

  std::string_view name() const override { return kName; }
  int64_t weight() const override { return weight_; }

  // Out of the session (not even told of its changes) while no spec spreads, by
  // constraints of its own or by the defaults.
  void OnSessionOpen(Session& s) override {
    const bool defaults = default_filters_ || default_scores_;
    const auto& specs = s.cluster().specs();
    active_ = std::any_of(specs.begin(), specs.end(), [&](const TaskSpec& spec) {
      return !spec.spread.empty() || (defaults && spec.default_spreading());
    });
  }
  bool ActiveInSession() const override { return active_; }

  // ---- NodePredicate. Nothing static: a topology key is a node label no shape class
  // holds (a hostname key would make a class of every node), so its absence is found with
  // the counts.
  FilterResult FilterStatic(const TaskSpec&, const Node&) const override {
    return FilterResult::Ok();
  }

  bool FiltersDynamically(const Session& /*s*/, const TaskSpec& spec) const override {
    if (spec.spread.empty()) return default_filters_ && spec.default_spreading();
    for (const Constraint& c : spec.spread) {
      if (c.filters()) return true;
    }
    return false;
  }
  bool PlacementsCanUnblock(const TaskSpec& spec) const override {
    return spec.spread.empty() && default_filters_ && spec.default_spreading();
  }

  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId node) const override {
    if (spec.spread.empty() && !(default_filters_ && spec.default_spreading())) {
      return FilterResult::Ok();
    }
    for (const HardConstraint& h : PlanFor(s, spec).hard) {
      const int32_t domain = index_.domains(h.domains).of_node[node];
      if (domain < 0) return FilterResult::Fail(FilterCode::kSpreadMissingLabel, h.index);
      const SpreadIndex::DomainCounts& counts = index_.counts(h.counts);
      const int64_t min_match =
          static_cast<int64_t>(counts.eligible_domains) < h.min_domains ? 0 : counts.min;
      const int64_t skew = int64_t{counts.count[domain]} + h.self_match - min_match;
      if (skew > h.max_skew) return FilterResult::Fail(FilterCode::kSpreadSkew, h.index);
    }
    return FilterResult::Ok();
  }

  // ---- NodeScorer: every score is made over the candidates, in NormalizeCandidates.
  int64_t ScoreNode(const Session&, const TaskSpec&, NodeId, const GpuChoice&) const override {
    return 0;
  }
  bool normalizes() const override { return true; }
  bool Scores(const Session& /*s*/, const TaskSpec& spec) const override {
    return NormalizesFor(spec);
  }
  bool NormalizesFor(const TaskSpec& spec) const override {
    if (spec.spread.empty()) return default_scores_ && spec.default_spreading();
    for (const Constraint& c : spec.spread) {
      if (!c.filters()) return true;
    }
    return false;
  }
  void NormalizeCandidates(const Session& s, const TaskSpec& spec, std::span<const NodeId> nodes,
                           std::span<int64_t> scores) const override;

  // ---- PlacementListener: an eviction takes a counted task away (it is terminating).
  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice&, int sign) override {
    index_.Apply(s, task, node, change == StateChange::kEvict ? -sign : sign);
  }

 private:
  struct HardConstraint {
    uint32_t index;  // in the spec's constraints (or the defaults)
    int32_t max_skew;
    int32_t min_domains;
    int32_t self_match;
    SpreadIndex::Id domains;
    SpreadIndex::Id counts;
  };
  struct SoftConstraint {
    int32_t max_skew;
    bool hostname;  // counted per node, not per domain
    SpreadIndex::Id domains;
    SpreadIndex::Id matcher;
    SpreadIndex::Id counts;  // unused when hostname
  };
  // What one spec's constraints read of the index.
  struct Plan {
    std::vector<HardConstraint> hard;
    std::vector<SoftConstraint> soft;
    // Candidates without every ScheduleAnyway key score 0 (not with the system defaults,
    // so that nodes without a zone still get hostname spreading).
    bool require_all_keys = true;
  };

  const Plan& PlanFor(const Session& s, const TaskSpec& spec) const;
  Plan MakePlan(const Session& s, const TaskSpec& spec) const;

  int64_t weight_;
  bool active_ = true;  // some spec of the session spreads
  std::vector<Constraint> defaults_;
  bool system_defaulted_;
  bool default_filters_ = false;  // some default constraint is DoNotSchedule
  bool default_scores_ = false;   // some is ScheduleAnyway

  // Session state (the prototype's stays empty).
  mutable SpreadIndex index_;
  mutable std::vector<int32_t> plan_of_spec_;  // per SpecId: index in plans_, or -1
  mutable std::deque<Plan> plans_;             // stable: callers hold a reference
  mutable Plan scratch_plan_;                  // for a spec outside the cluster's list
  // Scratch of NormalizeCandidates.
  mutable std::vector<uint8_t> ignored_;
  mutable std::vector<double> topology_weight_;
  mutable std::vector<uint64_t> seen_;  // per domain: the stamp of the last count
  mutable uint64_t stamp_ = 0;
};

const PodTopologySpreadPlugin::Plan& PodTopologySpreadPlugin::PlanFor(const Session& s,
                                                                      const TaskSpec& spec) const {
  const std::vector<TaskSpec>& specs = s.cluster().specs();
  const std::less<const TaskSpec*> before;
  if (specs.empty() || before(&spec, specs.data()) || !before(&spec, specs.data() + specs.size())) {
    // Every caller in the engine passes the cluster's own specs; any other is planned anew.
    scratch_plan_ = MakePlan(s, spec);
    return scratch_plan_;
  }
  const auto id = static_cast<size_t>(&spec - specs.data());
  if (plan_of_spec_.size() != specs.size()) plan_of_spec_.assign(specs.size(), -1);
  if (plan_of_spec_[id] < 0) {
    plans_.push_back(MakePlan(s, spec));
    plan_of_spec_[id] = static_cast<int32_t>(plans_.size() - 1);
  }
  return plans_[static_cast<size_t>(plan_of_spec_[id])];
}

PodTopologySpreadPlugin::Plan PodTopologySpreadPlugin::MakePlan(const Session& s,
                                                                const TaskSpec& spec) const {
  Plan plan;
  const bool defaulted = spec.default_spreading();
  const std::vector<Constraint>& constraints = defaulted ? defaults_ : spec.spread;
  auto selector_of = [&](const Constraint& c) -> const std::optional<LabelSelector>& {
    return defaulted ? spec.default_spread_selector : c.selector;
  };
  plan.require_all_keys = !defaulted || !system_defaulted_;
  std::set<std::string> hard_keys, soft_keys;
  for (const Constraint& c : constraints)
    (c.filters() ? hard_keys : soft_keys).insert(c.topology_key);
  auto eligibility = [&](const Constraint& c, const std::set<std::string>& keys) {
    SpreadIndex::EligibilityKey key;
    key.required_keys.assign(keys.begin(), keys.end());
    if (c.honor_node_affinity) {
      key.honor_affinity = true;
      key.node_selector = spec.node_selector;
      key.affinity_terms = spec.affinity.terms;
    }
    if (c.honor_node_taints) {
      key.honor_taints = true;
      key.tolerations = spec.tolerations;
    }
    return index_.EligibilityOf(s, std::move(key));
  };
  const std::set<std::string> no_keys;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    const SpreadIndex::Id domains = index_.DomainsOf(s, c.topology_key);
    const SpreadIndex::Id matcher = index_.MatcherOf(s, spec.namespace_, selector_of(c));
    if (c.filters()) {
      HardConstraint h;
      h.index = static_cast<uint32_t>(i);
      h.max_skew = c.max_skew;
      h.min_domains = c.min_domains > 0 ? c.min_domains : 1;  // not given: 1
      h.self_match = Selects(selector_of(c), spec.labels) ? 1 : 0;
      h.domains = domains;
      h.counts = index_.CountsOf(s, matcher, domains, eligibility(c, hard_keys));
      plan.hard.push_back(h);
    } else {
      SoftConstraint sc;
      sc.max_skew = c.max_skew;
      sc.hostname = c.topology_key == kHostnameKey;
      sc.domains = domains;
      sc.matcher = matcher;
      sc.counts = sc.hostname ? 0
                              : index_.CountsOf(
                                    s, matcher, domains,
                                    eligibility(c, plan.require_all_keys ? soft_keys : no_keys));
      plan.soft.push_back(sc);
    }
  }
  return plan;
}

void PodTopologySpreadPlugin::NormalizeCandidates(const Session& s, const TaskSpec& spec,
                                                  std::span<const NodeId> nodes,
                                                  std::span<int64_t> scores) const {
  const Plan& plan = PlanFor(s, spec);
  if (plan.soft.empty()) return;
  const size_t n = nodes.size();
  // Candidates without every key are left out (initPreScoreState's IgnoredNodes).
  ignored_.assign(n, 0);
  size_t ignored = 0;
  if (plan.require_all_keys) {
    for (size_t k = 0; k < n; ++k) {
      for (const SoftConstraint& sc : plan.soft) {
        if (index_.domains(sc.domains).of_node[nodes[k]] < 0) {
          ignored_[k] = 1;
          ++ignored;
          break;
        }
      }
    }
  }
  // Each constraint's weight: log(the number of domains of the candidates scored + 2). A
  // candidate without the key is in the domain of the empty value, as kube-scheduler's
  // map of values counts it.
  topology_weight_.assign(plan.soft.size(), 0.0);
  for (size_t i = 0; i < plan.soft.size(); ++i) {
    const SoftConstraint& sc = plan.soft[i];
    size_t size = n - ignored;
    if (!sc.hostname) {
      const SpreadIndex::Domains& domains = index_.domains(sc.domains);
      if (seen_.size() < domains.count) seen_.resize(domains.count, 0);
      ++stamp_;
      size = 0;
      bool without_key = false;
      for (size_t k = 0; k < n; ++k) {
        if (ignored_[k]) continue;
        const int32_t d = domains.of_node[nodes[k]];
        if (d < 0) {
          without_key = true;
        } else if (seen_[d] != stamp_) {
          seen_[d] = stamp_;
          ++size;
        }
      }
      size += without_key ? 1 : 0;
    }
    topology_weight_[i] = std::log(static_cast<double>(size + 2));
  }
  // The raw score: the weighted matching pods, rounded (Score).
  int64_t min_score = INT64_MAX;
  int64_t max_score = 0;
  for (size_t k = 0; k < n; ++k) {
    if (ignored_[k]) continue;
    const NodeId node = nodes[k];
    double sum = 0;
    for (size_t i = 0; i < plan.soft.size(); ++i) {
      const SoftConstraint& sc = plan.soft[i];
      const int32_t d = index_.domains(sc.domains).of_node[node];
      if (d < 0) continue;
      const int32_t count = sc.hostname ? index_.matcher(sc.matcher).on_node[node]
                                        : index_.counts(sc.counts).count[d];
      sum +=
          static_cast<double>(count) * topology_weight_[i] + static_cast<double>(sc.max_skew - 1);
    }
    scores[k] = static_cast<int64_t>(std::round(sum));
    min_score = std::min(min_score, scores[k]);
    max_score = std::max(max_score, scores[k]);
  }
  // Fewer matching pods is better: reversed and scaled over the candidates (NormalizeScore).
  for (size_t k = 0; k < n; ++k) {
    if (ignored_[k]) {
      scores[k] = 0;
    } else if (max_score == 0) {
      scores[k] = kMaxNodeScore;
    } else {
      scores[k] = kMaxNodeScore * (max_score + min_score - scores[k]) / max_score;
    }
  }
}

// ---- Arguments: weight, defaultingType (System | List) and defaultConstraints (a YAML
// list of constraints without selectors, as in kube-scheduler's PodTopologySpreadArgs).

// A label key as Kubernetes allows it: an optional DNS-subdomain prefix and '/', then a
// name of at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
bool IsLabelKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxLabelKeyLength) return false;
  const size_t slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char ch : prefix) {
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.')) return false;
    }
  }
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char ch : name) {
    if (!(alnum(ch) || ch == '-' || ch == '_' || ch == '.')) return false;
  }
  return true;
}

Status ParseDefaultConstraint(const PluginArgument& node, const std::string& source,
                              const std::string& field, Constraint* out) {
  if (!node.is_map()) return ArgumentError(source, node, field, "expected a mapping");
  bool has_skew = false, has_key = false, has_when = false;
  for (size_t i = 0; i < node.keys().size(); ++i) {
    const PluginArgument::Key& key_at = node.keys()[i];
    const std::string& key = key_at.name;
    // The key itself, for messages about it.
    const PluginArgument key_node = PluginArgument::Scalar(key, false, key_at.where);
    const PluginArgument& value = node.items()[i];
    const std::string at = field + "." + key;
    auto policy = [&](bool* honor) {
      const std::string v = value.is_scalar() ? value.scalar() : "";
      if (v != "Honor" && v != "Ignore") {
        return ArgumentError(source, value, at,
                             "expected Honor or Ignore, got " + QuoteForMessage(v));
      }
      *honor = v == "Honor";
      return Status::Ok();
    };
    if (key == "maxSkew") {
      int64_t skew = 0;
      GANTRY_RETURN_IF_ERROR(ReadArgumentInt(value, source, at, 1, INT32_MAX, &skew));
      out->max_skew = static_cast<int32_t>(skew);
      has_skew = true;
    } else if (key == "topologyKey") {
      const std::string v = value.is_scalar() ? value.scalar() : "";
      if (!IsLabelKey(v)) {
        return ArgumentError(source, value, at, "expected a label key, got " + QuoteForMessage(v));
      }
      out->topology_key = v;
      has_key = true;
    } else if (key == "whenUnsatisfiable") {
      const std::string v = value.is_scalar() ? value.scalar() : "";
      if (v != "DoNotSchedule" && v != "ScheduleAnyway") {
        return ArgumentError(source, value, at,
                             "expected DoNotSchedule or ScheduleAnyway, got " + QuoteForMessage(v));
      }
      out->when_unsatisfiable = v == "DoNotSchedule" ? When::kDoNotSchedule : When::kScheduleAnyway;
      has_when = true;
    } else if (key == "minDomains") {
      int64_t min = 0;
      GANTRY_RETURN_IF_ERROR(ReadArgumentInt(value, source, at, 1, INT32_MAX, &min));
      out->min_domains = static_cast<int32_t>(min);
    } else if (key == "nodeAffinityPolicy") {
      GANTRY_RETURN_IF_ERROR(policy(&out->honor_node_affinity));
    } else if (key == "nodeTaintsPolicy") {
      GANTRY_RETURN_IF_ERROR(policy(&out->honor_node_taints));
    } else if (key == "labelSelector" || key == "matchLabelKeys") {
      return ArgumentError(source, key_node, at,
                           "a default constraint takes no selector: each pod's comes from its "
                           "Services and owners");
    } else {
      return ArgumentError(source, key_node, at,
                           "unknown field (known: maxSkew, topologyKey, whenUnsatisfiable, "
                           "minDomains, nodeAffinityPolicy, nodeTaintsPolicy)");
    }
  }
  if (!has_skew) return ArgumentError(source, node, field + ".maxSkew", "missing");
  if (!has_key) return ArgumentError(source, node, field + ".topologyKey", "missing");
  if (!has_when) return ArgumentError(source, node, field + ".whenUnsatisfiable", "missing");
  return Status::Ok();
}

// The constraints as configured: a list (null: none). The configuration's reader parsed
// them (yaml/scheduler_config_yaml.h), a list given as text included.
Result<std::vector<Constraint>> ParseDefaultConstraints(const PluginArgument& root) {
  const std::string source = "plugin podtopologyspread: argument defaultConstraints";
  std::vector<Constraint> out;
  if (root.is_null()) return out;
  if (!root.is_list()) {
    return ArgumentError(source, root, "defaultConstraints", "expected a list of constraints");
  }
  for (size_t i = 0; i < root.items().size(); ++i) {
    const std::string field = "defaultConstraints[" + std::to_string(i) + "]";
    Constraint c;
    GANTRY_RETURN_IF_ERROR(ParseDefaultConstraint(root.items()[i], source, field, &c));
    for (const Constraint& earlier : out) {
      if (earlier.topology_key == c.topology_key &&
          earlier.when_unsatisfiable == c.when_unsatisfiable) {
        return ArgumentError(source, root.items()[i], field,
                             "a second constraint for topologyKey " +
                                 QuoteForMessage(c.topology_key) +
                                 " with the same whenUnsatisfiable");
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Plugin>> NewPodTopologySpreadPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  int64_t weight = 1;
  GANTRY_RETURN_IF_ERROR(args.Int("weight", &weight));
  args.Take("defaultingType");
  args.Take("defaultConstraints");
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  std::vector<Constraint> constraints;
  auto listed = config.arguments.find("defaultConstraints");
  if (listed != config.arguments.end()) {
    Result<std::vector<Constraint>> parsed = ParseDefaultConstraints(listed->second);
    if (!parsed.ok()) return parsed.status();
    constraints = std::move(parsed).value();
  }
  // As kube-scheduler defaults it: List when constraints are given, else System.
  std::string defaulting = constraints.empty() ? "System" : "List";
  auto type = config.arguments.find("defaultingType");
  if (type != config.arguments.end()) defaulting = type->second.Text();
  if (defaulting == "System") {
    if (!constraints.empty()) {
      return Status::Invalid(
          "plugin podtopologyspread: defaultingType System takes no defaultConstraints (the "
          "system's are used; say List to use these)");
    }
    return std::unique_ptr<Plugin>(
        new PodTopologySpreadPlugin(weight, SystemDefaultConstraints(), /*system_defaulted=*/true));
  }
  if (defaulting != "List") {
    return Status::Invalid(
        "plugin podtopologyspread: argument defaultingType must be System or List, got " +
        QuoteForMessage(defaulting));
  }
  return std::unique_ptr<Plugin>(
      new PodTopologySpreadPlugin(weight, std::move(constraints), /*system_defaulted=*/false));
}

bool PodTopologySpreadHasDefaults(const PluginConfig& config) {
  std::vector<Constraint> constraints;
  auto listed = config.arguments.find("defaultConstraints");
  if (listed != config.arguments.end()) {
    Result<std::vector<Constraint>> parsed = ParseDefaultConstraints(listed->second);
    if (!parsed.ok()) return false;
    constraints = std::move(parsed).value();
  }
  std::string defaulting = constraints.empty() ? "System" : "List";
  auto type = config.arguments.find("defaultingType");
  if (type != config.arguments.end()) defaulting = type->second.Text();
  if (defaulting == "System") return constraints.empty();
  return defaulting == "List" && !constraints.empty();
}

}  // namespace gantry
