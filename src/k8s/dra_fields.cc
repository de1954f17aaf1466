#include "k8s/dra_fields.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/pod_rules.h"
#include "k8s/resource_list.h"
#include "k8s/timestamp.h"
#include "model/limits.h"
#include "model/pod_constraints.h"

namespace gantry::k8s::drajson {
namespace {

using json = nlohmann::json;

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsAlnum(char c) {
  return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z');
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabel(std::string_view text) {
  if (text.empty() || text.size() > kMaxDnsLabel) return false;
  if (!IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// Labels of IsDNS1123Label joined by '.', at most max_len bytes.
bool IsDnsSubdomain(std::string_view text, size_t max_len) {
  if (text.empty() || text.size() > max_len) return false;
  if (!IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return IsLowerAlnum(c) || c == '-' || c == '.'; });
}

// [A-Za-z_][A-Za-z0-9_]*
bool IsCIdentifier(std::string_view text) {
  if (text.empty() || (text[0] >= '0' && text[0] <= '9')) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsAlnum(c) || c == '_'; });
}

// 0|[1-9][0-9]*
bool IsNumericIdentifier(std::string_view part) {
  if (part.empty()) return false;
  if (!std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  return part.size() == 1 || part[0] != '0';
}

// Dot-separated identifiers each passing `ok`.
template <typename Ok>
bool DotSeparated(std::string_view text, Ok ok) {
  while (true) {
    const size_t dot = text.find('.');
    if (!ok(text.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    text.remove_prefix(dot + 1);
  }
}

// semver.org 2.0.0, as upstream's semverRe: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD].
bool IsSemverText(std::string_view text) {
  const size_t plus = text.find('+');
  std::string_view build =
      plus == std::string_view::npos ? std::string_view() : text.substr(plus + 1);
  if (plus != std::string_view::npos) text = text.substr(0, plus);
  const size_t dash = text.find('-');
  std::string_view pre =
      dash == std::string_view::npos ? std::string_view() : text.substr(dash + 1);
  if (dash != std::string_view::npos) text = text.substr(0, dash);
  int parts = 0;
  if (!DotSeparated(text,
                    [&](std::string_view p) { return ++parts <= 3 && IsNumericIdentifier(p); }) ||
      parts != 3) {
    return false;
  }
  auto identifier = [](std::string_view p) {
    return !p.empty() &&
           std::all_of(p.begin(), p.end(), [](char c) { return IsAlnum(c) || c == '-'; });
  };
  if (dash != std::string_view::npos && !DotSeparated(pre, [&](std::string_view p) {
        const bool numeric =
            std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
        return identifier(p) && (!numeric || IsNumericIdentifier(p));
      })) {
    return false;
  }
  return plus == std::string_view::npos || DotSeparated(build, identifier);
}

// How deep `value` nests, up to `limit` (deeper stops counting there).
int Depth(const json& value, int limit) {
  if (limit <= 0 || !value.is_structured()) return 0;
  int deepest = 0;
  for (const json& child : value) deepest = std::max(deepest, Depth(child, limit - 1));
  return deepest + 1;
}

std::optional<dra::DeviceTaintEffect> EffectOf(const std::string& text) {
  if (text == "None") return dra::DeviceTaintEffect::kNone;
  if (text == "NoSchedule") return dra::DeviceTaintEffect::kNoSchedule;
  if (text == "NoExecute") return dra::DeviceTaintEffect::kNoExecute;
  return std::nullopt;
}

Status UnknownEffect(const std::string& text, const std::string& at) {
  return Status::Invalid(at + ": \"" + KeyText(text) + "\" is not None, NoSchedule or NoExecute");
}

}  // namespace

std::string Shown(const json& value) {
  // Written out only when shallow: the writer recurses, and only 64 bytes are shown.
  constexpr int kShownDepth = 16;
  if (Depth(value, kShownDepth + 1) > kShownDepth) {
    return std::string(value.type_name()) + " nested deeper than " + std::to_string(kShownDepth) +
           " levels";
  }
  return JsonPrefix(value, 64);
}

std::string Index(const std::string& at, size_t i) {
  return at + "[" + std::to_string(i) + "]";
}

std::string MapKey(const std::string& at, const std::string& key) {
  return at + "[\"" + KeyText(key) + "\"]";
}

std::string Child(const std::string& at, const char* key) {
  return at + "." + key;
}

Status ReadMeta(const json& object, const char* kind, bool namespaced, std::string* name_space,
                std::string* name, std::string* where) {
  if (!object.is_object()) {
    return Status::Invalid(std::string(kind) + ": expected an object, got " + Shown(object));
  }
  const json& metadata = Field(object, "metadata");
  const std::string unnamed = std::string(kind) + ": metadata.";
  const json& n = Field(metadata, "name");
  if (!n.is_string() || n.get_ref<const std::string&>().empty()) {
    return Status::Invalid(unnamed + "name: required");
  }
  *name = n.get<std::string>();
  if (name->size() > kMaxNameLength) {
    return Status::Invalid(unnamed + "name: \"" + KeyText(*name) + "\" is longer than " +
                           std::to_string(kMaxNameLength) + " bytes");
  }
  *where = std::string(kind) + " \"" + KeyText(*name) + "\"";
  if (!namespaced) return Status::Ok();
  const json& ns = Field(metadata, "namespace");
  if (!ns.is_string() || ns.get_ref<const std::string&>().empty()) {
    return Status::Invalid(*where + ": metadata.namespace: required");
  }
  *name_space = ns.get<std::string>();
  if (name_space->size() > kMaxDnsLabel) {
    return Status::Invalid(*where + ": metadata.namespace: longer than " +
                           std::to_string(kMaxDnsLabel) + " bytes");
  }
  *where = std::string(kind) + " \"" + KeyText(*name_space) + "/" + KeyText(*name) + "\"";
  return Status::Ok();
}

Status List(const json& object, const char* key, const std::string& at, size_t max,
            const json** out) {
  static const json kEmpty = json::array();  // immutable: a shared empty list, not state
  const json& v = Field(object, key);
  *out = &kEmpty;
  if (v.is_null()) return Status::Ok();
  if (!v.is_array()) {
    return Status::Invalid(Child(at, key) + ": expected a list, got " + Shown(v));
  }
  if (v.size() > max) {
    return Status::Invalid(Child(at, key) + ": " + std::to_string(v.size()) + " entries, at most " +
                           std::to_string(max) + " allowed");
  }
  *out = &v;
  return Status::Ok();
}

Status Map(const json& object, const char* key, const std::string& at, size_t max,
           const json** out) {
  static const json kEmpty = json::object();  // immutable: a shared empty map, not state
  const json& v = Field(object, key);
  *out = &kEmpty;
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) {
    return Status::Invalid(Child(at, key) + ": expected a map, got " + Shown(v));
  }
  if (v.size() > max) {
    return Status::Invalid(Child(at, key) + ": " + std::to_string(v.size()) + " entries, at most " +
                           std::to_string(max) + " allowed");
  }
  *out = &v;
  return Status::Ok();
}

Status Object(const json& object, const char* key, const std::string& at, const json** out) {
  const json& v = Field(object, key);
  *out = nullptr;
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) {
    return Status::Invalid(Child(at, key) + ": expected an object, got " + Shown(v));
  }
  *out = &v;
  return Status::Ok();
}

Status RequiredObject(const json& object, const char* key, const std::string& path,
                      const json** out) {
  const json& v = Field(object, key);
  *out = nullptr;
  if (v.is_null()) return Status::Invalid(path + ": required");
  if (!v.is_object()) return Status::Invalid(path + ": expected an object, got " + Shown(v));
  *out = &v;
  return Status::Ok();
}

bool IsSemanticVersion(std::string_view text) {
  return IsSemverText(text);
}

Status OptionalString(const json& object, const char* key, const std::string& at, size_t max_len,
                      std::optional<std::string>* out) {
  const json& v = Field(object, key);
  out->reset();
  if (v.is_null()) return Status::Ok();
  if (!v.is_string()) {
    return Status::Invalid(Child(at, key) + ": expected a string, got " + Shown(v));
  }
  const std::string& text = v.get_ref<const std::string&>();
  if (text.size() > max_len) {
    return Status::Invalid(Child(at, key) + ": \"" + KeyText(text) + "\" is longer than " +
                           std::to_string(max_len) + " bytes");
  }
  *out = text;
  return Status::Ok();
}

Status RequiredString(const json& object, const char* key, const std::string& at, size_t max_len,
                      std::string* out) {
  std::optional<std::string> text;
  GANTRY_RETURN_IF_ERROR(OptionalString(object, key, at, max_len, &text));
  if (!text || text->empty()) return Status::Invalid(Child(at, key) + ": required");
  *out = std::move(*text);
  return Status::Ok();
}

Status OptionalBool(const json& object, const char* key, const std::string& at,
                    std::optional<bool>* out) {
  const json& v = Field(object, key);
  out->reset();
  if (v.is_null()) return Status::Ok();
  if (!v.is_boolean()) {
    return Status::Invalid(Child(at, key) + ": expected true or false, got " + Shown(v));
  }
  *out = v.get<bool>();
  return Status::Ok();
}

Status OptionalInt(const json& object, const char* key, const std::string& at,
                   std::optional<int64_t>* out) {
  const json& v = Field(object, key);
  out->reset();
  if (v.is_null()) return Status::Ok();
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})) {
    return Status::Invalid(Child(at, key) + ": expected a 64-bit integer, got " + Shown(v));
  }
  *out = v.get<int64_t>();
  return Status::Ok();
}

