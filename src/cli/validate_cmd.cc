// gantry validate: checks, offline, what gantry would read: its own configuration (a
// file, or the config.yaml of a ConfigMap) and the objects it schedules by (pods,
// PodGroups of both APIs, Queues, PriorityClasses, nodes, and DRA's DeviceClasses,
// ResourceSlices, ResourceClaims, ResourceClaimTemplates and DeviceTaintRules). Other kinds
// only need an apiVersion, a kind and a name.
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "daemon/config.h"
#include "k8s/dra_objects.h"
#include "k8s/json_text.h"
#include "k8s/objects.h"
#include "k8s/yaml_json.h"
#include "model/limits.h"
#include "yaml/yaml_load.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string Str(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

// A value as a message shows it: text quoted (and cut), numbers as written, shapes named.
std::string Describe(const json& value) {
  if (value.is_string()) return QuoteForMessage(value.get<std::string>());
  if (value.is_null()) return "nothing (null)";
  if (value.is_array()) return "a list";
  if (value.is_object()) return "a mapping";
  return k8s::JsonText(value);
}

// A required string field of `o` (at `pointer`, e.g. "/metadata/name"): "" when it is a
// non-empty string, else what is wrong with it.
std::string RequiredString(const json& o, const char* key, const std::string& field) {
  if (!o.is_object() || !o.contains(key)) return field + " is missing";
  const json& value = o[key];
  if (!value.is_string()) return field + " must be a string, got " + Describe(value);
  if (value.get<std::string>().empty()) return field + " must not be empty";
  return "";
}

// A name as a message shows it: as it is, or quoted and cut when it is too long to be one.
std::string ShowName(const std::string& name) {
  return name.size() <= kMaxNameLength ? name : QuoteForMessage(name);
}

// Checks one object; returns an error message, or "" when it is fine, and sets *line to
// the line the error is about. `line_of` gives the line of a field by JSON pointer ("" for
// the object's own; items of a List all say the line of its items).
std::string CheckObject(const json& o, const std::string& where,
                        const std::function<int(const std::string&)>& line_of, int* line) {
  auto fail = [&](const std::string& pointer, std::string message) {
    *line = line_of(pointer);
    return message;
  };
  if (!o.is_object()) return fail("", "expected a mapping, got " + Describe(o));
  if (std::string m = RequiredString(o, "kind", "kind"); !m.empty()) return fail("/kind", m);
  if (std::string m = RequiredString(o, "apiVersion", "apiVersion"); !m.empty()) {
    return fail("/apiVersion", m);
  }
  const std::string kind = Str(o, "kind");
  const std::string api = Str(o, "apiVersion");
  const json& meta = o.contains("metadata") ? o["metadata"] : json();
  if (!meta.is_null() && !meta.is_object()) {
    return fail("/metadata", "metadata must be a mapping, got " + Describe(meta));
  }
  for (const char* key : {"name", "generateName", "namespace"}) {
    if (meta.is_object() && meta.contains(key) && !meta[key].is_string()) {
      return fail(std::string("/metadata/") + key,
                  std::string("metadata.") + key + " must be a string, got " + Describe(meta[key]));
    }
  }
  if (kind != "List" && Str(meta, "name").empty() && Str(meta, "generateName").empty()) {
    return fail("/metadata", "metadata.name is missing");
  }
  *line = line_of("");
  auto message = [](const Status& st) { return st.ok() ? std::string() : st.message(); };
  if (kind == "Pod" && api == "v1") return message(k8s::ParsePod(o).status());
  if (kind == "Node" && api == "v1") return message(k8s::ParseNode(o).status());
  if (kind == "PriorityClass") return message(k8s::ParsePriorityClass(o).status());
  if (api.rfind("resource.k8s.io/", 0) == 0) {
    if (kind == "DeviceClass") return message(k8s::DecodeDeviceClass(o).status());
    if (kind == "ResourceSlice") return message(k8s::DecodeResourceSlice(o).status());
    if (kind == "ResourceClaim") return message(k8s::DecodeResourceClaim(o).status());
    if (kind == "ResourceClaimTemplate") {
      return message(k8s::DecodeResourceClaimTemplate(o).status());
    }
    if (kind == "DeviceTaintRule") return message(k8s::DecodeDeviceTaintRule(o).status());
  }
  if (kind == "PodGroup") {
    if (api.rfind("scheduling.volcano.sh/", 0) == 0) {
      return message(k8s::ParsePodGroup(o, k8s::GroupApi::kVolcano).status());
    }
    if (api.rfind("scheduling.x-k8s.io/", 0) == 0) {
      return message(k8s::ParsePodGroup(o, k8s::GroupApi::kCoscheduling).status());
    }
    if (api == "scheduling.k8s.io/v1beta1") return message(k8s::ParseNativePodGroup(o).status());
    return fail("/apiVersion", "apiVersion " + ShowName(api) +
                                   ": gantry reads PodGroups of scheduling.k8s.io/v1beta1, "
                                   "scheduling.volcano.sh and scheduling.x-k8s.io");
  }
  if (kind == "Queue" && api.rfind("scheduling.volcano.sh/", 0) == 0) {
    auto q = k8s::ParseQueue(o);
    if (!q.ok()) return q.status().message();
    if (!q->guarantee.FitsInNamed(q->capability)) {
      return "queue " + q->meta.name + ": spec.guarantee.resource (" + q->guarantee.ToString() +
             ") exceeds spec.capability (" + q->capability.ToString() + ")";
    }
    return "";
  }
  if (kind == "ConfigMap" && o.contains("data") && o["data"].is_object() &&
      o["data"].contains("config.yaml")) {
    const json& text = o["data"]["config.yaml"];
    if (!text.is_string()) {
      return fail("/data", "data.config.yaml: expected text, got " + Describe(text));
    }
    DaemonConfig config;
    return message(
        ParseDaemonConfig(text.get<std::string>(), where + " data.config.yaml", &config));
  }
  if (kind == "List") {
    if (!o.contains("items") || !o["items"].is_array()) {
      return fail("/items", "items must be a list");
    }
    auto same_line = [&](const std::string&) { return line_of("/items"); };
    for (size_t i = 0; i < o["items"].size(); ++i) {
      std::string m =
          CheckObject(o["items"][i], where + " items[" + std::to_string(i) + "]", same_line, line);
      if (!m.empty()) return "items[" + std::to_string(i) + "]: " + m;
    }
  }
  return "";
}

}  // namespace

