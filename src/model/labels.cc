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
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
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

bool ParseSelectorOp(std::string_view text, SelectorRequirement::Op* out) {
  using Op = SelectorRequirement::Op;
  if (text == "In") {
    *out = Op::kIn;
  } else if (text == "NotIn") {
    *out = Op::kNotIn;
  } else if (text == "Exists") {
    *out = Op::kExists;
  } else if (text == "DoesNotExist") {
    *out = Op::kDoesNotExist;
  } else {
    return false;
  }
  return true;
}

bool SelectorRequirement::Matches(const Labels& labels) const {
  const std::string* value = labels.Find(key);
  switch (op) {
    case Op::kExists: return value != nullptr;
    case Op::kDoesNotExist: return value == nullptr;
    case Op::kIn:
      return value != nullptr && std::find(values.begin(), values.end(), *value) != values.end();
    case Op::kNotIn:
      // Kubernetes: NotIn matches nodes that lack the label too.
      return value == nullptr || std::find(values.begin(), values.end(), *value) == values.end();
  }
  return false;
}

bool NodeAffinity::Matches(const Labels& labels) const {
  if (terms.empty()) return true;
  // Kubernetes: a term without requirements matches no node (it is not "match all").
  return std::any_of(terms.begin(), terms.end(), [&](const auto& term) {
    return !term.empty() && std::all_of(term.begin(), term.end(),
                       [&](const SelectorRequirement& r) { return r.Matches(labels); });
  });
}

bool MatchesNodeSelector(const Labels& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.pairs()) {
    const std::string* have = labels.Find(key);
    if (have == nullptr || *have != value) return false;
  }
  return true;
}

}  // namespace gantry