Status Strings(const json& object, const char* key, const std::string& at, size_t max,
               size_t max_len, std::vector<std::string>* out) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(List(object, key, at, max, &list));
  out->clear();
  for (size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    const std::string here = Index(Child(at, key), i);
    if (!v.is_string()) return Status::Invalid(here + ": expected a string, got " + Shown(v));
    if (v.get_ref<const std::string&>().size() > max_len) {
      return Status::Invalid(here + ": longer than " + std::to_string(max_len) + " bytes");
    }
    out->push_back(v.get<std::string>());
  }
  return Status::Ok();
}

Status OptionalTime(const json& object, const char* key, const std::string& at,
                    std::optional<int64_t>* out) {
  const json& v = Field(object, key);
  out->reset();
  if (v.is_null()) return Status::Ok();
  if (!v.is_string()) {
    return Status::Invalid(Child(at, key) + ": expected an RFC 3339 time, got " + Shown(v));
  }
  auto seconds = ParseRfc3339(v.get_ref<const std::string&>());
  if (!seconds.ok()) return Status::Invalid(Child(at, key) + ": " + seconds.status().message());
  *out = *seconds;
  return Status::Ok();
}

Status CheckDnsLabel(const std::string& text, const std::string& at) {
  if (IsDnsLabel(text)) return Status::Ok();
  return Status::Invalid(at + ": \"" + KeyText(text) +
                         "\" is not a DNS label (at most 63 lowercase alphanumerics or '-', "
                         "starting and ending alphanumeric)");
}