int RunValidate(const std::vector<std::string>& files) {
  int bad = 0;
  for (const std::string& file : files) {
    auto docs = k8s::LoadYamlDocuments(file);
    if (!docs.ok()) {
      std::fprintf(stderr, "%s\n", docs.status().message().c_str());
      bad++;
      continue;
    }
    if (docs->empty()) {
      std::fprintf(stderr,
                   "%s: no YAML documents (the file is empty or holds only comments): nothing "
                   "to validate\n",
                   file.c_str());
      bad++;
      continue;
    }
    // A file of one document without a kind is a gantry configuration, unless it has an
    // apiVersion or metadata: then it is a Kubernetes object that lacks its kind.
    const json& first = (*docs)[0].object;
    if (docs->size() == 1 && first.is_object() && !first.contains("kind") &&
        !first.contains("apiVersion") && !first.contains("metadata")) {
      DaemonConfig config;
      Status st = LoadDaemonConfig(file, &config);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        bad++;
      } else {
        std::printf("%s: ok (gantry configuration)\n", file.c_str());
      }
      continue;
    }
    std::map<std::string, int> kinds;
    int file_errors = 0;
    for (const k8s::YamlDocument& doc : *docs) {
      const json& o = doc.object;
      const std::string kind = Str(o, "kind");
      const json& meta = o.is_object() && o.contains("metadata") ? o["metadata"] : json();
      std::string name = Str(meta, "namespace").empty()
                             ? Str(meta, "name")
                             : Str(meta, "namespace") + "/" + Str(meta, "name");
      int line = doc.line;
      auto line_of = [&](const std::string& pointer) { return doc.LineOf(pointer); };
      std::string error = CheckObject(o, file + ":" + std::to_string(doc.line), line_of, &line);
      if (!error.empty()) {
        std::fprintf(stderr, "%s:%d: %s %s: %s\n", file.c_str(), line,
                     kind.empty() ? "object" : ShowName(kind).c_str(), ShowName(name).c_str(),
                     error.c_str());
        file_errors++;
        continue;
      }
      kinds[kind]++;
    }
    if (file_errors > 0) {
      bad++;
      continue;
    }
    std::string summary;
    for (const auto& [kind, n] : kinds)
      summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    std::printf("%s: ok (%s)\n", file.c_str(), summary.c_str());
  }
  return bad == 0 ? 0 : 2;
}

}  // namespace gantry
