// The inter-pod affinity plugin's per-session index (kube-scheduler's InterPodAffinity,
// plugins/inter_pod_affinity.cc): pods counted per (term, topology domain), so that the
// filter and the score of a candidate node are O(terms) lookups.
//
// The terms are those of the specs that have tasks when the session opens (running or
// pending), deduplicated by content: pods of a StatefulSet are a spec each but share one
// term. A "set" is what is counted: one term, or the conjunction of a spec's required
// affinity terms (kube-scheduler counts, for required affinity, the pods that match all
// of them). A topology domain is one (key, value) of a node label.
//
// Per (set, domain) the index keeps:
//   match   pods matching the set (for the incoming pod's own terms);
//   anti    pods whose required anti-affinity is this term (existing pods' anti-affinity);
//   score   the weights of pods whose preferred (or required, times hardPodAffinityWeight)
//           terms this is, signed (existing pods' preferences);
// each also for the releasing pods alone, so that the view of room once they have ended
// (PlacementSearch's future view) is the difference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/filter.h"
#include "model/cluster.h"

namespace gantry {

class PodAffinityIndex {
 public:
  // `specs`: the specs with pod affinity terms whose terms are indexed. Only the terms:
  // what a spec matches and owns can be asked at once (Filters, Scores, Inert), and
  // costs no pass over the nodes or the pods.
  PodAffinityIndex(const ClusterState& cluster, const std::vector<SpecId>& specs,
                   int32_t hard_pod_affinity_weight);

  // Each node's domains for the terms' keys: one pass over the nodes' labels.
  // REQUIRES: before Count, Filter and Score.
  void BuildDomains();
  // BuildDomains, then counts the cluster's running tasks (the session as it opened).
  void CountRunning();
  bool counting() const { return domains_built_; }

  // A pod of `spec` starts (sign +1) or stops (-1) counting on `node`. `releasing`: the
  // pod, counted already, starts (stops) releasing: the future view takes it away.
  void Count(SpecId spec, NodeId node, bool releasing, int sign);

  // The verdict for a pod of `spec` on `node`, kube-scheduler's checks in its order.
  // `future`: releasing pods do not count. `nominated`: the pipelined tasks on `node` whose
  // priority is at least the pod's (kube-scheduler adds nominated pods to the node for
  // filters only).
  FilterResult Filter(const TaskSpec& spec, NodeId node, bool future,
                      std::span<const TaskId> nominated);
  // The raw score (positive for affinity, negative for anti-affinity), before min-max.
  int64_t Score(const TaskSpec& spec, NodeId node, bool future);
  // Whether some node can fail Filter (score other than 0) for a pod of `spec`: it has
  // terms of its own, or other pods' terms match it.
  bool Filters(const TaskSpec& spec) {
    const SpecInfo& info = InfoOf(spec);
    return !info.affinity_keys.empty() || !info.anti.empty() || !info.existing_anti.empty();
  }
  bool Scores(const TaskSpec& spec) {
    const SpecInfo& info = InfoOf(spec);
    return !info.preferred.empty() || !info.existing_score.empty();
  }
  // Whether a pod of `spec` adds to no count (matches no counted set, owns no term).
  bool Inert(SpecId spec) { return InfoOf(spec).inert; }

 private:
  static constexpr uint32_t kNoDomain = UINT32_MAX;

