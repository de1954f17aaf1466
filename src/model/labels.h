// Labels, taints, tolerations and node selection rules, with Kubernetes' semantics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry {

// Key/value labels, kept sorted by key so that lookups are a binary search and two equal
// label sets compare equal.
class Labels {
 public:
  Labels() = default;
  explicit Labels(std::vector<std::pair<std::string, std::string>> pairs);

  void Set(std::string key, std::string value);
  // Returns nullptr when `key` is absent.
  const std::string* Find(std::string_view key) const;
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }
  bool empty() const { return pairs_.empty(); }
  bool operator==(const Labels&) const = default;

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
// Parses "NoSchedule", "PreferNoSchedule", "NoExecute"; false otherwise.
bool ParseTaintEffect(std::string_view text, TaintEffect* out);
std::string_view TaintEffectName(TaintEffect effect);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Taint&) const = default;
  std::string ToString() const;  // "key=value:Effect"
};

struct Toleration {
  enum class Op { kEqual, kExists };
  std::string key;  // empty with kExists tolerates every taint
  Op op = Op::kEqual;
  std::string value;
  bool any_effect = true;  // no effect given: tolerates all effects
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Toleration&) const = default;

  bool Tolerates(const Taint& taint) const;
};

// True when every NoSchedule/NoExecute taint is tolerated (PreferNoSchedule never blocks).
// Sets *blocking to the first untolerated taint otherwise.
bool ToleratesAll(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints,
                  const Taint** blocking);

// The key of a node selector term's `matchFields` requirement on `metadata.name` (the
// only field Kubernetes allows there), kept among the label requirements of its term.
// No label key can be this: ':' is not allowed in one.
inline constexpr std::string_view kNodeNameField = "field:metadata.name";

struct SelectorRequirement {
  // Gt and Lt only in node selectors: the label's value, read as an integer, is greater
  // (less) than the one value given; a value that is not an integer matches neither.
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;  // a label key, or kNodeNameField
  Op op = Op::kIn;
  std::vector<std::string> values;
  bool operator==(const SelectorRequirement&) const = default;

  // `node_name`: what kNodeNameField requirements compare with (a node's name).
  bool Matches(const Labels& labels, std::string_view node_name = {}) const;
};
// A Gt/Lt operand as Kubernetes reads it (strconv.ParseInt(s, 10, 64)): an optional sign
// and decimal digits, within 64 bits.
bool ParseSelectorInteger(std::string_view text, int64_t* out);

// Parses In, NotIn, Exists, DoesNotExist, and with `numeric` also Gt and Lt.
bool ParseSelectorOp(std::string_view text, SelectorRequirement::Op* out, bool numeric = false);
std::string_view SelectorOpName(SelectorRequirement::Op op);

struct PreferredNodeTerm {
  int32_t weight = 0;  // 1..100
  std::vector<SelectorRequirement> term;
  bool operator==(const PreferredNodeTerm&) const = default;
};

// Node affinity. Required: the node must match at least one term; a term matches when
// all of its requirements do, and a term with no requirements matches nothing; no terms
// at all means no constraint. Preferred: each term the node matches adds its weight to
// the node's score.
struct NodeAffinity {
  std::vector<std::vector<SelectorRequirement>> terms;
  std::vector<PreferredNodeTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;

  bool Matches(const Labels& labels, std::string_view node_name = {}) const;
  // The sum of the weights of the preferred terms the node matches.
  int64_t PreferredWeight(const Labels& labels, std::string_view node_name = {}) const;
};

// A v1.NodeSelector (a ResourceSlice's, an allocation's): the node matches one of the
// terms; unlike NodeAffinity's required terms, no terms at all matches no node.
bool SelectorTermsMatch(const std::vector<std::vector<SelectorRequirement>>& terms,
                        const Labels& labels, std::string_view node_name);

// A plain nodeSelector: every pair must be present with the same value.
bool MatchesNodeSelector(const Labels& selector, const Labels& labels);

}  // namespace gantry
