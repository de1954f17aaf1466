#include "k8s/volumes.h"

#include <nlohmann/json.hpp>

#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/pod_rules.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// The object's metadata, with names held to the API server's limit.
Result<ObjectMeta> NamedMeta(const json& object, const char* kind) {
  auto meta = ParseMeta(object);
  if (!meta.ok()) return Status::Invalid(std::string(kind) + ": " + meta.status().message());
  if (meta->name.size() > kMaxNameLength || meta->namespace_.size() > kMaxNameLength) {
    return Status::Invalid(std::string(kind) + " " + meta->Key().substr(0, 80) +
                           "...: metadata.name or namespace is longer than " +
                           std::to_string(kMaxNameLength) + " bytes");
  }
  return meta;
}

// object[key] as a string: absent or null is "", anything else an error.
Status OptionalString(const json& object, const char* key, const std::string& at,
                      std::string* out) {
  const json& v = Field(object, key);
  out->clear();
  if (v.is_null()) return Status::Ok();
  if (!v.is_string()) {
    return Status::Invalid(at + "." + key + ": expected a string, got " +
                           JsonText(v).substr(0, 64));
  }
  *out = v.get<std::string>();
  return Status::Ok();
}

}  // namespace

Result<ClaimInfo> ParseClaim(const json& object) {
  auto meta = NamedMeta(object, "persistentvolumeclaim");
  if (!meta.ok()) return meta.status();
  ClaimInfo claim;
  claim.meta = std::move(meta).value();
  const std::string where = "persistentvolumeclaim " + claim.meta.Key();
  const json& metadata = Field(object, "metadata");
  const json& annotations = Field(metadata, "annotations");
  const json& spec = Field(object, "spec");
  claim.bind_completed = annotations.is_object() && annotations.contains(kBindCompletedAnnotation);
  GANTRY_RETURN_IF_ERROR(OptionalString(spec, "volumeName", where + ": spec", &claim.volume_name));
  // The annotation, when present (even empty), names the class; else the field does.
  if (annotations.is_object() && annotations.contains(kBetaStorageClassAnnotation)) {
    GANTRY_RETURN_IF_ERROR(OptionalString(annotations, kBetaStorageClassAnnotation,
                                          where + ": metadata.annotations", &claim.storage_class));
  } else {
    GANTRY_RETURN_IF_ERROR(
        OptionalString(spec, "storageClassName", where + ": spec", &claim.storage_class));
  }
  const json& modes = Field(spec, "accessModes");
  if (!modes.is_null() && !modes.is_array()) {
    return Status::Invalid(where + ": spec.accessModes: expected a list, got " +
                           JsonText(modes).substr(0, 64));
  }
  for (size_t i = 0; modes.is_array() && i < modes.size(); ++i) {
    if (!modes[i].is_string()) {
      return Status::Invalid(where + ": spec.accessModes[" + std::to_string(i) +
                             "]: expected a string, got " + JsonText(modes[i]).substr(0, 64));
    }
    if (modes[i].get<std::string>() == "ReadWriteOncePod") claim.read_write_once_pod = true;
  }
  claim.lost = String(Field(object, "status"), "phase") == "Lost";
  const json& owners = Field(metadata, "ownerReferences");
  for (size_t i = 0; owners.is_array() && i < owners.size(); ++i) {
    const json& controller = Field(owners[i], "controller");
    if (controller.is_boolean() && controller.get<bool>()) {
      claim.controller_uid = String(owners[i], "uid");
      break;  // the API server allows one controller
    }
  }
  return claim;
}

Result<PersistentVolumeInfo> ParsePersistentVolume(const json& object) {
  auto meta = NamedMeta(object, "persistentvolume");
  if (!meta.ok()) return meta.status();
  PersistentVolumeInfo pv;
  pv.meta = std::move(meta).value();
  const std::string where = "persistentvolume " + pv.meta.name;
  const Labels labels = LabelsOf(Field(Field(object, "metadata"), "labels"));
  for (std::string_view key : kVolumeTopologyKeys) {
    const std::string* value = labels.Find(key);
    VolumeTopology zone;
    zone.key = std::string(key);
    if (value != nullptr && ParseVolumeZones(*value, &zone.values)) {
      pv.zones.push_back(std::move(zone));
    }
  }
  const json& spec = Field(object, "spec");
  const json& node_affinity = Field(spec, "nodeAffinity");
  if (!node_affinity.is_null() && !node_affinity.is_object()) {
    return Status::Invalid(where + ": spec.nodeAffinity: expected an object, got " +
                           JsonText(node_affinity).substr(0, 64));
  }
  const json& required = Field(node_affinity, "required");
  if (!required.is_null()) {
    NodeAffinity affinity;
    GANTRY_RETURN_IF_ERROR(
        ParseNodeSelector(required, where + ": spec.nodeAffinity.required", &affinity));
    // A selector without terms matches no node (MatchNodeSelectorTerms), which a
    // NodeAffinity says with one empty term.
    if (affinity.terms.empty()) affinity.terms.emplace_back();
    pv.node_affinity = std::move(affinity);
  }
  // Sources that attach: CSI, and the in-tree kinds CSI migration translates.
  for (const char* kind : {"csi", "awsElasticBlockStore", "gcePersistentDisk", "azureDisk",
                           "azureFile", "cinder", "vsphereVolume", "portworxVolume"}) {
    if (Field(spec, kind).is_null()) continue;
    pv.attaching_kind = kind;
    pv.csi_driver = String(Field(spec, "csi"), "driver");
    break;
  }
  return pv;
}

Result<StorageClassInfo> ParseStorageClass(const json& object) {
  auto meta = NamedMeta(object, "storageclass");
  if (!meta.ok()) return meta.status();
  StorageClassInfo sc;
  sc.meta = std::move(meta).value();
  std::string mode;
  GANTRY_RETURN_IF_ERROR(
      OptionalString(object, "volumeBindingMode", "storageclass " + sc.meta.name, &mode));
  if (mode == "Immediate") {
    sc.binding_mode = VolumeBindingMode::kImmediate;
  } else if (mode == "WaitForFirstConsumer") {
    sc.binding_mode = VolumeBindingMode::kWaitForFirstConsumer;
  } else if (!mode.empty()) {
    return Status::Invalid("storageclass " + sc.meta.name + ": volumeBindingMode: \"" +
                           KeyText(mode) + "\" is not supported (Immediate, WaitForFirstConsumer)");
  }
  return sc;
}

}  // namespace gantry::k8s
