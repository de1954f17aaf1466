#include "k8s/volumes.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "k8s/csi_translation.h"
#include "k8s/datasets.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "k8s/pod_rules.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// object[key] as a string: absent or null is "", anything else an error.
Status OptionalString(const json& object, const char* key, const std::string& at,
                      std::string* out) {
  const json& v = Field(object, key);
  out->clear();
  if (v.is_null()) return Status::Ok();
  if (!v.is_string()) {
    return Status::Invalid(at + "." + key + ": expected a string, got " + JsonPrefix(v, 64));
  }
  *out = v.get<std::string>();
  return Status::Ok();
}

// object[key] as a list of strings (absent or null: none).
Status StringList(const json& object, const char* key, const std::string& at,
                  std::vector<std::string>* out) {
  const json& list = Field(object, key);
  out->clear();
  if (list.is_null()) return Status::Ok();
  if (!list.is_array()) {
    return Status::Invalid(at + "." + key + ": expected a list, got " + JsonPrefix(list, 64));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return Status::Invalid(at + "." + key + "[" + std::to_string(i) +
                             "]: expected a string, got " + JsonPrefix(list[i], 64));
    }
    out->push_back(list[i].get<std::string>());
  }
  return Status::Ok();
}

// object[key].storage as a quantity (absent: 0).
Status StorageAmount(const json& object, const char* key, const std::string& at, Milli* out) {
  *out = 0;
  const json& amounts = Field(object, key);
  if (amounts.is_null()) return Status::Ok();
  if (!amounts.is_object()) {
    return Status::Invalid(at + "." + key + ": expected a map of quantities, got " +
                           JsonPrefix(amounts, 64));
  }
  const json& storage = Field(amounts, "storage");
  if (storage.is_null()) return Status::Ok();
  if (!storage.is_string()) {
    return Status::Invalid(at + "." + key + ".storage: expected a quantity, got " +
                           JsonPrefix(storage, 64));
  }
  auto amount = ParseQuantity(storage.get<std::string>());
  // Beyond 8 PiB (in milli-bytes) is "at least that much", as sums saturate: Fluid's
  // dataset volumes and claims say 100Pi.
  if (!amount.ok() && amount.status().code() == Status::Code::kOutOfRange &&
      storage.get<std::string>().front() != '-') {
    *out = kMilliMax;
    return Status::Ok();
  }
  if (!amount.ok() || *amount < 0) {
    return Status::Invalid(
        at + "." + key + ".storage: " +
        (amount.ok() ? "negative quantity \"" + KeyText(storage.get<std::string>()) + "\""
                     : amount.status().message()));
  }
  *out = *amount;
  return Status::Ok();
}

// spec.volumeMode, Filesystem when unset (as the API server and the PV controller read it).
Status VolumeMode(const json& spec, const std::string& at, std::string* out) {
  GANTRY_RETURN_IF_ERROR(OptionalString(spec, "volumeMode", at, out));
  if (out->empty()) *out = "Filesystem";
  return Status::Ok();
}