Status CheckDnsSubdomain(const std::string& text, const std::string& at, size_t max_len) {
  if (IsDnsSubdomain(text, max_len)) return Status::Ok();
  return Status::Invalid(at + ": \"" + KeyText(text) + "\" is not a DNS subdomain (at most " +
                         std::to_string(max_len) +
                         " lowercase alphanumerics, '-' or '.', starting and ending "
                         "alphanumeric)");
}

Status CheckDriverName(const std::string& text, const std::string& at) {
  const bool ok = !text.empty() && text.size() <= kMaxDriverName && IsAlnum(text.front()) &&
                  IsAlnum(text.back()) && std::all_of(text.begin(), text.end(), [](char c) {
                    return IsAlnum(c) || c == '-' || c == '_' || c == '.';
                  });
  if (ok) return Status::Ok();
  return Status::Invalid(at + ": \"" + KeyText(text) +
                         "\" is not a driver name (at most 63 alphanumerics, '-', '_' or '.', "
                         "starting and ending alphanumeric)");
}

Status CheckPoolName(const std::string& text, const std::string& at) {
  if (text.size() > kMaxDnsSubdomain) {
    return Status::Invalid(at + ": longer than " + std::to_string(kMaxDnsSubdomain) + " bytes");
  }
  if (text.empty()) return Status::Invalid(at + ": required");
  std::string_view rest(text);
  while (true) {
    const size_t slash = rest.find('/');
    if (!IsDnsSubdomain(rest.substr(0, slash), kMaxDnsSubdomain)) {
      return Status::Invalid(at + ": \"" + KeyText(text) +
                             "\" is not a pool name (DNS subdomains separated by '/')");
    }
    if (slash == std::string_view::npos) return Status::Ok();
    rest.remove_prefix(slash + 1);
  }
}

Status QualifyName(const std::string& name, const std::string& driver, const std::string& at,
                   dra::QualifiedName* out, bool* bare) {
  const size_t slash = name.find('/');
  *bare = slash == std::string::npos;
  const std::string id = *bare ? name : name.substr(slash + 1);
  if (!*bare) {
    const std::string domain = name.substr(0, slash);
    if (domain.empty()) return Status::Invalid(at + ": the domain must not be empty");
    // Upstream checks only names of one or two parts ("a/b/c" passes its validation): the
    // domain is what comes before the first '/', as its CEL environment splits it.
    if (id.find('/') == std::string::npos) {
      GANTRY_RETURN_IF_ERROR(CheckDriverName(domain, at));
    } else if (domain.size() > kMaxDomainLength) {
      return Status::Invalid(at + ": the domain is longer than 63 bytes");
    }
  }
  if (id.find('/') == std::string::npos) {
    if (id.empty()) return Status::Invalid(at + ": the name must not be empty");
    if (id.size() > kMaxIdLength || !IsCIdentifier(id)) {
      return Status::Invalid(at + ": \"" + KeyText(id) +
                             "\" is not a C identifier of at most 32 bytes");
    }
  } else if (id.size() > kMaxIdLength + 1 + kMaxDomainLength) {
    return Status::Invalid(at + ": longer than " +
                           std::to_string(kMaxIdLength + 1 + kMaxDomainLength) + " bytes");
  }
  *out = *bare ? driver + "/" + name : name;
  return Status::Ok();
}

