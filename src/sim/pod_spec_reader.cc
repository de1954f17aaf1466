#include "sim/pod_spec_reader.h"

#include <algorithm>
#include <set>

#include "model/limits.h"

namespace gantry {
namespace {

using Op = SelectorRequirement::Op;

bool IsDns1123Label(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  const auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  };
  return std::all_of(s.begin(), s.end(), ok) && s.front() != '-' && s.back() != '-';
}

// Kubernetes' IsValidPortName: at most 15 of [a-z0-9-], a letter among them, no '-' at
// either end nor two in a row.
bool IsValidPortName(const std::string& s) {
  if (s.empty() || s.size() > 15 || s.front() == '-' || s.back() == '-') return false;
  if (s.find("--") != std::string::npos) return false;
  bool letter = false;
  for (char c : s) {
    const bool lower = c >= 'a' && c <= 'z';
    if (!lower && !(c >= '0' && c <= '9') && c != '-') return false;
    letter = letter || lower;
  }
  return letter;
}

std::string Index(const std::string& field, size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

}  // namespace

Status PodSpecReader::Namespace(const YAML::Node& node, const std::string& field,
                                std::string* out) const {
  GANTRY_RETURN_IF_ERROR(r_.String(node, field, out));
  if (!IsDns1123Label(*out)) {
    return r_.Error(node, field,
                    QuoteForMessage(*out) +
                        " is not a valid namespace name (a DNS-1123 label: at most 63 lowercase "
                        "letters, digits and '-', starting and ending with a letter or digit)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- node affinity

Status PodSpecReader::ReadNodeSelectorRequirement(const YAML::Node& e, const std::string& f,
                                                  bool on_fields, SelectorRequirement* out) const {
  GANTRY_RETURN_IF_ERROR(r_.Map(e, f, {"key", "operator", "values"}));
  if (!e["key"]) return r_.Error(e, f + ".key", "required");
  if (on_fields) {
    std::string key;
    GANTRY_RETURN_IF_ERROR(r_.String(e["key"], f + ".key", &key));
    if (key != "metadata.name") {
      return r_.Error(
          e["key"], f + ".key",
          QuoteForMessage(key) + " is not a valid field selector key (known: metadata.name)");
    }
    out->key = std::string(kNodeNameField);
  } else {
    GANTRY_RETURN_IF_ERROR(r_.LabelKey(e["key"], f + ".key", &out->key));
  }
  if (!e["operator"]) return r_.Error(e, f + ".operator", "required");
  std::string op;
  GANTRY_RETURN_IF_ERROR(r_.String(e["operator"], f + ".operator", &op));
  const bool known = ParseSelectorOp(op, &out->op, /*numeric=*/true);
  if (on_fields && (!known || (out->op != Op::kIn && out->op != Op::kNotIn))) {
    return r_.Error(
        e["operator"], f + ".operator",
        "operator " + QuoteForMessage(op) + " is not valid in matchFields (known: In, NotIn)");
  }
  if (!known) {
    return r_.Error(e["operator"], f + ".operator",
                    "unknown operator " + QuoteForMessage(op) +
                        " (known: In, NotIn, Exists, DoesNotExist, Gt, Lt)");
  }
  if (e["values"]) {
    GANTRY_RETURN_IF_ERROR(r_.List(e["values"], f + ".values"));
    for (size_t k = 0; k < e["values"].size(); ++k) {
      std::string v;
      if (on_fields) {
        GANTRY_RETURN_IF_ERROR(r_.Name(e["values"][k], Index(f + ".values", k), &v));
      } else {
        GANTRY_RETURN_IF_ERROR(r_.LabelValue(e["values"][k], Index(f + ".values", k), &v));
      }
      out->values.push_back(std::move(v));
    }
  }
  const YAML::Node& at = e["values"] ? e["values"] : e;
  const size_t n = out->values.size();
  switch (out->op) {
    case Op::kIn:
    case Op::kNotIn:
      if (on_fields && n != 1) {
        return r_.Error(
            at, f + ".values",
            "operator " + op + " takes exactly one value in matchFields, got " + std::to_string(n));
      }
      if (n == 0)
        return r_.Error(at, f + ".values", "operator " + op + " needs at least one value");
      break;
    case Op::kExists:
    case Op::kDoesNotExist:
      if (n > 0) return r_.Error(at, f + ".values", "operator " + op + " takes no values");
      break;
    case Op::kGt:
    case Op::kLt: {
      if (n != 1) {
        return r_.Error(at, f + ".values",
                        "operator " + op + " takes exactly one value, got " + std::to_string(n));
      }
      // Kubernetes reads it with ParseInt; a term whose value is not an integer would
      // never match.
      int64_t bound = 0;
      if (!ParseSelectorInteger(out->values[0], &bound)) {
        return r_.Error(
            e["values"][0], f + ".values[0]",
            "operator " + op + " needs an integer, got " + QuoteForMessage(out->values[0]));
      }
      break;
    }
  }
  return Status::Ok();
}

Status PodSpecReader::ReadNodeSelectorTerm(const YAML::Node& term, const std::string& f,
                                           std::vector<SelectorRequirement>* out) const {
  GANTRY_RETURN_IF_ERROR(r_.Map(term, f, {"matchExpressions", "matchFields"}));
  for (const char* part : {"matchExpressions", "matchFields"}) {
    const YAML::Node& list = term[part];
    if (!list) continue;
    const std::string lf = f + "." + part;
    GANTRY_RETURN_IF_ERROR(r_.List(list, lf));
    for (size_t j = 0; j < list.size(); ++j) {
      SelectorRequirement req;
      GANTRY_RETURN_IF_ERROR(ReadNodeSelectorRequirement(
          list[j], Index(lf, j), /*on_fields=*/std::string(part) == "matchFields", &req));
      out->push_back(std::move(req));
    }
  }
  return Status::Ok();
}

Status PodSpecReader::NodeSelectorTerms(const YAML::Node& node, const std::string& field,
                                        std::vector<std::vector<SelectorRequirement>>* out) const {
  GANTRY_RETURN_IF_ERROR(r_.List(node, field));
  for (size_t i = 0; i < node.size(); ++i) {
    std::vector<SelectorRequirement> term;  // none: matches no node
    GANTRY_RETURN_IF_ERROR(ReadNodeSelectorTerm(node[i], Index(field, i), &term));
    out->push_back(std::move(term));
  }
  return Status::Ok();
}

Status PodSpecReader::ReadNodeAffinity(const YAML::Node& node, const std::string& f,
                                       NodeAffinity* out) const {
  GANTRY_RETURN_IF_ERROR(r_.Map(node, f,
                                {"requiredDuringSchedulingIgnoredDuringExecution",
                                 "preferredDuringSchedulingIgnoredDuringExecution"}));
  if (const YAML::Node& required = node["requiredDuringSchedulingIgnoredDuringExecution"]) {
    const std::string rf = f + ".requiredDuringSchedulingIgnoredDuringExecution";
    GANTRY_RETURN_IF_ERROR(r_.Map(required, rf, {"nodeSelectorTerms"}));
    const YAML::Node& terms = required["nodeSelectorTerms"];
    if (!terms || (terms.IsSequence() && terms.size() == 0)) {
      return r_.Error(terms ? terms : required, rf + ".nodeSelectorTerms",
                      "must have at least one node selector term");
    }
    GANTRY_RETURN_IF_ERROR(NodeSelectorTerms(terms, rf + ".nodeSelectorTerms", &out->terms));
  }
  if (const YAML::Node& preferred = node["preferredDuringSchedulingIgnoredDuringExecution"]) {
    const std::string pf = f + ".preferredDuringSchedulingIgnoredDuringExecution";
    GANTRY_RETURN_IF_ERROR(r_.List(preferred, pf));
    for (size_t i = 0; i < preferred.size(); ++i) {
      const YAML::Node& p = preferred[i];
      const std::string tf = Index(pf, i);
      GANTRY_RETURN_IF_ERROR(r_.Map(p, tf, {"weight", "preference"}));
      PreferredNodeTerm term;
      int64_t weight = 0;
      if (!p["weight"]) return r_.Error(p, tf + ".weight", "required (1 to 100)");
      GANTRY_RETURN_IF_ERROR(r_.Int(p["weight"], tf + ".weight", 1, 100, &weight));
      term.weight = static_cast<int32_t>(weight);
      if (!p["preference"]) return r_.Error(p, tf + ".preference", "required");
      GANTRY_RETURN_IF_ERROR(ReadNodeSelectorTerm(p["preference"], tf + ".preference", &term.term));
      out->preferred.push_back(std::move(term));
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- pod affinity

Status PodSpecReader::ReadLabelSelector(const YAML::Node& node, const std::string& f,
                                        LabelSelector* out) const {
  if (!node.IsMap()) {
    return r_.Error(node, f, "expected a label selector {matchLabels, matchExpressions}");
  }
  GANTRY_RETURN_IF_ERROR(r_.Map(node, f, {"matchLabels", "matchExpressions"}));
  if (node["matchLabels"]) {
    GANTRY_RETURN_IF_ERROR(
        r_.LabelMap(node["matchLabels"], f + ".matchLabels", &out->match_labels));
  }
  if (const YAML::Node& exprs = node["matchExpressions"]) {
    const std::string ef = f + ".matchExpressions";
    GANTRY_RETURN_IF_ERROR(r_.List(exprs, ef));
    for (size_t j = 0; j < exprs.size(); ++j) {
      const YAML::Node& e = exprs[j];
      const std::string jf = Index(ef, j);
      GANTRY_RETURN_IF_ERROR(r_.Map(e, jf, {"key", "operator", "values"}));
      SelectorRequirement req;
      if (!e["key"]) return r_.Error(e, jf + ".key", "required");
      GANTRY_RETURN_IF_ERROR(r_.LabelKey(e["key"], jf + ".key", &req.key));
      if (!e["operator"]) return r_.Error(e, jf + ".operator", "required");
      std::string op;
      GANTRY_RETURN_IF_ERROR(r_.String(e["operator"], jf + ".operator", &op));
      if (!ParseSelectorOp(op, &req.op)) {
        return r_.Error(e["operator"], jf + ".operator",
                        "unknown operator " + QuoteForMessage(op) +
                            " (known: In, NotIn, Exists, DoesNotExist)");
      }
      if (e["values"]) {
        GANTRY_RETURN_IF_ERROR(r_.List(e["values"], jf + ".values"));
        for (size_t k = 0; k < e["values"].size(); ++k) {
          std::string v;
          GANTRY_RETURN_IF_ERROR(r_.LabelValue(e["values"][k], Index(jf + ".values", k), &v));
          req.values.push_back(std::move(v));
        }
      }
      const bool needs_values = req.op == Op::kIn || req.op == Op::kNotIn;
      const YAML::Node& at = e["values"] ? e["values"] : e;
      if (needs_values && req.values.empty()) {
        return r_.Error(at, jf + ".values", "operator " + op + " needs at least one value");
      }
      if (!needs_values && !req.values.empty()) {
        return r_.Error(at, jf + ".values", "operator " + op + " takes no values");
      }
      out->match_expressions.push_back(std::move(req));
    }
  }
  return Status::Ok();
}

Status PodSpecReader::ReadLabelKeys(const YAML::Node& node, const std::string& f,
                                    std::vector<std::string>* out) const {
  GANTRY_RETURN_IF_ERROR(r_.List(node, f));
  for (size_t i = 0; i < node.size(); ++i) {
    std::string key;
    GANTRY_RETURN_IF_ERROR(r_.LabelKey(node[i], Index(f, i), &key));
    out->push_back(std::move(key));
  }
  return Status::Ok();
}

Status PodSpecReader::ReadPodAffinityTerm(const YAML::Node& node, const std::string& f,
                                          const Labels& pod_labels, PodAffinityTerm* out) const {
  GANTRY_RETURN_IF_ERROR(r_.Map(node, f,
                                {"labelSelector", "namespaces", "namespaceSelector", "topologyKey",
                                 "matchLabelKeys", "mismatchLabelKeys"}));
  if (node["labelSelector"] && !node["labelSelector"].IsNull()) {  // null: no selector
    out->selector.emplace();
    GANTRY_RETURN_IF_ERROR(
        ReadLabelSelector(node["labelSelector"], f + ".labelSelector", &*out->selector));
  }
  if (const YAML::Node& namespaces = node["namespaces"]) {
    GANTRY_RETURN_IF_ERROR(r_.List(namespaces, f + ".namespaces"));
    for (size_t i = 0; i < namespaces.size(); ++i) {
      std::string ns;
      GANTRY_RETURN_IF_ERROR(Namespace(namespaces[i], Index(f + ".namespaces", i), &ns));
      out->namespaces.push_back(std::move(ns));
    }
  }
  if (node["namespaceSelector"] && !node["namespaceSelector"].IsNull()) {
    out->namespace_selector.emplace();
    GANTRY_RETURN_IF_ERROR(ReadLabelSelector(node["namespaceSelector"], f + ".namespaceSelector",
                                             &*out->namespace_selector));
  }
  if (!node["topologyKey"]) return r_.Error(node, f + ".topologyKey", "required");
  GANTRY_RETURN_IF_ERROR(r_.String(node["topologyKey"], f + ".topologyKey", &out->topology_key));
  if (out->topology_key.empty())
    return r_.Error(node["topologyKey"], f + ".topologyKey", "can not be empty");
  GANTRY_RETURN_IF_ERROR(r_.LabelKey(node["topologyKey"], f + ".topologyKey", &out->topology_key));
  // matchLabelKeys and mismatchLabelKeys, validated and merged as kube-apiserver does.
  std::vector<std::string> match_keys, mismatch_keys;
  for (auto [name, keys] :
       {std::pair{"matchLabelKeys", &match_keys}, std::pair{"mismatchLabelKeys", &mismatch_keys}}) {
    const YAML::Node& list = node[name];
    if (!list) continue;
    GANTRY_RETURN_IF_ERROR(ReadLabelKeys(list, f + "." + name, keys));
    if (!keys->empty() && !out->selector.has_value()) {
      return r_.Error(list, f + "." + name, "must not be specified when labelSelector is not set");
    }
  }
  for (size_t i = 0; i < match_keys.size(); ++i) {
    if (std::find(mismatch_keys.begin(), mismatch_keys.end(), match_keys[i]) !=
        mismatch_keys.end()) {
      return r_.Error(
          node["matchLabelKeys"][i], Index(f + ".matchLabelKeys", i),
          QuoteForMessage(match_keys[i]) + " exists in both matchLabelKeys and mismatchLabelKeys");
    }
  }
  if (!out->selector.has_value()) return Status::Ok();
  MergeLabelKeys(match_keys, Op::kIn, pod_labels, /*unless_present=*/false, &*out->selector);
  MergeLabelKeys(mismatch_keys, Op::kNotIn, pod_labels, /*unless_present=*/false, &*out->selector);
  // kube-apiserver's check, on the merged selector: an expression on a matchLabelKeys key
  // after the key already appeared (in matchLabels or an earlier expression) means the user
  // wrote the key in both.
  std::set<std::string> seen;
  for (const auto& [key, value] : out->selector->match_labels.pairs()) seen.insert(key);
  for (const SelectorRequirement& req : out->selector->match_expressions) {
    auto it = std::find(match_keys.begin(), match_keys.end(), req.key);
    if (it != match_keys.end() && seen.count(req.key)) {
      const size_t i = static_cast<size_t>(it - match_keys.begin());
      return r_.Error(
          node["matchLabelKeys"][i], Index(f + ".matchLabelKeys", i),
          QuoteForMessage(req.key) + " exists in both matchLabelKeys and labelSelector");
    }
    seen.insert(req.key);
  }
  return Status::Ok();
}

Status PodSpecReader::ReadPodAffinity(const YAML::Node& node, const std::string& f,
                                      const Labels& pod_labels,
                                      std::vector<PodAffinityTerm>* required,
                                      std::vector<PodAffinityTerm>* preferred) const {
  GANTRY_RETURN_IF_ERROR(r_.Map(node, f,
                                {"requiredDuringSchedulingIgnoredDuringExecution",
                                 "preferredDuringSchedulingIgnoredDuringExecution"}));
  if (const YAML::Node& terms = node["requiredDuringSchedulingIgnoredDuringExecution"]) {
    const std::string rf = f + ".requiredDuringSchedulingIgnoredDuringExecution";
    GANTRY_RETURN_IF_ERROR(r_.List(terms, rf));
    for (size_t i = 0; i < terms.size(); ++i) {
      PodAffinityTerm term;
      GANTRY_RETURN_IF_ERROR(ReadPodAffinityTerm(terms[i], Index(rf, i), pod_labels, &term));
      required->push_back(std::move(term));
    }
  }
  if (const YAML::Node& terms = node["preferredDuringSchedulingIgnoredDuringExecution"]) {
    const std::string pf = f + ".preferredDuringSchedulingIgnoredDuringExecution";
    GANTRY_RETURN_IF_ERROR(r_.List(terms, pf));
    for (size_t i = 0; i < terms.size(); ++i) {
      const YAML::Node& w = terms[i];
      const std::string wf = Index(pf, i);
      GANTRY_RETURN_IF_ERROR(r_.Map(w, wf, {"weight", "podAffinityTerm"}));
      int64_t weight = 0;
      if (!w["weight"]) return r_.Error(w, wf + ".weight", "required (1 to 100)");
      GANTRY_RETURN_IF_ERROR(r_.Int(w["weight"], wf + ".weight", 1, 100, &weight));
      if (!w["podAffinityTerm"]) return r_.Error(w, wf + ".podAffinityTerm", "required");
      PodAffinityTerm term;
      GANTRY_RETURN_IF_ERROR(
          ReadPodAffinityTerm(w["podAffinityTerm"], wf + ".podAffinityTerm", pod_labels, &term));
      term.weight = static_cast<int32_t>(weight);
      preferred->push_back(std::move(term));
    }
  }
  return Status::Ok();
}

Status PodSpecReader::Affinity(const YAML::Node& node, const std::string& f,
                               const Labels& pod_labels, NodeAffinity* node_affinity,
                               PodAffinity* pod_affinity) const {
  GANTRY_RETURN_IF_ERROR(r_.Map(node, f, {"nodeAffinity", "podAffinity", "podAntiAffinity"}));
  if (node["nodeAffinity"]) {
    GANTRY_RETURN_IF_ERROR(
        ReadNodeAffinity(node["nodeAffinity"], f + ".nodeAffinity", node_affinity));
  }
  if (node["podAffinity"]) {
    GANTRY_RETURN_IF_ERROR(ReadPodAffinity(node["podAffinity"], f + ".podAffinity", pod_labels,
                                           &pod_affinity->required_affinity,
                                           &pod_affinity->preferred_affinity));
  }
  if (node["podAntiAffinity"]) {
    GANTRY_RETURN_IF_ERROR(ReadPodAffinity(node["podAntiAffinity"], f + ".podAntiAffinity",
                                           pod_labels, &pod_affinity->required_anti_affinity,
                                           &pod_affinity->preferred_anti_affinity));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- topology spread

Status PodSpecReader::ReadInclusionPolicy(const YAML::Node& node, const std::string& f,
                                          bool* honor) const {
  std::string policy;
  GANTRY_RETURN_IF_ERROR(r_.String(node, f, &policy));
  if (policy != "Honor" && policy != "Ignore") {
    return r_.Error(node, f,
                    "unknown policy " + QuoteForMessage(policy) + " (known: Honor, Ignore)");
  }
  *honor = policy == "Honor";
  return Status::Ok();
}

Status PodSpecReader::TopologySpreadConstraints(const YAML::Node& node, const std::string& field,
                                                const Labels& pod_labels,
                                                std::vector<TopologySpreadConstraint>* out) const {
  using When = TopologySpreadConstraint::WhenUnsatisfiable;
  GANTRY_RETURN_IF_ERROR(r_.List(node, field));
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& c = node[i];
    const std::string f = Index(field, i);
    GANTRY_RETURN_IF_ERROR(
        r_.Map(c, f,
               {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"}));
    TopologySpreadConstraint spread;
    int64_t max_skew = 0;
    if (!c["maxSkew"]) return r_.Error(c, f + ".maxSkew", "required (greater than zero)");
    GANTRY_RETURN_IF_ERROR(r_.Int(c["maxSkew"], f + ".maxSkew", 1, INT32_MAX, &max_skew));
    spread.max_skew = static_cast<int32_t>(max_skew);
    if (!c["topologyKey"]) return r_.Error(c, f + ".topologyKey", "required");
    GANTRY_RETURN_IF_ERROR(r_.String(c["topologyKey"], f + ".topologyKey", &spread.topology_key));
    if (spread.topology_key.empty()) {
      return r_.Error(c["topologyKey"], f + ".topologyKey", "can not be empty");
    }
    GANTRY_RETURN_IF_ERROR(r_.LabelKey(c["topologyKey"], f + ".topologyKey", &spread.topology_key));
    if (!c["whenUnsatisfiable"]) {
      return r_.Error(c, f + ".whenUnsatisfiable", "required (DoNotSchedule or ScheduleAnyway)");
    }
    std::string when;
    GANTRY_RETURN_IF_ERROR(r_.String(c["whenUnsatisfiable"], f + ".whenUnsatisfiable", &when));
    if (when == "DoNotSchedule") {
      spread.when_unsatisfiable = When::kDoNotSchedule;
    } else if (when == "ScheduleAnyway") {
      spread.when_unsatisfiable = When::kScheduleAnyway;
    } else {
      return r_.Error(
          c["whenUnsatisfiable"], f + ".whenUnsatisfiable",
          "unknown value " + QuoteForMessage(when) + " (known: DoNotSchedule, ScheduleAnyway)");
    }
    if (c["minDomains"]) {
      int64_t min_domains = 0;
      GANTRY_RETURN_IF_ERROR(
          r_.Int(c["minDomains"], f + ".minDomains", 1, INT32_MAX, &min_domains));
      if (!spread.filters()) {
        return r_.Error(c["minDomains"], f + ".minDomains",
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not " + when);
      }
      spread.min_domains = static_cast<int32_t>(min_domains);
    }
    if (c["nodeAffinityPolicy"]) {
      GANTRY_RETURN_IF_ERROR(ReadInclusionPolicy(c["nodeAffinityPolicy"], f + ".nodeAffinityPolicy",
                                                 &spread.honor_node_affinity));
    }
    if (c["nodeTaintsPolicy"]) {
      GANTRY_RETURN_IF_ERROR(ReadInclusionPolicy(c["nodeTaintsPolicy"], f + ".nodeTaintsPolicy",
                                                 &spread.honor_node_taints));
    }
    if (c["labelSelector"] && !c["labelSelector"].IsNull()) {  // null: no selector
      spread.selector.emplace();
      GANTRY_RETURN_IF_ERROR(
          ReadLabelSelector(c["labelSelector"], f + ".labelSelector", &*spread.selector));
    }
    if (const YAML::Node& list = c["matchLabelKeys"]) {
      std::vector<std::string> keys;
      GANTRY_RETURN_IF_ERROR(ReadLabelKeys(list, f + ".matchLabelKeys", &keys));
      if (!keys.empty() && !spread.selector.has_value()) {
        return r_.Error(list, f + ".matchLabelKeys",
                        "must not be specified when labelSelector is not set");
      }
      for (size_t k = 0; k < keys.size(); ++k) {
        const LabelSelector& s = *spread.selector;
        const bool in_selector =
            s.match_labels.Find(keys[k]) != nullptr ||
            std::any_of(s.match_expressions.begin(), s.match_expressions.end(),
                        [&](const SelectorRequirement& r) { return r.key == keys[k]; });
        if (in_selector) {
          return r_.Error(
              list[k], Index(f + ".matchLabelKeys", k),
              QuoteForMessage(keys[k]) + " exists in both matchLabelKeys and labelSelector");
        }
      }
      if (spread.selector.has_value())
        MergeLabelKeys(keys, Op::kIn, pod_labels, /*unless_present=*/false, &*spread.selector);
    }
    // {topologyKey, whenUnsatisfiable} names one kind of constraint: once per pod.
    for (size_t j = 0; j < out->size(); ++j) {
      const TopologySpreadConstraint& earlier = (*out)[j];
      if (earlier.topology_key == spread.topology_key &&
          earlier.when_unsatisfiable == spread.when_unsatisfiable) {
        return r_.Error(c, f,
                        "duplicate {topologyKey, whenUnsatisfiable} {" + spread.topology_key +
                            ", " + when + "}: " + Index(field, j) + " has it too");
      }
    }
    out->push_back(std::move(spread));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- ports

Status PodSpecReader::Ports(const YAML::Node& node, const std::string& field,
                            std::vector<HostPort>* out) const {
  GANTRY_RETURN_IF_ERROR(r_.List(node, field));
  std::vector<std::string> names;
  struct Used {
    std::string key;  // protocol/hostIP/port as written, as kube-apiserver compares them
    size_t index;
  };
  std::vector<Used> used;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& p = node[i];
    const std::string f = Index(field, i);
    GANTRY_RETURN_IF_ERROR(
        r_.Map(p, f, {"name", "containerPort", "hostPort", "protocol", "hostIP"}));
    if (p["name"]) {
      std::string name;
      GANTRY_RETURN_IF_ERROR(r_.String(p["name"], f + ".name", &name));
      if (!IsValidPortName(name)) {
        return r_.Error(p["name"], f + ".name",
                        QuoteForMessage(name) +
                            " is not a valid port name (at most 15 lowercase letters, digits and "
                            "'-', with a letter, no '-' at either end or twice in a row)");
      }
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        return r_.Error(p["name"], f + ".name", "duplicate port name " + QuoteForMessage(name));
      }
      names.push_back(name);
    }
    int64_t container_port = 0, host_port = 0;
    if (!p["containerPort"]) return r_.Error(p, f + ".containerPort", "required");
    GANTRY_RETURN_IF_ERROR(
        r_.Int(p["containerPort"], f + ".containerPort", 1, 65535, &container_port));
    if (p["hostPort"]) {
      // 0 is Kubernetes' "no host port".
      GANTRY_RETURN_IF_ERROR(r_.Int(p["hostPort"], f + ".hostPort", 0, 65535, &host_port));
    }
    HostPort port;
    port.port = static_cast<int32_t>(host_port);
    if (p["protocol"]) {
      GANTRY_RETURN_IF_ERROR(r_.String(p["protocol"], f + ".protocol", &port.protocol));
      if (port.protocol != "TCP" && port.protocol != "UDP" && port.protocol != "SCTP") {
        return r_.Error(
            p["protocol"], f + ".protocol",
            "unknown protocol " + QuoteForMessage(port.protocol) + " (known: TCP, UDP, SCTP)");
      }
    }
    std::string host_ip;
    if (p["hostIP"]) {
      GANTRY_RETURN_IF_ERROR(r_.String(p["hostIP"], f + ".hostIP", &host_ip));
      if (host_ip.size() > kMaxNameLength) {
        return r_.Error(p["hostIP"], f + ".hostIP",
                        QuoteForMessage(host_ip) + " is not an IP address");
      }
    }
    if (host_port == 0) continue;
    const std::string key = port.protocol + "/" + host_ip + "/" + std::to_string(host_port);
    for (const Used& u : used) {
      if (u.key == key) {
        return r_.Error(p["hostPort"], f + ".hostPort",
                        "duplicate host port " + QuoteForMessage(key) +
                            " (protocol/hostIP/port): " + Index(field, u.index) + " has it too");
      }
    }
    used.push_back(Used{key, i});
    port.host_ip = host_ip == "0.0.0.0" ? "" : host_ip;
    out->push_back(std::move(port));
  }
  return Status::Ok();
}

}  // namespace gantry
