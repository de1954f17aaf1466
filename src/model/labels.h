// Labels, taints, tolerations and node selection rules, with Kubernetes' semantics.
#pragma once

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

struct SelectorRequirement {
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = Op::kIn;
  std::vector<std::string> values;
  bool operator==(const SelectorRequirement&) const = default;

  bool Matches(const Labels& labels) const;
};
bool ParseSelectorOp(std::string_view text, SelectorRequirement::Op* out);

// Required node affinity: the node must match at least one term; a term matches when all
// of its requirements do, and a term with no requirements matches nothing. No terms at
// all means no constraint.
struct NodeAffinity {
  std::vector<std::vector<SelectorRequirement>> terms;
  bool operator==(const NodeAffinity&) const = default;

  bool Matches(const Labels& labels) const;
};

// A plain nodeSelector: every pair must be present with the same value.
bool MatchesNodeSelector(const Labels& selector, const Labels& labels);

}  // namespace gantry