Status CheckFullyQualifiedName(const std::string& name, const std::string& at) {
  if (name.find('/') == std::string::npos) {
    return Status::Invalid(at + ": \"" + KeyText(name) +
                           "\" is not fully qualified (a domain and a name separated by '/')");
  }
  dra::QualifiedName unused;
  bool bare = false;
  return QualifyName(name, "", at, &unused, &bare);
}

Status Quantity(const json& value, const std::string& at, Milli* out) {
  if (value.is_null()) return Status::Invalid(at + ": required");
  auto q = ReadQuantity(value, at);
  if (!q.ok()) return q.status();
  *out = *q;
  return Status::Ok();
}

Status Taint(const json& taint, const std::string& at, dra::DeviceTaint* out) {
  if (!taint.is_object()) return Status::Invalid(at + ": expected an object, got " + Shown(taint));
  GANTRY_RETURN_IF_ERROR(RequiredString(taint, "key", at, kMaxLabelKeyLength, &out->key));
  std::optional<std::string> value;
  GANTRY_RETURN_IF_ERROR(OptionalString(taint, "value", at, kMaxLabelValue, &value));
  out->value = value.value_or("");
  std::string effect;
  GANTRY_RETURN_IF_ERROR(RequiredString(taint, "effect", at, kMaxDnsLabel, &effect));
  auto parsed = EffectOf(effect);
  if (!parsed) return UnknownEffect(effect, Child(at, "effect"));
  out->effect = *parsed;
  return OptionalTime(taint, "timeAdded", at, &out->time_added);
}

Status Tolerations(const json& object, const char* key, const std::string& at,
                   std::vector<dra::DeviceToleration>* out) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(List(object, key, at, static_cast<size_t>(dra::kMaxTolerations), &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const json& t = (*list)[i];
    const std::string here = Index(Child(at, key), i);
    if (!t.is_object()) return Status::Invalid(here + ": expected an object, got " + Shown(t));
    dra::DeviceToleration toleration;
    std::optional<std::string> text;
    GANTRY_RETURN_IF_ERROR(OptionalString(t, "key", here, kMaxLabelKeyLength, &text));
    toleration.key = text.value_or("");
    GANTRY_RETURN_IF_ERROR(OptionalString(t, "operator", here, kMaxDnsLabel, &text));
    // Defaulted to Equal by the API server (SetDefaults_DeviceToleration).
    const std::string op = text.value_or("");
    if (op.empty() || op == "Equal") {
      toleration.op = dra::DeviceToleration::Op::kEqual;
    } else if (op == "Exists") {
      toleration.op = dra::DeviceToleration::Op::kExists;
    } else {
      return Status::Invalid(Child(here, "operator") + ": \"" + KeyText(op) +
                             "\" is not Equal or Exists");
    }
    GANTRY_RETURN_IF_ERROR(OptionalString(t, "value", here, kMaxLabelValue, &text));
    toleration.value = text.value_or("");
    if (toleration.op == dra::DeviceToleration::Op::kExists && !toleration.value.empty()) {
      return Status::Invalid(Child(here, "value") + ": must be empty for operator Exists");
    }
    GANTRY_RETURN_IF_ERROR(OptionalString(t, "effect", here, kMaxDnsLabel, &text));
    if (text && !text->empty()) {
      auto effect = EffectOf(*text);
      if (!effect) return UnknownEffect(*text, Child(here, "effect"));
      toleration.effect = *effect;
    }
    GANTRY_RETURN_IF_ERROR(
        OptionalInt(t, "tolerationSeconds", here, &toleration.toleration_seconds));
    out->push_back(std::move(toleration));
  }
  return Status::Ok();
}

