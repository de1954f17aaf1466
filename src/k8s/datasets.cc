#include "k8s/datasets.h"

#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

Status ReadList(const json& annotations, const char* annotation, const std::string& where,
                const std::string& ns, size_t max, std::vector<std::string>* out) {
  out->clear();
  const json& value = Field(annotations, annotation);
  if (value.is_null()) return Status::Ok();
  const std::string text = value.is_string() ? value.get<std::string>() : "";
  // An empty annotation names none (a template that left it blank), as its absence does.
  if (text.find_first_not_of(" \t") == std::string::npos) return Status::Ok();
  auto parsed = ParseDatasetList(text, ns, max);
  if (!parsed.ok()) {
    return Status::Invalid(where + ": metadata.annotations[" + annotation + "]: \"" +
                           KeyText(text) + "\": " + parsed.status().message());
  }
  *out = std::move(parsed).value();
  return Status::Ok();
}

}  // namespace

Status ReadPodDatasets(const json& annotations, const std::string& where, const std::string& ns,
                       std::vector<std::string>* out) {
  return ReadList(annotations, kDatasetsAnnotation, where, ns, kMaxDatasetsPerTask, out);
}

Status ReadNodeCachedDatasets(const json& annotations, const std::string& where,
                              std::vector<std::string>* out) {
  return ReadList(annotations, kCachedDatasetsAnnotation, where, "", kMaxCachedDatasetsPerNode,
                  out);
}

std::string FluidDatasetOf(const json& volume_spec) {
  const json& csi = Field(volume_spec, "csi");
  if (String(csi, "driver") != kFluidCsiDriver) return "";
  const json& attributes = Field(csi, "volumeAttributes");
  const std::string name = String(attributes, kFluidRuntimeNamespaceAttribute) + "/" +
                           String(attributes, kFluidRuntimeNameAttribute);
  return CheckDatasetName(name).ok() ? name : "";
}

Result<FluidDatasetInfo> ParseFluidDataset(const json& object) {
  auto meta = NamedMeta(object, "dataset");
  if (!meta.ok()) return meta.status();
  FluidDatasetInfo info;
  info.meta = std::move(meta).value();
  const std::string where = "dataset " + info.meta.Key();
  info.dataset.name = info.meta.namespace_ + "/" + info.meta.name;
  Status named = CheckDatasetName(info.dataset.name);
  if (!named.ok()) return Status::Invalid(where + ": " + named.message());
  info.dataset.uid = info.meta.uid.substr(0, kMaxNameLength);
  const std::string total = String(Field(object, "status"), "ufsTotal");
  // Fluid writes a placeholder ("[Calculating]") before it knows: not a number yet.
  if (!total.empty() && total.front() >= '0' && total.front() <= '9') {
    auto size = ParseDatasetSize(total);
    if (!size.ok()) return Status::Invalid(where + ": status.ufsTotal: " + size.status().message());
    info.dataset.size_bytes = *size;
  }
  return info;
}

}  // namespace gantry::k8s
