// Nodes decoded from the API's JSON (objects.h: ParseNode).
#include <nlohmann/json.hpp>

#include "k8s/datasets.h"
#include "k8s/declared_features.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/objects.h"
#include "model/limits.h"
#include "model/quantity.h"

namespace gantry::k8s {

using json = nlohmann::json;

Result<Node> ParseNode(const json& object) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return meta.status();
  if (meta->name.size() > kMaxNameLength) {
    return Status::Invalid("node " + meta->name.substr(0, 80) + "...: metadata.name is " +
                           std::to_string(meta->name.size()) + " bytes long; the limit is " +
                           std::to_string(kMaxNameLength));
  }
  const std::string where = "node " + meta->name;
  Node node;
  node.name = meta->name;
  const json& spec = Field(object, "spec");
  node.labels = LabelsOf(Field(Field(object, "metadata"), "labels"));
  node.unschedulable =
      Field(spec, "unschedulable").is_boolean() && Field(spec, "unschedulable").get<bool>();
  node.declared_features = DeclaredFeatures(object);
  const json& taints = Field(spec, "taints");
  for (size_t i = 0; taints.is_array() && i < taints.size(); ++i) {
    Taint t;
    t.key = String(taints[i], "key");
    t.value = String(taints[i], "value");
    std::string effect = String(taints[i], "effect");
    if (!ParseTaintEffect(effect, &t.effect)) {
      return Status::Invalid(where + ": spec.taints[" + std::to_string(i) +
                             "].effect: unknown effect \"" + effect + "\"");
    }
    node.taints.push_back(std::move(t));
  }
  ResourceVector allocatable;
  GANTRY_RETURN_IF_ERROR(ParseResourceList(Field(Field(object, "status"), "allocatable"),
                                           where + ": status.allocatable", NameSource::kTrusted,
                                           &allocatable));
  // Checked before any device is made: each is an object of its own.
  Milli gpus = allocatable.Get(kGpu);
  const std::string gpu_field = where + ": status.allocatable." + std::string(kGpuResourceName);
  if (gpus % kMilliPerUnit != 0) {
    return Status::Invalid(gpu_field + ": " + FormatQuantity(gpus) + " is not a whole number");
  }
  if (gpus / kMilliPerUnit > kMaxGpusPerNode) {
    return Status::OutOfRange(gpu_field + ": " + std::to_string(gpus / kMilliPerUnit) +
                              " devices is more than a node may have (" +
                              std::to_string(kMaxGpusPerNode) + ", the limit)");
  }
  allocatable.Set(kGpu, 0);
  node.allocatable = std::move(allocatable);
  GpuDevice device;
  if (const std::string* product = node.labels.Find(kGpuProductLabel)) {
    device.model = GpuModels().Intern(*product);
  } else {
    device.model = GpuModels().Intern("unknown");
  }
  if (const std::string* memory = node.labels.Find(kGpuMemoryLabel)) {
    auto m = ParseQuantity(*memory);
    if (!m.ok() || *m < 0) {
      return Status::Invalid(where + ": metadata.labels[" + kGpuMemoryLabel + "]: \"" + *memory +
                             "\" is not a number of MiB");
    }
    device.memory_mib = *m / kMilliPerUnit;
  }
  for (Milli i = 0; i < gpus / kMilliPerUnit; ++i) node.gpus.push_back(device);
  return node;
}

}  // namespace gantry::k8s