// The class as the annotation names it (present, even empty, it wins), else the field.
Status StorageClassOf(const json& annotations, const json& spec, const std::string& where,
                      std::string* out) {
  if (annotations.is_object() && annotations.contains(kBetaStorageClassAnnotation)) {
    return OptionalString(annotations, kBetaStorageClassAnnotation,
                          where + ": metadata.annotations", out);
  }
  return OptionalString(spec, "storageClassName", where + ": spec", out);
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
  GANTRY_RETURN_IF_ERROR(StorageClassOf(annotations, spec, where, &claim.storage_class));
  GANTRY_RETURN_IF_ERROR(StringList(spec, "accessModes", where + ": spec", &claim.access_modes));
  claim.read_write_once_pod = std::find(claim.access_modes.begin(), claim.access_modes.end(),
                                        "ReadWriteOncePod") != claim.access_modes.end();
  GANTRY_RETURN_IF_ERROR(StorageAmount(Field(spec, "resources"), "requests",
                                       where + ": spec.resources", &claim.storage_request));
  const json& requests = Field(Field(spec, "resources"), "requests");
  claim.has_storage_request = requests.is_object() && requests.contains("storage");
  GANTRY_RETURN_IF_ERROR(VolumeMode(spec, where + ": spec", &claim.volume_mode));
  GANTRY_RETURN_IF_ERROR(ParseLabelSelector(spec, "selector", where + ": spec", &claim.selector));
  if (annotations.is_object() && annotations.contains(kSelectedNodeAnnotation)) {
    std::string node;
    GANTRY_RETURN_IF_ERROR(OptionalString(annotations, kSelectedNodeAnnotation,
                                          where + ": metadata.annotations", &node));
    claim.selected_node = std::move(node);
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
  pv.labels = labels;
  GANTRY_RETURN_IF_ERROR(StorageClassOf(Field(Field(object, "metadata"), "annotations"), spec,
                                        where, &pv.storage_class));
  GANTRY_RETURN_IF_ERROR(StorageAmount(spec, "capacity", where + ": spec", &pv.capacity));
  GANTRY_RETURN_IF_ERROR(StringList(spec, "accessModes", where + ": spec", &pv.access_modes));
  GANTRY_RETURN_IF_ERROR(VolumeMode(spec, where + ": spec", &pv.volume_mode));
  const json& claim_ref = Field(spec, "claimRef");
  if (!claim_ref.is_null()) {
    if (!claim_ref.is_object()) {
      return Status::Invalid(where + ": spec.claimRef: expected an object, got " +
                             JsonPrefix(claim_ref, 64));
    }
    ClaimRef ref;
    const std::string at = where + ": spec.claimRef";
    GANTRY_RETURN_IF_ERROR(OptionalString(claim_ref, "namespace", at, &ref.namespace_));
    GANTRY_RETURN_IF_ERROR(OptionalString(claim_ref, "name", at, &ref.name));
    GANTRY_RETURN_IF_ERROR(OptionalString(claim_ref, "uid", at, &ref.uid));
    pv.claim_ref = std::move(ref);
  }
  pv.available = String(Field(object, "status"), "phase") == "Available";
  const json& node_affinity = Field(spec, "nodeAffinity");
  if (!node_affinity.is_null() && !node_affinity.is_object()) {
    return Status::Invalid(where + ": spec.nodeAffinity: expected an object, got " +
                           JsonPrefix(node_affinity, 64));
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
  pv.csi_source = !Field(spec, "csi").is_null();
  pv.attachable = AttachableOfVolumeSpec(spec, pv.labels);
  pv.fluid_dataset = FluidDatasetOf(spec);
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
  const std::string where = "storageclass " + sc.meta.name;
  GANTRY_RETURN_IF_ERROR(OptionalString(object, "provisioner", where, &sc.provisioner));
  // allowedTopologies: [{matchLabelExpressions: [{key, values}]}], each an In requirement.
  const json& topologies = Field(object, "allowedTopologies");
  if (!topologies.is_null() && !topologies.is_array()) {
    return Status::Invalid(where + ": allowedTopologies: expected a list, got " +
                           JsonPrefix(topologies, 64));
  }
  for (size_t i = 0; topologies.is_array() && i < topologies.size(); ++i) {
    const std::string at = where + ": allowedTopologies[" + std::to_string(i) + "]";
    if (!topologies[i].is_object()) {
      return Status::Invalid(at + ": expected an object, got " + JsonPrefix(topologies[i], 64));
    }
    const json& expressions = Field(topologies[i], "matchLabelExpressions");
    if (!expressions.is_null() && !expressions.is_array()) {
      return Status::Invalid(at + ".matchLabelExpressions: expected a list, got " +
                             JsonPrefix(expressions, 64));
    }
    std::vector<SelectorRequirement> term;
    for (size_t j = 0; expressions.is_array() && j < expressions.size(); ++j) {
      const std::string here = at + ".matchLabelExpressions[" + std::to_string(j) + "]";
      if (!expressions[j].is_object()) {
        return Status::Invalid(here + ": expected an object, got " +
                               JsonPrefix(expressions[j], 64));
      }
      SelectorRequirement r;
      r.op = SelectorRequirement::Op::kIn;
      GANTRY_RETURN_IF_ERROR(OptionalString(expressions[j], "key", here, &r.key));
      GANTRY_RETURN_IF_ERROR(StringList(expressions[j], "values", here, &r.values));
      term.push_back(std::move(r));
    }
    // A term without expressions selects no node (MatchTopologySelectorTerms).
    sc.allowed_topologies.terms.push_back(std::move(term));
  }
  return sc;
}

namespace {

// object[key] as a boolean: absent or null is false.
Status OptionalBool(const json& object, const char* key, const std::string& at, bool* out) {
  const json& v = Field(object, key);
  *out = false;
  if (v.is_null()) return Status::Ok();
  if (!v.is_boolean()) {
    return Status::Invalid(at + "." + key + ": expected true or false, got " + JsonPrefix(v, 64));
  }
  *out = v.get<bool>();
  return Status::Ok();
}

// object[key] as a quantity, when present.
Status OptionalQuantity(const json& object, const char* key, const std::string& at,
                        std::optional<Milli>* out) {
  out->reset();
  const json& v = Field(object, key);
  if (v.is_null()) return Status::Ok();
  if (!v.is_string()) {
    return Status::Invalid(at + "." + key + ": expected a quantity, got " + JsonPrefix(v, 64));
  }
  auto amount = ParseQuantity(v.get<std::string>());
  if (!amount.ok()) return Status::Invalid(at + "." + key + ": " + amount.status().message());
  *out = *amount;
  return Status::Ok();
}

}  // namespace

Result<CsiNodeInfo> ParseCsiNode(const json& object) {
  auto meta = NamedMeta(object, "csinode");
  if (!meta.ok()) return meta.status();
  CsiNodeInfo info;
  info.meta = std::move(meta).value();
  const std::string where = "csinode " + info.meta.name + ": spec.drivers";
  const json& drivers = Field(Field(object, "spec"), "drivers");
  if (!drivers.is_null() && !drivers.is_array()) {
    return Status::Invalid(where + ": expected a list, got " + JsonPrefix(drivers, 64));
  }
  for (size_t i = 0; drivers.is_array() && i < drivers.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!drivers[i].is_object()) {
      return Status::Invalid(at + ": expected an object, got " + JsonPrefix(drivers[i], 64));
    }
    NodeCsiDriver driver;
    GANTRY_RETURN_IF_ERROR(OptionalString(drivers[i], "name", at, &driver.name));
    if (driver.name.empty()) return Status::Invalid(at + ".name: must not be empty");
    const json& count = Field(Field(drivers[i], "allocatable"), "count");
    if (!count.is_null()) {
      if (!count.is_number_integer() || count.get<int64_t>() < 0 ||
          count.get<int64_t>() > INT32_MAX) {
        return Status::Invalid(at + ".allocatable.count: expected a count of volumes, got " +
                               JsonPrefix(count, 64));
      }
      driver.limit = static_cast<int32_t>(count.get<int64_t>());
    }
    info.drivers.push_back(std::move(driver));
  }
  std::sort(info.drivers.begin(), info.drivers.end(),
            [](const NodeCsiDriver& a, const NodeCsiDriver& b) { return a.name < b.name; });
  for (size_t i = 1; i < info.drivers.size(); ++i) {
    if (info.drivers[i].name == info.drivers[i - 1].name) {
      return Status::Invalid(where + ": driver \"" + KeyText(info.drivers[i].name) +
                             "\" is listed twice");
    }
  }
  return info;
}

Result<VolumeAttachmentInfo> ParseVolumeAttachment(const json& object) {
  auto meta = NamedMeta(object, "volumeattachment");
  if (!meta.ok()) return meta.status();
  VolumeAttachmentInfo info;
  info.meta = std::move(meta).value();
  const std::string where = "volumeattachment " + info.meta.name + ": spec";
  const json& spec = Field(object, "spec");
  GANTRY_RETURN_IF_ERROR(OptionalString(spec, "attacher", where, &info.attacher));
  GANTRY_RETURN_IF_ERROR(OptionalString(spec, "nodeName", where, &info.node_name));
  GANTRY_RETURN_IF_ERROR(OptionalString(Field(spec, "source"), "persistentVolumeName",
                                        where + ".source", &info.persistent_volume));
  return info;
}

Result<CsiDriverInfo> ParseCsiDriver(const json& object) {
  auto meta = NamedMeta(object, "csidriver");
  if (!meta.ok()) return meta.status();
  CsiDriverInfo info;
  info.meta = std::move(meta).value();
  const std::string where = "csidriver " + info.meta.name + ": spec";
  const json& spec = Field(object, "spec");
  GANTRY_RETURN_IF_ERROR(OptionalBool(spec, "storageCapacity", where, &info.storage_capacity));
  GANTRY_RETURN_IF_ERROR(
      OptionalBool(spec, "preventPodSchedulingIfMissing", where, &info.required_on_node));
  return info;
}

Result<StorageCapacityInfo> ParseStorageCapacity(const json& object) {
  auto meta = NamedMeta(object, "csistoragecapacity");
  if (!meta.ok()) return meta.status();
  StorageCapacityInfo info;
  info.meta = std::move(meta).value();
  const std::string where = "csistoragecapacity " + info.meta.Key();
  GANTRY_RETURN_IF_ERROR(OptionalString(object, "storageClassName", where, &info.storage_class));
  GANTRY_RETURN_IF_ERROR(ParseLabelSelector(object, "nodeTopology", where, &info.node_topology));
  std::optional<Milli> capacity, maximum;
  GANTRY_RETURN_IF_ERROR(OptionalQuantity(object, "capacity", where, &capacity));
  GANTRY_RETURN_IF_ERROR(OptionalQuantity(object, "maximumVolumeSize", where, &maximum));
  info.volume_limit = maximum ? maximum : capacity;
  return info;
}

}  // namespace gantry::k8s
