#include "sim/yaml_reader.h"

#include <algorithm>

#include "model/limits.h"

namespace gantry {

Status YamlReader::Error(const YAML::Node& node, const std::string& field,
                         const std::string& what) const {
  return YamlError(source_, node, field, what);
}

Status YamlReader::Map(const YAML::Node& node, const std::string& field,
                       std::initializer_list<const char*> known) const {
  if (!node.IsMap()) return Error(node, field, "expected a mapping");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    bool ok = std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; });
    if (!ok) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return Error(kv.first, field.empty() ? key : field + "." + key,
                   "unknown field (known: " + list + ")");
    }
  }
  return Status::Ok();
}

Status YamlReader::List(const YAML::Node& node, const std::string& field) const {
  if (!node.IsSequence()) return Error(node, field, "expected a list");
  return Status::Ok();
}

Status YamlReader::String(const YAML::Node& node, const std::string& field,
                          std::string* out) const {
  if (!node.IsScalar()) return Error(node, field, "expected a single value");
  *out = node.Scalar();
  return Status::Ok();
}

Status YamlReader::Name(const YAML::Node& node, const std::string& field, std::string* out) const {
  GANTRY_RETURN_IF_ERROR(String(node, field, out));
  if (out->empty()) return Error(node, field, "must not be empty");
  if (out->size() > kMaxNameLength) {
    return Error(node, field,
                 QuoteForMessage(*out) + " is longer than " + std::to_string(kMaxNameLength) +
                     " bytes (the limit on names)");
  }
  return Status::Ok();
}

Status YamlReader::Int(const YAML::Node& node, const std::string& field, int64_t min, int64_t max,
                       int64_t* out) const {
  return ReadYamlInt(node, source_, field, min, max, out);
}

Status YamlReader::Bool(const YAML::Node& node, const std::string& field, bool* out) const {
  return ReadYamlBool(node, source_, field, out);
}

Status YamlReader::Quantity(const YAML::Node& node, const std::string& field, Milli* out,
                            bool exact) const {
  if (!node.IsScalar()) return Error(node, field, "expected a quantity such as 2, 500m or 64Gi");
  auto parsed = exact ? ParseQuantityExact(node.Scalar()) : ParseQuantity(node.Scalar());
  if (!parsed.ok()) return Error(node, field, parsed.status().message());
  if (*parsed < 0) {
    return Error(node, field, "must not be negative, got " + QuoteForMessage(node.Scalar()));
  }
  *out = *parsed;
  return Status::Ok();
}

Status YamlReader::Resources(const YAML::Node& node, const std::string& field, NameSource names,
                             ResourceVector* out) const {
  if (!node.IsMap()) return Error(node, field, "expected a mapping of resource name to quantity");
  *out = ResourceVector();
  for (const auto& kv : node) {
    const std::string name = kv.first.Scalar();
    if (name.empty()) return Error(kv.first, field, "empty resource name");
    auto id = InternResourceName(name, names);
    if (!id.ok()) return Error(kv.first, field + "." + name, id.status().message());
    Milli amount = 0;
    GANTRY_RETURN_IF_ERROR(Quantity(kv.second, field + "." + name, &amount));
    out->Set(*id, amount);
  }
  return Status::Ok();
}

Status YamlReader::LabelKey(const YAML::Node& node, const std::string& field,
                            std::string* out) const {
  GANTRY_RETURN_IF_ERROR(String(node, field, out));
  if (out->empty()) return Error(node, field, "a label key must not be empty");
  if (out->size() > kMaxLabelKeyLength) {
    return Error(node, field,
                 "label key " + QuoteForMessage(*out) + " is longer than " +
                     std::to_string(kMaxLabelKeyLength) + " bytes (the limit on label keys)");
  }
  return Status::Ok();
}

Status YamlReader::LabelValue(const YAML::Node& node, const std::string& field,
                              std::string* out) const {
  GANTRY_RETURN_IF_ERROR(String(node, field, out));
  if (out->size() > kMaxLabelValueLength) {
    return Error(node, field,
                 "label value " + QuoteForMessage(*out) + " is longer than " +
                     std::to_string(kMaxLabelValueLength) + " bytes (the limit on label values)");
  }
  return Status::Ok();
}

