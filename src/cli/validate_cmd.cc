// gantry validate: checks, offline, what gantry would read: its own configuration (a
// file, or the config.yaml of a ConfigMap) and the objects it schedules by (pods,
// PodGroups of both APIs, Queues, PriorityClasses, nodes). Other kinds only need an
// apiVersion, a kind and a name.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "daemon/config.h"
#include "k8s/objects.h"
#include "k8s/yaml_json.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string Str(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

// Checks one object; returns an error message, or "" when it is fine.
std::string CheckObject(const json& o, const std::string& where) {
  const std::string kind = Str(o, "kind");
  const std::string api = Str(o, "apiVersion");
  if (api.empty()) return "apiVersion is missing";
  const json& meta = o.contains("metadata") ? o["metadata"] : json();
  if (kind != "List" && Str(meta, "name").empty() && Str(meta, "generateName").empty()) {
    return "metadata.name is missing";
  }
  auto message = [](const Status& st) { return st.ok() ? std::string() : st.message(); };
  if (kind == "Pod" && api == "v1") return message(k8s::ParsePod(o).status());
  if (kind == "Node" && api == "v1") return message(k8s::ParseNode(o).status());
  if (kind == "PriorityClass") return message(k8s::ParsePriorityClass(o).status());
  if (kind == "PodGroup") {
    if (api.rfind("scheduling.volcano.sh/", 0) == 0) {
      return message(k8s::ParsePodGroup(o, k8s::GroupApi::kVolcano).status());
    }
    if (api.rfind("scheduling.x-k8s.io/", 0) == 0) {
      return message(k8s::ParsePodGroup(o, k8s::GroupApi::kCoscheduling).status());
    }
    return "apiVersion " + api +
           ": gantry reads PodGroups of scheduling.volcano.sh and scheduling.x-k8s.io";
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
  if (kind == "ConfigMap" && o.contains("data") && o["data"].contains("config.yaml")) {
    const json& text = o["data"]["config.yaml"];
    if (!text.is_string()) return "data.config.yaml: expected text";
    DaemonConfig config;
    return message(
        ParseDaemonConfig(text.get<std::string>(), where + " data.config.yaml", &config));
  }
  if (kind == "List" && o.contains("items") && o["items"].is_array()) {
    for (size_t i = 0; i < o["items"].size(); ++i) {
      std::string m = CheckObject(o["items"][i], where + " items[" + std::to_string(i) + "]");
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
    // A file of one document without a kind is a gantry configuration, unless it has an
    // apiVersion or metadata: then it is a Kubernetes object that lacks its kind.
    const json& first = docs->empty() ? json() : (*docs)[0].object;
    if (docs->size() == 1 && Str(first, "kind").empty() &&
        !(first.is_object() && (first.contains("apiVersion") || first.contains("metadata")))) {
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
      std::string kind = Str(o, "kind");
      const json& meta = o.is_object() && o.contains("metadata") ? o["metadata"] : json();
      std::string name = Str(meta, "namespace").empty()
                             ? Str(meta, "name")
                             : Str(meta, "namespace") + "/" + Str(meta, "name");
      std::string where = file + ":" + std::to_string(doc.line);
      std::string error = !o.is_object() ? "expected a mapping"
                          : kind.empty() ? "kind is missing"
                                         : CheckObject(o, where);
      if (!error.empty()) {
        std::fprintf(stderr, "%s: %s %s: %s\n", where.c_str(),
                     kind.empty() ? "object" : kind.c_str(), name.c_str(), error.c_str());
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
