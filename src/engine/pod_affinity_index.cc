#include "engine/pod_affinity_index.h"

#include <algorithm>
#include <functional>

#include "model/hash.h"

namespace gantry {
namespace {

constexpr uint32_t kNoSet = UINT32_MAX;

void AddSelector(const std::optional<LabelSelector>& selector, Hasher* h) {
  h->Add(static_cast<uint64_t>(selector.has_value()));
  if (!selector.has_value()) return;
  h->Add(selector->match_labels);
  h->Add(selector->match_expressions);
}

bool Contains(const std::vector<uint32_t>& sets, uint32_t set) {
  return std::find(sets.begin(), sets.end(), set) != sets.end();
}

uint64_t Spread(uint64_t v) {
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  return v ^ (v >> 31);
}

}  // namespace

size_t PodAffinityIndex::TermKeyHash::operator()(const TermKey& t) const {
  Hasher h;
  h.Add(t.owner_namespace).Add(t.term.topology_key);
  h.Add(static_cast<uint64_t>(t.term.namespaces.size()));
  for (const std::string& ns : t.term.namespaces) h.Add(ns);
  AddSelector(t.term.selector, &h);
  AddSelector(t.term.namespace_selector, &h);
  return h.value();
}

PodAffinityIndex::PodAffinityIndex(const ClusterState& cluster, const std::vector<SpecId>& specs,
                                   int32_t hard_pod_affinity_weight)
    : cluster_(cluster), hard_weight_(hard_pod_affinity_weight) {
  for (SpecId id : specs) {
    const TaskSpec& spec = cluster.spec(id);
    const PodAffinity& a = spec.pod_affinity;
    std::vector<uint32_t> affinity;
    for (const PodAffinityTerm& t : a.required_affinity) {
      const uint32_t term = InternTerm(t, spec.namespace_);
      affinity.push_back(term);
      if (hard_weight_ > 0) sets_[terms_[term].set].score_owned = true;
    }
    if (!affinity.empty()) sets_[InternConjunction(affinity)].counts_matches = true;
    for (const PodAffinityTerm& t : a.required_anti_affinity) {
      Set& set = sets_[terms_[InternTerm(t, spec.namespace_)].set];
      set.counts_matches = true;
      set.anti_owned = true;
    }
    for (const auto* preferred : {&a.preferred_affinity, &a.preferred_anti_affinity}) {
      for (const PodAffinityTerm& t : *preferred) {
        Set& set = sets_[terms_[InternTerm(t, spec.namespace_)].set];
        set.counts_matches = true;
        set.score_owned = true;
      }
    }
  }
  present_.assign(sets_.size(), 0);
  present_releasing_.assign(sets_.size(), 0);
  infos_.resize(cluster.specs().size());
  slot_keys_.assign(1024, kEmpty);
  slot_counts_.resize(slot_keys_.size());
}

uint32_t PodAffinityIndex::InternKey(const std::string& key) {
  auto [it, inserted] = key_ids_.emplace(key, static_cast<uint32_t>(keys_.size()));
  if (!inserted) return it->second;
  keys_.push_back(key);
  if (!domains_built_) return it->second;
  // A key first seen after the build (a spec the index was not built with): its id is the
  // largest, so appending keeps each node's list in key order.
  std::unordered_map<std::string_view, uint32_t> ids;
  for (NodeId node = 0; node < node_domains_.size(); ++node) {
    const Node& nd = cluster_.node(node);
    const std::string* value = nd.removed ? nullptr : nd.labels.Find(key);
    if (value == nullptr) continue;
    auto [v, fresh] = ids.emplace(*value, next_domain_);
    if (fresh) ++next_domain_;
    node_domains_[node].push_back({it->second, v->second});
  }
  return it->second;
}

void PodAffinityIndex::BuildDomains() {
  if (domains_built_) return;
  const size_t n = cluster_.nodes().size();
  node_domains_.assign(n, {});
  std::vector<std::unordered_map<std::string_view, uint32_t>> ids(keys_.size());
  for (NodeId node = 0; node < n; ++node) {
    const Node& nd = cluster_.node(node);
    if (nd.removed) continue;
    std::vector<KeyDomain>& domains = node_domains_[node];
    for (const auto& [key, value] : nd.labels.pairs()) {
      auto k = key_ids_.find(std::string_view(key));
      if (k == key_ids_.end()) continue;
      auto [v, fresh] = ids[k->second].emplace(value, next_domain_);
      if (fresh) ++next_domain_;
      domains.push_back({k->second, v->second});
    }
    std::sort(domains.begin(), domains.end(),
              [](const KeyDomain& a, const KeyDomain& b) { return a.key < b.key; });
  }
  domains_built_ = true;
}

void PodAffinityIndex::CountRunning() {
  BuildDomains();
  for (NodeId node = 0; node < cluster_.nodes().size(); ++node) {
    if (cluster_.node(node).removed) continue;
    for (TaskId t : cluster_.tasks_on(node)) Count(cluster_.task(t).spec, node, false, +1);
  }
}

uint32_t PodAffinityIndex::InternTerm(const PodAffinityTerm& term, const std::string& owner) {
  TermKey id{term, owner};
  id.term.weight = 0;
  if (auto it = term_ids_.find(id); it != term_ids_.end()) return it->second;
  const auto term_id = static_cast<uint32_t>(terms_.size());
  const auto set = static_cast<uint32_t>(sets_.size());
  sets_.push_back(Set{{term_id}});
  terms_.push_back(Term{id, InternKey(term.topology_key), set});
  term_ids_.emplace(std::move(id), term_id);
  return term_id;
}

uint32_t PodAffinityIndex::FindTerm(const PodAffinityTerm& term, const std::string& owner) const {
  TermKey id{term, owner};
  id.term.weight = 0;
  auto it = term_ids_.find(id);
  return it == term_ids_.end() ? kNoSet : it->second;
}

std::string PodAffinityIndex::ConjunctionKey(const std::vector<uint32_t>& terms) {
  return std::string(reinterpret_cast<const char*>(terms.data()), terms.size() * sizeof(uint32_t));
}

uint32_t PodAffinityIndex::InternConjunction(const std::vector<uint32_t>& terms) {
  if (terms.size() == 1) return terms_[terms[0]].set;
  auto [it, inserted] =
      conjunction_ids_.emplace(ConjunctionKey(terms), static_cast<uint32_t>(sets_.size()));
  if (inserted) sets_.push_back(Set{terms});
  return it->second;
}

PodAffinityIndex::SpecInfo& PodAffinityIndex::InfoOf(SpecId id) {
  SpecInfo& info = infos_[id];
  if (!info.known) Describe(cluster_.spec(id), &info);
  return info;
}

PodAffinityIndex::SpecInfo& PodAffinityIndex::InfoOf(const TaskSpec& spec) {
  // The search passes the cluster's own specs; their place in the vector is their id.
  const std::vector<TaskSpec>& specs = cluster_.specs();
  const std::less<const TaskSpec*> before;
  if (!specs.empty() && !before(&spec, specs.data()) &&
      before(&spec, specs.data() + specs.size())) {
    return InfoOf(static_cast<SpecId>(&spec - specs.data()));
  }
  scratch_ = SpecInfo{};
  Describe(spec, &scratch_);
  return scratch_;
}

void PodAffinityIndex::Describe(const TaskSpec& spec, SpecInfo* info) {
  info->known = true;
  const std::string& ns = spec.namespace_;
  const Labels& ns_labels = cluster_.namespace_labels(ns);
  // Other pods' terms (and its own) that a pod of this spec matches.
  std::vector<uint8_t> matches(terms_.size());
  for (size_t t = 0; t < terms_.size(); ++t) {
    matches[t] =
        terms_[t].id.term.MatchesPod(ns, ns_labels, spec.labels, terms_[t].id.owner_namespace);
  }
  for (uint32_t g = 0; g < sets_.size(); ++g) {
    const Set& set = sets_[g];
    if (!std::all_of(set.terms.begin(), set.terms.end(), [&](uint32_t t) { return matches[t]; })) {
      continue;
    }
    if (set.counts_matches) info->matched_sets.push_back(g);
    if (set.terms.size() != 1) continue;
    const uint32_t key = terms_[set.terms[0]].key;
    if (set.anti_owned) info->existing_anti.push_back({g, key});
    if (set.score_owned) info->existing_score.push_back({g, key});
  }
  // Its own terms. A spec the index was not built with (not the cluster's, or without
  // tasks when the session opened) finds no set for them: its terms match no pod.
  const PodAffinity& a = spec.pod_affinity;
  auto set_of = [&](const PodAffinityTerm& t) {
    const uint32_t id = FindTerm(t, ns);
    return id == kNoSet ? kNoSet : terms_[id].set;
  };
  if (!a.required_affinity.empty()) {
    std::vector<uint32_t> ids;
    bool all_known = true;
    info->matches_own_affinity = true;
    for (const PodAffinityTerm& t : a.required_affinity) {
      const uint32_t id = FindTerm(t, ns);
      all_known = all_known && id != kNoSet;
      ids.push_back(id);
      info->affinity_keys.push_back(InternKey(t.topology_key));
      info->matches_own_affinity =
          info->matches_own_affinity && t.MatchesPod(ns, ns_labels, spec.labels, ns);
      if (hard_weight_ > 0 && id != kNoSet) {
        info->score_owned.push_back({terms_[id].set, terms_[id].key, hard_weight_});
      }
    }
    if (all_known) {
      if (ids.size() == 1) {
        info->affinity_set = terms_[ids[0]].set;
      } else if (auto it = conjunction_ids_.find(ConjunctionKey(ids));
                 it != conjunction_ids_.end()) {
        info->affinity_set = it->second;
      }
    }
  }
  for (const PodAffinityTerm& t : a.required_anti_affinity) {
    info->anti.push_back({set_of(t), InternKey(t.topology_key)});
  }
  for (const PodAffinityTerm& t : a.preferred_affinity) {
    info->preferred.push_back({set_of(t), InternKey(t.topology_key), t.weight});
    info->score_owned.push_back(info->preferred.back());
  }
  for (const PodAffinityTerm& t : a.preferred_anti_affinity) {
    info->preferred.push_back({set_of(t), InternKey(t.topology_key), -int64_t{t.weight}});
    info->score_owned.push_back(info->preferred.back());
  }
  info->inert = info->matched_sets.empty() && info->anti.empty() && info->score_owned.empty();
}

const PodAffinityIndex::Counts* PodAffinityIndex::Find(uint32_t set, uint32_t domain) const {
  if (set == kNoSet) return nullptr;
  const uint64_t key = (uint64_t{set} << 32) | domain;
  const size_t mask = slot_keys_.size() - 1;
  for (size_t i = Spread(key) & mask;; i = (i + 1) & mask) {
    if (slot_keys_[i] == key) return &slot_counts_[i];
    if (slot_keys_[i] == kEmpty) return nullptr;
  }
}

PodAffinityIndex::Counts& PodAffinityIndex::Upsert(uint32_t set, uint32_t domain) {
  if (2 * (used_slots_ + 1) > slot_keys_.size()) Grow();
  const uint64_t key = (uint64_t{set} << 32) | domain;
  const size_t mask = slot_keys_.size() - 1;
  size_t i = Spread(key) & mask;
  while (slot_keys_[i] != key && slot_keys_[i] != kEmpty) i = (i + 1) & mask;
  if (slot_keys_[i] == kEmpty) {
    slot_keys_[i] = key;
    ++used_slots_;
  }
  return slot_counts_[i];
}

void PodAffinityIndex::Grow() {
  std::vector<uint64_t> keys(slot_keys_.size() * 2, kEmpty);
  std::vector<Counts> counts(keys.size());
  const size_t mask = keys.size() - 1;
  for (size_t j = 0; j < slot_keys_.size(); ++j) {
    if (slot_keys_[j] == kEmpty) continue;
    size_t i = Spread(slot_keys_[j]) & mask;
    while (keys[i] != kEmpty) i = (i + 1) & mask;
    keys[i] = slot_keys_[j];
    counts[i] = slot_counts_[j];
  }
  slot_keys_ = std::move(keys);
  slot_counts_ = std::move(counts);
}

void PodAffinityIndex::Count(SpecId spec, NodeId node, bool releasing, int sign) {
  const SpecInfo& info = InfoOf(spec);
  if (info.inert) return;
  for (uint32_t g : info.matched_sets) {
    for (uint32_t t : sets_[g].terms) {
      const uint32_t d = DomainOf(terms_[t].key, node);
      if (d == kNoDomain) continue;
      Counts& c = Upsert(g, d);
      (releasing ? c.match_releasing : c.match) += sign;
      (releasing ? present_releasing_ : present_)[g] += sign;
    }
  }
  for (const SetKey& sk : info.anti) {
    const uint32_t d = DomainOf(sk.key, node);
    if (sk.set == kNoSet || d == kNoDomain) continue;
    Counts& c = Upsert(sk.set, d);
    (releasing ? c.anti_releasing : c.anti) += sign;
  }
  for (const WeightedSetKey& wk : info.score_owned) {
    const uint32_t d = DomainOf(wk.key, node);
    if (wk.set == kNoSet || d == kNoDomain) continue;
    Counts& c = Upsert(wk.set, d);
    (releasing ? c.score_releasing : c.score) += sign * wk.weight;
  }
}

FilterResult PodAffinityIndex::Filter(const TaskSpec& spec, NodeId node, bool future,
                                      std::span<const TaskId> nominated) {
  const SpecInfo& info = InfoOf(spec);
  auto matching = [&](uint32_t set, uint32_t domain) -> int64_t {
    const Counts* c = Find(set, domain);
    return c == nullptr ? 0 : c->match - (future ? c->match_releasing : 0);
  };
  // Its required affinity: every term needs a pod matching all of them in the node's
  // domain of its key, and the node must have every key; unless no pod anywhere matches
  // and the pod matches its own terms (the first of a group with affinity to itself).
  // Nominated pods cannot change this verdict: kube-scheduler adds only those on this
  // node, which (having every key) they only fill, and it wants both runs to pass.
  if (!info.affinity_keys.empty()) {
    bool pods_exist = true;
    for (size_t i = 0; i < info.affinity_keys.size(); ++i) {
      const uint32_t d = DomainOf(info.affinity_keys[i], node);
      if (d == kNoDomain)
        return FilterResult::Fail(FilterCode::kPodAffinity, static_cast<uint32_t>(i));
      if (pods_exist && matching(info.affinity_set, d) <= 0) pods_exist = false;
    }
    if (!pods_exist) {
      const int64_t present =
          info.affinity_set == kNoSet
              ? 0
              : present_[info.affinity_set] - (future ? present_releasing_[info.affinity_set] : 0);
      if (present != 0 || !info.matches_own_affinity) {
        return FilterResult::Fail(FilterCode::kPodAffinity);
      }
    }
  }
  // Its required anti-affinity: no matching pod in the node's domain of any term's key.
  for (size_t i = 0; i < info.anti.size(); ++i) {
    const uint32_t d = DomainOf(info.anti[i].key, node);
    if (d == kNoDomain) continue;
    bool blocked = matching(info.anti[i].set, d) > 0;
    for (TaskId q : nominated) {
      blocked = blocked || Contains(InfoOf(cluster_.task(q).spec).matched_sets, info.anti[i].set);
    }
    if (blocked) return FilterResult::Fail(FilterCode::kPodAntiAffinity, static_cast<uint32_t>(i));
  }
  // Other pods' required anti-affinity that matches it, in the node's domain.
  for (const SetKey& sk : info.existing_anti) {
    const uint32_t d = DomainOf(sk.key, node);
    if (d == kNoDomain) continue;
    const Counts* c = Find(sk.set, d);
    if (c != nullptr && c->anti - (future ? c->anti_releasing : 0) > 0) {
      return FilterResult::Fail(FilterCode::kExistingAntiAffinity);
    }
  }
  for (TaskId q : nominated) {
    for (const SetKey& sk : InfoOf(cluster_.task(q).spec).anti) {
      if (DomainOf(sk.key, node) == kNoDomain) continue;
      if (std::any_of(info.existing_anti.begin(), info.existing_anti.end(),
                      [&](const SetKey& mine) { return mine.set == sk.set; })) {
        return FilterResult::Fail(FilterCode::kExistingAntiAffinity);
      }
    }
  }
  return FilterResult::Ok();
}

int64_t PodAffinityIndex::Score(const TaskSpec& spec, NodeId node, bool future) {
  const SpecInfo& info = InfoOf(spec);
  int64_t sum = 0;
  for (const WeightedSetKey& wk : info.preferred) {
    const uint32_t d = DomainOf(wk.key, node);
    if (d == kNoDomain) continue;
    if (const Counts* c = Find(wk.set, d)) {
      sum += wk.weight * (c->match - (future ? c->match_releasing : 0));
    }
  }
  for (const SetKey& sk : info.existing_score) {
    const uint32_t d = DomainOf(sk.key, node);
    if (d == kNoDomain) continue;
    if (const Counts* c = Find(sk.set, d)) sum += c->score - (future ? c->score_releasing : 0);
  }
  return sum;
}

}  // namespace gantry
