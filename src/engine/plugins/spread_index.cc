#include "engine/plugins/spread_index.h"

#include <algorithm>

#include "engine/session.h"

namespace gantry {
namespace {

// fn(task, node) for every counted task (CountsForSpread) as the session stands.
template <typename Fn>
void ForEachCountedTask(const Session& s, Fn&& fn) {
  const ClusterState& c = s.cluster();
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    if (c.node(n).removed) continue;
    for (TaskId t : c.tasks_on(n)) {
      if (s.task_status(t) == TaskStatus::kRunning) fn(t, n);
    }
  }
  // Tasks placed in this session are tasks of jobs that had pending tasks.
  for (JobId j : s.pending_jobs()) {
    for (TaskId t : c.job(j).tasks) {
      const TaskStatus status = s.task_status(t);
      if (status == TaskStatus::kAllocated || status == TaskStatus::kPipelined) {
        fn(t, s.state().placement_of(t).node);
      }
    }
  }
}

}  // namespace

void SpreadIndex::DomainCounts::Add(int32_t domain, int32_t delta) {
  const int32_t before = count[domain];
  const int32_t after = before + delta;
  count[domain] = after;
  if (!eligible[domain]) return;
  if (static_cast<size_t>(after) >= with_count.size()) with_count.resize(after + 1, 0);
  --with_count[before];
  ++with_count[after];
  // Counts move by one, so the minimum moves by at most one: up when the last domain at
  // the minimum leaves it, down when a domain goes below it.
  if (after < min) {
    min = after;
  } else if (before == min && with_count[before] == 0) {
    min = after;
  }
}

SpreadIndex::Id SpreadIndex::DomainsOf(const Session& s, const std::string& key) {
  auto it = domains_by_key_.find(key);
  if (it != domains_by_key_.end()) return it->second;
  const ClusterState& c = s.cluster();
  Domains d;
  d.key = key;
  d.of_node.assign(c.nodes().size(), -1);
  std::unordered_map<std::string_view, int32_t> by_value;
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    const Node& node = c.node(n);
    if (node.removed) continue;
    const std::string* value = node.labels.Find(key);
    if (value == nullptr) continue;
    auto [v, added] = by_value.emplace(*value, static_cast<int32_t>(by_value.size()));
    d.of_node[n] = v->second;
  }
  d.count = static_cast<uint32_t>(by_value.size());
  const Id id = static_cast<Id>(domains_.size());
  domains_.push_back(std::move(d));
  domains_by_key_.emplace(key, id);
  return id;
}

bool SpreadIndex::Matches(const Session& s, Matcher& m, SpecId spec) const {
  int8_t& known = m.matches_spec[spec];
  if (known < 0) {
    const TaskSpec& t = s.cluster().spec(spec);
    known = t.namespace_ == m.namespace_ && Selects(m.selector, t.labels) ? 1 : 0;
  }
  return known == 1;
}

SpreadIndex::Id SpreadIndex::MatcherOf(const Session& s, const std::string& ns,
                                       const std::optional<LabelSelector>& selector) {
  for (Id id = 0; id < matchers_.size(); ++id) {
    if (matchers_[id].namespace_ == ns && matchers_[id].selector == selector) return id;
  }
  const ClusterState& c = s.cluster();
  Matcher m;
  m.namespace_ = ns;
  m.selector = selector;
  m.on_node.assign(c.nodes().size(), 0);
  m.matches_spec.assign(c.specs().size(), -1);
  if (selector.has_value()) {  // no selector matches no pod: nothing to count
    ForEachCountedTask(s, [&](TaskId t, NodeId n) {
      if (Matches(s, m, c.task(t).spec)) ++m.on_node[n];
    });
  }
  matchers_.push_back(std::move(m));
  return static_cast<Id>(matchers_.size() - 1);
}

SpreadIndex::Id SpreadIndex::EligibilityOf(const Session& s, EligibilityKey key) {
  for (Id id = 0; id < eligibility_.size(); ++id) {
    if (eligibility_[id].key == key) return id;
  }
  std::vector<Id> keys;
  for (const std::string& k : key.required_keys) keys.push_back(DomainsOf(s, k));
  NodeAffinity required;
  required.terms = key.affinity_terms;
  const ClusterState& c = s.cluster();
  Eligibility e;
  e.of_node.assign(c.nodes().size(), 0);
  for (NodeId n = 0; n < c.nodes().size(); ++n) {
    const Node& node = c.node(n);
    if (node.removed) continue;
    const bool has_keys =
        std::all_of(keys.begin(), keys.end(), [&](Id k) { return domains_[k].of_node[n] >= 0; });
    if (!has_keys) continue;
    if (key.honor_affinity && !(MatchesNodeSelector(key.node_selector, node.labels) &&
                                required.Matches(node.labels, node.name))) {
      continue;
    }
    const Taint* blocking = nullptr;
    if (key.honor_taints && !ToleratesAll(key.tolerations, node.taints, &blocking)) continue;
    e.of_node[n] = 1;
  }
  e.key = std::move(key);
  eligibility_.push_back(std::move(e));
  return static_cast<Id>(eligibility_.size() - 1);
}

SpreadIndex::Id SpreadIndex::CountsOf(const Session& s, Id matcher, Id domains, Id eligibility) {
  const auto key = std::make_tuple(matcher, domains, eligibility);
  auto it = counts_by_key_.find(key);
  if (it != counts_by_key_.end()) return it->second;
  const size_t nodes = s.cluster().nodes().size();
  const Domains& d = domains_[domains];
  const Matcher& m = matchers_[matcher];
  const std::vector<uint8_t>& eligible_node = eligibility_[eligibility].of_node;
  DomainCounts counts;
  counts.matcher = matcher;
  counts.domains = domains;
  counts.eligibility = eligibility;
  counts.count.assign(d.count, 0);
  counts.eligible.assign(d.count, 0);
  for (NodeId n = 0; n < nodes; ++n) {
    const int32_t domain = d.of_node[n];
    if (domain < 0 || !eligible_node[n]) continue;
    counts.count[domain] += m.on_node[n];
    counts.eligible[domain] = 1;
  }
  int32_t most = 0;
  for (uint32_t k = 0; k < d.count; ++k) {
    if (counts.eligible[k]) most = std::max(most, counts.count[k]);
  }
  counts.with_count.assign(static_cast<size_t>(most) + 1, 0);
  for (uint32_t k = 0; k < d.count; ++k) {
    if (!counts.eligible[k]) continue;
    ++counts.eligible_domains;
    ++counts.with_count[counts.count[k]];
    counts.min = std::min(counts.min, counts.count[k]);
  }
  const Id id = static_cast<Id>(counts_.size());
  counts_.push_back(std::move(counts));
  counts_by_key_.emplace(key, id);
  matchers_[matcher].counts.push_back(id);
  return id;
}

void SpreadIndex::Apply(const Session& s, TaskId task, NodeId node, int32_t delta) {
  if (matchers_.empty()) return;
  const ClusterState& c = s.cluster();
  // A removed node is in no domain, and its tasks were not counted.
  if (node >= c.nodes().size() || c.node(node).removed) return;
  const SpecId spec = c.task(task).spec;
  for (Matcher& m : matchers_) {
    if (!Matches(s, m, spec)) continue;
    m.on_node[node] += delta;
    for (Id id : m.counts) {
      DomainCounts& counts = counts_[id];
      const int32_t domain = domains_[counts.domains].of_node[node];
      if (domain < 0 || !eligibility_[counts.eligibility].of_node[node]) continue;
      counts.Add(domain, delta);
    }
  }
}

}  // namespace gantry