  // A term as it matches pods: its content (weight zeroed: the weight belongs to who
  // prefers it) and the namespace of the pod whose term it is.
  struct TermKey {
    PodAffinityTerm term;
    std::string owner_namespace;
    bool operator==(const TermKey&) const = default;
  };
  struct TermKeyHash {
    size_t operator()(const TermKey& t) const;
  };
  struct Term {
    TermKey id;
    uint32_t key = 0;  // index in keys_
    uint32_t set = 0;  // its one-term set
  };
  struct Set {
    std::vector<uint32_t> terms;  // term ids; more than one: a conjunction
    bool counts_matches = false;  // some spec's own term(s): count the pods matching it
    bool anti_owned = false;      // some spec's required anti-affinity term
    bool score_owned = false;     // some spec's preferred term, or required affinity term
  };
  struct SetKey {  // one set's count on the domain of one topology key
    uint32_t set;
    uint32_t key;
  };
  struct WeightedSetKey {
    uint32_t set;
    uint32_t key;
    int64_t weight;
  };
  // What the index knows of a spec, made on first need.
  struct SpecInfo {
    bool known = false;
    // Its own terms.
    uint32_t affinity_set = UINT32_MAX;   // the conjunction of its required affinity terms
    std::vector<uint32_t> affinity_keys;  // the key of each of them
    bool matches_own_affinity = false;
    std::vector<SetKey> anti;               // required anti-affinity (and owned: counted as `anti`)
    std::vector<WeightedSetKey> preferred;  // +weight affinity, -weight anti-affinity
    // Other pods' terms that match it.
    std::vector<SetKey> existing_anti;
    std::vector<SetKey> existing_score;
    // What a pod of this spec adds to when counted.
    std::vector<uint32_t> matched_sets;  // counting sets it matches
    std::vector<WeightedSetKey> score_owned;
    bool inert = false;  // adds to nothing
  };
  struct Counts {
    int32_t match = 0;
    int32_t match_releasing = 0;
    int32_t anti = 0;
    int32_t anti_releasing = 0;
    int64_t score = 0;
    int64_t score_releasing = 0;
  };

  // The term's id, interned; `owner`: the namespace of the pod whose term it is.
  uint32_t InternTerm(const PodAffinityTerm& term, const std::string& owner);
  uint32_t FindTerm(const PodAffinityTerm& term, const std::string& owner) const;
  // A key's id. Once the domains are built, a new key gets each node's domain for it.
  uint32_t InternKey(const std::string& key);
  // The set of these terms (a term's own set when there is one).
  uint32_t InternConjunction(const std::vector<uint32_t>& terms);
  static std::string ConjunctionKey(const std::vector<uint32_t>& terms);
  SpecInfo& InfoOf(SpecId id);
  SpecInfo& InfoOf(const TaskSpec& spec);
  void Describe(const TaskSpec& spec, SpecInfo* info);
  uint32_t DomainOf(uint32_t key, NodeId node) const {
    const std::vector<KeyDomain>& domains = node_domains_[node];
    auto it = std::lower_bound(domains.begin(), domains.end(), key,
                               [](const KeyDomain& d, uint32_t k) { return d.key < k; });
    return it != domains.end() && it->key == key ? it->domain : kNoDomain;
  }
  const Counts* Find(uint32_t set, uint32_t domain) const;
  Counts& Upsert(uint32_t set, uint32_t domain);
  void Grow();

  const ClusterState& cluster_;
  int32_t hard_weight_;
  std::vector<Term> terms_;
  std::unordered_map<TermKey, uint32_t, TermKeyHash> term_ids_;
  std::vector<Set> sets_;
  std::unordered_map<std::string, uint32_t> conjunction_ids_;  // by the term ids, as bytes
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> keys_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> key_ids_;
  // Per node, the domain of each interned key it has a label for, by key id: as many
  // entries as the nodes carry such labels (a key no node has costs nothing). Removed
  // nodes have none: kube-scheduler's snapshot holds no node that is gone, so neither
  // they nor the pods left on them count.
  struct KeyDomain {
    uint32_t key;
    uint32_t domain;
  };
  std::vector<std::vector<KeyDomain>> node_domains_;
  bool domains_built_ = false;
  uint32_t next_domain_ = 0;     // domain ids are unique over all keys
  std::vector<SpecInfo> infos_;  // per spec id
  SpecInfo scratch_;             // for a spec that is not the cluster's
  // Pods matching each set on a node with a key of one of its terms (kube-scheduler's
  // "no pod in the cluster matches" is this at zero), and of those the releasing ones.
  std::vector<int64_t> present_;
  std::vector<int64_t> present_releasing_;
  // (set << 32 | domain) -> counts: open addressing with linear probing; kEmpty marks a
  // free slot. Entries that go back to zero stay (a placement undone comes back soon).
  static constexpr uint64_t kEmpty = UINT64_MAX;
  std::vector<uint64_t> slot_keys_;
  std::vector<Counts> slot_counts_;
  size_t used_slots_ = 0;
};

}  // namespace gantry
