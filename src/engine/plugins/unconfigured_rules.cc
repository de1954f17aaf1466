// unconfiguredrules: not configured by name. Policy::Compile adds it when the configuration
// leaves out a plugin that enforces a rule of the pod spec (nodeports, interpodaffinity,
// podtopologyspread, nodevolumelimits; see PodRule). A task whose spec uses such a rule fits
// no node, with a reason that names the rule and the missing plugin: a pod is never placed
// as if a rule it states were not there.
#include <algorithm>

#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

class UnconfiguredRulesPlugin : public SessionCopyable<UnconfiguredRulesPlugin>,
                                public NodePredicate {
 public:
  explicit UnconfiguredRulesPlugin(std::vector<PodRule> rules) : rules_(std::move(rules)) {}
  std::string_view name() const override { return "unconfiguredrules"; }

  // Out of the session when no spec uses a rule left without its plugin.
  void OnSessionOpen(Session& s) override {
    const auto& specs = s.cluster().specs();
    active_ = std::any_of(specs.begin(), specs.end(),
                          [this](const TaskSpec& spec) { return FirstUnenforced(spec) >= 0; });
  }
  bool ActiveInSession() const override { return active_; }

  // The spec alone decides, so the session's per-spec cache of static answers holds it.
  FilterResult FilterStatic(const TaskSpec& spec, const Node& /*node*/) const override {
    const int rule = FirstUnenforced(spec);
    if (rule < 0) return FilterResult::Ok();
    return FilterResult::Fail(FilterCode::kRuleNotConfigured, static_cast<uint32_t>(rule));
  }
  bool FiltersDynamically(const Session& /*s*/, const TaskSpec& /*spec*/) const override {
    return false;
  }
  FilterResult FilterDynamic(const Session& /*s*/, const TaskSpec& /*spec*/,
                             NodeId /*node*/) const override {
    return FilterResult::Ok();
  }

 private:
  int FirstUnenforced(const TaskSpec& spec) const {
    for (PodRule rule : rules_) {
      if (SpecUsesRule(spec, rule)) return static_cast<int>(rule);
    }
    return -1;
  }

  std::vector<PodRule> rules_;  // the rules whose plugin the configuration lacks
  bool active_ = true;
};

}  // namespace

std::unique_ptr<Plugin> NewUnconfiguredRulesPlugin(const std::vector<std::string>& configured) {
  std::vector<PodRule> missing;
  for (int i = 0; i < kPodRuleCount; ++i) {
    const auto rule = static_cast<PodRule>(i);
    if (std::find(configured.begin(), configured.end(), PluginEnforcing(rule)) == configured.end())
      missing.push_back(rule);
  }
  if (missing.empty()) return nullptr;
  return std::make_unique<UnconfiguredRulesPlugin>(std::move(missing));
}

}  // namespace gantry
