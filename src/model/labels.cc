#include "model/labels.h"

#include <algorithm>

namespace gantry {

Labels::Labels(std::vector<std::pair<std::string, std::string>> pairs) {
  for (auto& [k, v] : pairs) Set(std::move(k), std::move(v));
}

void Labels::Set(std::string key, std::string value) {
  auto it = std::lower_bound(pairs_.begin(), pairs_.end(), key,
                             [](const auto& p, const std::string& k) { return p.first < k; });
  if (it != pairs_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    pairs_.insert(it, {std::move(key), std::move(value)});
  }
}

const std::string* Labels::Find(std::string_view key) const {
  auto it = std::lower_bound(pairs_.begin(), pairs_.end(), key,
                             [](const auto& p, std::string_view k) { return p.first < k; });
  if (it != pairs_.end() && it->first == key) return &it->second;
  return nullptr;
}

bool ParseTaintEffect(std::string_view text, TaintEffect* out) {
  if (text == "NoSchedule") {
    *out = TaintEffect::kNoSchedule;
  } else if (text == "PreferNoSchedule") {
    *out = TaintEffect::kPreferNoSchedule;
  } else if (text == "NoExecute") {
    *out = TaintEffect::kNoExecute;
  } else {
    return false;
  }
  return true;
}

std::string_view TaintEffectName(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "?";
}

std::string Taint::ToString() const {
  std::string out = key;
  if (!value.empty()) out += "=" + value;
  out += ":";
  out += TaintEffectName(effect);
  return out;
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (!any_effect && effect != taint.effect) return false;
  if (op == Op::kExists) return key.empty() || key == taint.key;
  return key == taint.key && value == taint.value;
}

bool ToleratesAll(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints,
                  const Taint** blocking) {
  for (const Taint& taint : taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const Toleration& t) { return t.Tolerates(taint); });
    if (!tolerated) {
      if (blocking != nullptr) *blocking = &taint;
      return false;
    }
  }
  return true;
}

bool ParseSelectorOp(std::string_view text, SelectorRequirement::Op* out, bool numeric) {
  using Op = SelectorRequirement::Op;
  if (text == "In") {
    *out = Op::kIn;
  } else if (text == "NotIn") {
    *out = Op::kNotIn;
  } else if (text == "Exists") {
    *out = Op::kExists;
  } else if (text == "DoesNotExist") {
    *out = Op::kDoesNotExist;
  } else if (numeric && text == "Gt") {
    *out = Op::kGt;
  } else if (numeric && text == "Lt") {
    *out = Op::kLt;
  } else {
    return false;
  }
  return true;
}

std::string_view SelectorOpName(SelectorRequirement::Op op) {
  using Op = SelectorRequirement::Op;
  switch (op) {
    case Op::kIn:
      return "In";
    case Op::kNotIn:
      return "NotIn";
    case Op::kExists:
      return "Exists";
    case Op::kDoesNotExist:
      return "DoesNotExist";
    case Op::kGt:
      return "Gt";
    case Op::kLt:
      return "Lt";
  }
  return "?";
}

bool ParseSelectorInteger(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  size_t i = text[0] == '+' || text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  const bool negative = text[0] == '-';
  uint64_t magnitude = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    const auto digit = static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (limit - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool SelectorRequirement::Matches(const Labels& labels, std::string_view node_name) const {
  std::string_view value;
  bool present = true;
  if (key == kNodeNameField) {
    value = node_name;
  } else if (const std::string* label = labels.Find(key)) {
    value = *label;
  } else {
    present = false;
  }
  const auto listed = [&] {
    return std::find(values.begin(), values.end(), value) != values.end();
  };
  switch (op) {
    case Op::kExists:
      return present;
    case Op::kDoesNotExist:
      return !present;
    case Op::kIn:
      return present && listed();
    case Op::kNotIn:
      // Kubernetes: NotIn matches nodes that lack the label too.
      return !present || !listed();
    case Op::kGt:
    case Op::kLt: {
      int64_t have = 0, bound = 0;
      if (!present || values.size() != 1 || !ParseSelectorInteger(value, &have) ||
          !ParseSelectorInteger(values[0], &bound)) {
        return false;
      }
      return op == Op::kGt ? have > bound : have < bound;
    }
  }
  return false;
}

namespace {

bool TermMatches(const std::vector<SelectorRequirement>& term, const Labels& labels,
                 std::string_view node_name) {
  // Kubernetes: a term without requirements matches no node (it is not "match all").
  return !term.empty() && std::all_of(term.begin(), term.end(), [&](const SelectorRequirement& r) {
    return r.Matches(labels, node_name);
  });
}

}  // namespace

bool NodeAffinity::Matches(const Labels& labels, std::string_view node_name) const {
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(),
                     [&](const auto& term) { return TermMatches(term, labels, node_name); });
}

bool SelectorTermsMatch(const std::vector<std::vector<SelectorRequirement>>& terms,
                        const Labels& labels, std::string_view node_name) {
  return std::any_of(terms.begin(), terms.end(),
                     [&](const auto& term) { return TermMatches(term, labels, node_name); });
}

int64_t NodeAffinity::PreferredWeight(const Labels& labels, std::string_view node_name) const {
  int64_t sum = 0;
  for (const PreferredNodeTerm& p : preferred) {
    if (TermMatches(p.term, labels, node_name)) sum += p.weight;
  }
  return sum;
}

bool MatchesNodeSelector(const Labels& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.pairs()) {
    const std::string* have = labels.Find(key);
    if (have == nullptr || *have != value) return false;
  }
  return true;
}

}  // namespace gantry
