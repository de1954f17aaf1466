#include "sim/scenario_datasets.h"

#include <algorithm>
#include <limits>
#include <set>

#include "model/datasets.h"
#include "model/limits.h"

namespace gantry {

Status ParseDatasetNames(const YamlReader& r, const YAML::Node& names, const std::string& field,
                         const std::string& default_namespace, size_t max,
                         std::vector<std::string>* out) {
  GANTRY_RETURN_IF_ERROR(r.List(names, field));
  if (names.size() > max) {
    return r.Error(names, field,
                   std::to_string(names.size()) + " datasets; the limit is " + std::to_string(max));
  }
  out->clear();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    std::string name;
    GANTRY_RETURN_IF_ERROR(r.String(names[i], f, &name));
    if (name.find('/') == std::string::npos && !default_namespace.empty()) {
      name = default_namespace + "/" + name;
    }
    Status st = CheckDatasetName(name);
    if (!st.ok()) return r.Error(names[i], f, st.message());
    out->push_back(std::move(name));
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::Ok();
}

Status ParseDatasets(const YamlReader& r, const YAML::Node& datasets, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(datasets, "datasets"));
  if (datasets.size() > kMaxKnownDatasets) {
    return r.Error(datasets, "datasets",
                   std::to_string(datasets.size()) + " datasets; the limit is " +
                       std::to_string(kMaxKnownDatasets));
  }
  std::vector<DatasetInfo> infos;
  std::set<std::string> seen;
  for (size_t i = 0; i < datasets.size(); ++i) {
    const YAML::Node& d = datasets[i];
    const std::string f = "datasets[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(d, f, {"name", "size", "warmupSeconds", "uid"}));
    DatasetInfo info;
    if (!d["name"]) return r.Error(d, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(r.String(d["name"], f + ".name", &info.name));
    Status st = CheckDatasetName(info.name);
    if (!st.ok()) return r.Error(d["name"], f + ".name", st.message());
    if (!seen.insert(info.name).second) {
      return r.Error(d["name"], f + ".name", "dataset \"" + info.name + "\" is described twice");
    }
    if (d["size"]) {
      std::string text;
      GANTRY_RETURN_IF_ERROR(r.String(d["size"], f + ".size", &text));
      auto size = ParseDatasetSize(text);
      if (!size.ok()) return r.Error(d["size"], f + ".size", size.status().message());
      if (*size <= 0) return r.Error(d["size"], f + ".size", "must be more than 0 bytes");
      info.size_bytes = *size;
    }
    if (d["warmupSeconds"]) {
      GANTRY_RETURN_IF_ERROR(r.Int(d["warmupSeconds"], f + ".warmupSeconds", 0,
                                   kMaxConfiguredSeconds, &info.warmup_s));
    }
    if (d["uid"]) GANTRY_RETURN_IF_ERROR(r.Name(d["uid"], f + ".uid", &info.uid));
    infos.push_back(std::move(info));
  }
  Status st = cluster->SetDatasets(std::move(infos));
  if (!st.ok()) return r.Error(datasets, "datasets", st.message());
  return Status::Ok();
}

}  // namespace gantry