Status YamlReader::LabelMap(const YAML::Node& node, const std::string& field, Labels* out) const {
  if (!node.IsMap()) return Error(node, field, "expected a mapping of label to value");
  for (const auto& kv : node) {
    std::string key, value;
    GANTRY_RETURN_IF_ERROR(LabelKey(kv.first, field, &key));
    GANTRY_RETURN_IF_ERROR(LabelValue(kv.second, field + "." + key, &value));
    out->Set(std::move(key), std::move(value));
  }
  return Status::Ok();
}

Status YamlReader::Taints(const YAML::Node& node, const std::string& field,
                          std::vector<Taint>* out) const {
  GANTRY_RETURN_IF_ERROR(List(node, field));
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& t = node[i];
    std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(Map(t, f, {"key", "value", "effect"}));
    Taint taint;
    if (!t["key"]) return Error(t, f + ".key", "required");
    GANTRY_RETURN_IF_ERROR(LabelKey(t["key"], f + ".key", &taint.key));
    if (t["value"]) GANTRY_RETURN_IF_ERROR(LabelValue(t["value"], f + ".value", &taint.value));
    std::string effect = "NoSchedule";
    if (t["effect"]) GANTRY_RETURN_IF_ERROR(String(t["effect"], f + ".effect", &effect));
    if (!ParseTaintEffect(effect, &taint.effect)) {
      return Error(t["effect"], f + ".effect",
                   "unknown effect " + QuoteForMessage(effect) +
                       " (known: NoSchedule, PreferNoSchedule, NoExecute)");
    }
    out->push_back(std::move(taint));
  }
  return Status::Ok();
}

Status YamlReader::Tolerations(const YAML::Node& node, const std::string& field,
                               std::vector<Toleration>* out) const {
  GANTRY_RETURN_IF_ERROR(List(node, field));
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& t = node[i];
    std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(Map(t, f, {"key", "operator", "value", "effect", "tolerationSeconds"}));
    Toleration tol;
    if (t["key"]) {
      GANTRY_RETURN_IF_ERROR(String(t["key"], f + ".key", &tol.key));  // empty: any key
      if (!tol.key.empty()) GANTRY_RETURN_IF_ERROR(LabelKey(t["key"], f + ".key", &tol.key));
    }
    std::string op = "Equal";
    if (t["operator"]) GANTRY_RETURN_IF_ERROR(String(t["operator"], f + ".operator", &op));
    if (op == "Equal" || op.empty()) {  // Kubernetes: no operator is Equal
      tol.op = Toleration::Op::kEqual;
      if (tol.key.empty()) return Error(t, f + ".key", "required with operator Equal");
    } else if (op == "Exists") {
      tol.op = Toleration::Op::kExists;
    } else {
      return Error(t["operator"], f + ".operator",
                   "unknown operator " + QuoteForMessage(op) + " (known: Equal, Exists)");
    }
    if (t["value"]) GANTRY_RETURN_IF_ERROR(LabelValue(t["value"], f + ".value", &tol.value));
    if (tol.op == Toleration::Op::kExists && !tol.value.empty()) {
      return Error(t["value"], f + ".value",
                   "must be empty when operator is Exists, got " + QuoteForMessage(tol.value));
    }
    std::string effect;
    if (t["effect"]) {
      GANTRY_RETURN_IF_ERROR(String(t["effect"], f + ".effect", &effect));
      if (!effect.empty()) {
        tol.any_effect = false;
        if (!ParseTaintEffect(effect, &tol.effect)) {
          return Error(t["effect"], f + ".effect", "unknown effect " + QuoteForMessage(effect));
        }
      }
    }
    // How long a pod stays once a NoExecute taint appears: eviction, not placement; a
    // NoExecute toleration with it tolerates the taint for placing the pod all the same.
    if (t["tolerationSeconds"]) {
      int64_t seconds = 0;
      GANTRY_RETURN_IF_ERROR(
          Int(t["tolerationSeconds"], f + ".tolerationSeconds", INT64_MIN, INT64_MAX, &seconds));
      if (effect != "NoExecute") {
        return Error(t["tolerationSeconds"], f + ".tolerationSeconds",
                     "needs effect NoExecute, got " +
                         (effect.empty() ? std::string("none") : QuoteForMessage(effect)));
      }
    }
    out->push_back(std::move(tol));
  }
  return Status::Ok();
}

std::string LimitText(int64_t value, const char* what) {
  return std::to_string(value) + " (the limit on " + what + ")";
}

size_t DigitCount(int64_t n) {
  return std::to_string(n).size();
}

}  // namespace gantry