Status BindingConditions(const json& object, const std::string& at,
                         std::vector<std::string>* conditions,
                         std::vector<std::string>* failure_conditions) {
  GANTRY_RETURN_IF_ERROR(Strings(object, "bindingConditions", at, kMaxBindingConditions,
                                 kMaxLabelKeyLength, conditions));
  GANTRY_RETURN_IF_ERROR(Strings(object, "bindingFailureConditions", at, kMaxBindingConditions,
                                 kMaxLabelKeyLength, failure_conditions));
  for (const auto& [list, key] : {std::pair{conditions, "bindingConditions"},
                                  std::pair{failure_conditions, "bindingFailureConditions"}}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string here = Index(Child(at, key), i);
      if ((*list)[i].empty()) return Status::Invalid(here + ": must not be empty");
      if (std::find(list->begin(), list->begin() + static_cast<std::ptrdiff_t>(i), (*list)[i]) !=
          list->begin() + static_cast<std::ptrdiff_t>(i)) {
        return Status::Invalid(here + ": \"" + KeyText((*list)[i]) + "\" is given twice");
      }
    }
  }
  for (size_t i = 0; i < failure_conditions->size(); ++i) {
    if (std::find(conditions->begin(), conditions->end(), (*failure_conditions)[i]) !=
        conditions->end()) {
      return Status::Invalid(Index(Child(at, "bindingFailureConditions"), i) + ": \"" +
                             KeyText((*failure_conditions)[i]) + "\" is also a binding condition");
    }
  }
  if (conditions->empty() != failure_conditions->empty()) {
    return Status::Invalid(
        at + ": bindingConditions and bindingFailureConditions are set together or not at all");
  }
  return Status::Ok();
}

Status NodeSelector(const json& selector, const std::string& at, bool exactly_one,
                    NodeSelectorTerms* out) {
  if (!selector.is_object()) {
    return Status::Invalid(at + ": expected a node selector, got " + Shown(selector));
  }
  NodeAffinity affinity;
  GANTRY_RETURN_IF_ERROR(ParseNodeSelector(selector, at, &affinity));
  if (affinity.terms.empty()) {
    return Status::Invalid(at + ".nodeSelectorTerms: must have at least one node selector term");
  }
  if (exactly_one && affinity.terms.size() != 1) {
    return Status::Invalid(at +
                           ".nodeSelectorTerms: must have exactly one node selector term, got " +
                           std::to_string(affinity.terms.size()));
  }
  *out = std::move(affinity.terms);
  return Status::Ok();
}

Status OpaqueConfig(const json& config, const std::string& at, std::string* driver,
                    std::string* parameters_json) {
  if (!config.is_object())
    return Status::Invalid(at + ": expected an object, got " + Shown(config));
  const json* opaque = nullptr;
  GANTRY_RETURN_IF_ERROR(Object(config, "opaque", at, &opaque));
  const std::string here = Child(at, "opaque");
  if (opaque == nullptr) return Status::Invalid(here + ": required");
  GANTRY_RETURN_IF_ERROR(RequiredString(*opaque, "driver", here, kMaxDriverName, driver));
  GANTRY_RETURN_IF_ERROR(CheckDriverName(*driver, Child(here, "driver")));
  const json& parameters = Field(*opaque, "parameters");
  const std::string field = Child(here, "parameters");
  if (parameters.is_null()) return Status::Invalid(field + ": required");
  if (!parameters.is_object()) {
    return Status::Invalid(field + ": must be a JSON object, got " + Shown(parameters));
  }
  if (Depth(parameters, kMaxParametersDepth + 1) > kMaxParametersDepth) {
    return Status::Invalid(field + ": nested deeper than " + std::to_string(kMaxParametersDepth) +
                           " levels");
  }
  *parameters_json = JsonText(parameters);
  if (parameters_json->size() > kMaxOpaqueParameters) {
    return Status::Invalid(field + ": " + std::to_string(parameters_json->size()) +
                           " bytes as JSON, at most " + std::to_string(kMaxOpaqueParameters));
  }
  return Status::Ok();
}

Status CelSelectors(const json& object, const char* key, const std::string& at,
                    std::vector<std::string>* out) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(List(object, key, at, static_cast<size_t>(dra::kMaxSelectors), &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(Child(at, key), i);
    const json* cel = nullptr;
    if (!(*list)[i].is_object()) {
      return Status::Invalid(here + ": expected an object, got " + Shown((*list)[i]));
    }
    GANTRY_RETURN_IF_ERROR(Object((*list)[i], "cel", here, &cel));
    if (cel == nullptr) return Status::Invalid(Child(here, "cel") + ": required");
    std::string expression;
    GANTRY_RETURN_IF_ERROR(
        RequiredString(*cel, "expression", Child(here, "cel"), kMaxCelExpression, &expression));
    out->push_back(std::move(expression));
  }
  return Status::Ok();
}

}  // namespace gantry::k8s::drajson
