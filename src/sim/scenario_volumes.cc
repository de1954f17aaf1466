#include "sim/scenario_volumes.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "model/delayed_claim.h"
#include "model/limits.h"
#include "model/volume_topology.h"

namespace gantry {
namespace {

constexpr const char* kAccessModes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod"};

// A claim name: a DNS-1123 subdomain, as kube-apiserver validates object names.
bool IsValidClaimName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) continue;
    if ((c == '-' || c == '.') && i > 0 && i + 1 < name.size()) continue;
    return false;
  }
  return true;
}

template <typename T>
void AddOnce(std::vector<T>* list, T value) {
  if (std::find(list->begin(), list->end(), value) == list->end()) {
    list->push_back(std::move(value));
  }
}

// {request, volumes: [{name, capacity, nodeAffinity}], provisionable, allowedTopologies,
// selectedNode}.
Status ReadDelayedClaim(const YamlReader& r, const PodSpecReader& pod, const YAML::Node& node,
                        const std::string& field, const std::string& claim, DelayedClaim* out,
                        Milli* request) {
  GANTRY_RETURN_IF_ERROR(r.Map(node, field,
                               {"request", "volumes", "provisionable", "allowedTopologies",
                                "selectedNode", "storageCapacity"}));
  out->claim = claim;
  *request = 0;
  if (node["request"]) {
    GANTRY_RETURN_IF_ERROR(r.Quantity(node["request"], field + ".request", request));
  }
  if (node["selectedNode"]) {
    std::string selected;
    GANTRY_RETURN_IF_ERROR(r.Name(node["selectedNode"], field + ".selectedNode", &selected));
    out->selected_node = selected;
  }
  if (node["volumes"]) {
    const YAML::Node& volumes = node["volumes"];
    GANTRY_RETURN_IF_ERROR(r.List(volumes, field + ".volumes"));
    for (size_t k = 0; k < volumes.size(); ++k) {
      const YAML::Node& pv = volumes[k];
      const std::string fk = field + ".volumes[" + std::to_string(k) + "]";
      GANTRY_RETURN_IF_ERROR(r.Map(pv, fk, {"name", "capacity", "nodeAffinity"}));
      CandidateVolume volume;
      if (!pv["name"]) return r.Error(pv, fk + ".name", "required");
      GANTRY_RETURN_IF_ERROR(r.Name(pv["name"], fk + ".name", &volume.name));
      for (const CandidateVolume& before : out->volumes) {
        if (before.name == volume.name) {
          return r.Error(pv["name"], fk + ".name", "volume \"" + volume.name + "\" listed twice");
        }
      }
      if (!pv["capacity"]) return r.Error(pv, fk + ".capacity", "required");
      GANTRY_RETURN_IF_ERROR(r.Quantity(pv["capacity"], fk + ".capacity", &volume.capacity));
      if (volume.capacity < *request) {
        return r.Error(pv["capacity"], fk + ".capacity",
                       "smaller than the claim's request: the volume cannot be bound to it");
      }
      if (pv["nodeAffinity"]) {
        NodeAffinity affinity;
        GANTRY_RETURN_IF_ERROR(
            pod.NodeSelectorTerms(pv["nodeAffinity"], fk + ".nodeAffinity", &affinity.terms));
        volume.node_affinity = std::move(affinity);
      }
      out->volumes.push_back(std::move(volume));
    }
    // Smallest first, then by name, as the daemon lists them.
    std::stable_sort(out->volumes.begin(), out->volumes.end(),
                     [](const CandidateVolume& a, const CandidateVolume& b) {
                       return a.capacity != b.capacity ? a.capacity < b.capacity : a.name < b.name;
                     });
  }
  if (node["provisionable"]) {
    GANTRY_RETURN_IF_ERROR(
        r.Bool(node["provisionable"], field + ".provisionable", &out->provisionable));
  }
  if (node["allowedTopologies"]) {
    if (!out->provisionable) {
      return r.Error(node["allowedTopologies"], field + ".allowedTopologies",
                     "applies only to a claim whose class provisions (provisionable: true)");
    }
    GANTRY_RETURN_IF_ERROR(pod.NodeSelectorTerms(
        node["allowedTopologies"], field + ".allowedTopologies", &out->allowed_topologies.terms));
  }
  if (const YAML::Node& capacities = node["storageCapacity"]) {
    // The class's CSIStorageCapacity objects: their presence says its driver tracks
    // capacity; those with room for the request say where it can provision.
    const std::string fc = field + ".storageCapacity";
    if (!out->provisionable) {
      return r.Error(capacities, fc,
                     "applies only to a claim whose class provisions (provisionable: true)");
    }
    GANTRY_RETURN_IF_ERROR(r.List(capacities, fc));
    out->capacity_tracked = true;
    for (size_t k = 0; k < capacities.size(); ++k) {
      const YAML::Node& c = capacities[k];
      const std::string fk = fc + "[" + std::to_string(k) + "]";
      GANTRY_RETURN_IF_ERROR(r.Map(c, fk, {"nodeTopology", "capacity", "maximumVolumeSize"}));
      if (!c["nodeTopology"]) return r.Error(c, fk + ".nodeTopology", "required");
      LabelSelector topology;
      GANTRY_RETURN_IF_ERROR(
          pod.ReadLabelSelector(c["nodeTopology"], fk + ".nodeTopology", &topology));
      Milli capacity = 0, maximum = 0;
      if (c["capacity"]) {
        GANTRY_RETURN_IF_ERROR(r.Quantity(c["capacity"], fk + ".capacity", &capacity));
      }
      if (c["maximumVolumeSize"]) {
        GANTRY_RETURN_IF_ERROR(
            r.Quantity(c["maximumVolumeSize"], fk + ".maximumVolumeSize", &maximum));
      }
      if (!c["capacity"] && !c["maximumVolumeSize"]) {
        return r.Error(c, fk, "give capacity or maximumVolumeSize");
      }
      const Milli limit = c["maximumVolumeSize"] ? maximum : capacity;
      if (limit >= *request) AddOnce(&out->capacity_topologies, std::move(topology));
    }
  }
  return Status::Ok();
}

// csi: {driver, handle, requiredOnNode}: the volume attaches with a CSI driver and counts
// against the node's limit for it. The handle defaults to the claim's namespace and name.
Status ReadAttachable(const YamlReader& r, const YAML::Node& node, const std::string& field,
                      const std::string& default_handle, AttachableVolume* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(node, field, {"driver", "handle", "requiredOnNode"}));
  if (!node["driver"]) return r.Error(node, field + ".driver", "required");
  GANTRY_RETURN_IF_ERROR(r.String(node["driver"], field + ".driver", &out->driver));
  if (out->driver.empty()) return r.Error(node["driver"], field + ".driver", "must not be empty");
  out->handle = default_handle;
  if (node["handle"]) {
    GANTRY_RETURN_IF_ERROR(r.String(node["handle"], field + ".handle", &out->handle));
    if (out->handle.empty()) {
      return r.Error(node["handle"], field + ".handle", "must not be empty");
    }
  }
  if (node["requiredOnNode"]) {
    GANTRY_RETURN_IF_ERROR(
        r.Bool(node["requiredOnNode"], field + ".requiredOnNode", &out->driver_required));
  }
  return Status::Ok();
}

}  // namespace

Status ReadScenarioVolumes(const YamlReader& r, const PodSpecReader& pod, const YAML::Node& node,
                           const std::string& field, TaskSpec* spec) {
  GANTRY_RETURN_IF_ERROR(r.List(node, field));
  std::vector<std::string> claims;
  std::vector<Milli> delayed_requests;  // per spec->delayed_claims entry
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& v = node[i];
    const std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(
        v, f, {"claim", "accessModes", "nodeAffinity", "labels", "waitForFirstConsumer", "csi"}));
    if (!v["claim"]) return r.Error(v, f + ".claim", "required");
    std::string claim;
    GANTRY_RETURN_IF_ERROR(r.String(v["claim"], f + ".claim", &claim));
    if (!IsValidClaimName(claim)) {
      return r.Error(v["claim"], f + ".claim",
                     "\"" + claim +
                         "\" is not a valid claim name (lowercase letters, digits, '-' and '.', "
                         "starting and ending with a letter or digit)");
    }
    // Two volumes of a pod may name one claim (kube-apiserver allows it); its rules count
    // once.
    const bool again = std::find(claims.begin(), claims.end(), claim) != claims.end();
    claims.push_back(claim);
    if (v["accessModes"]) {
      const YAML::Node& modes = v["accessModes"];
      GANTRY_RETURN_IF_ERROR(r.List(modes, f + ".accessModes"));
      for (size_t k = 0; k < modes.size(); ++k) {
        const std::string fk = f + ".accessModes[" + std::to_string(k) + "]";
        std::string mode;
        GANTRY_RETURN_IF_ERROR(r.String(modes[k], fk, &mode));
        if (std::find(std::begin(kAccessModes), std::end(kAccessModes), mode) ==
            std::end(kAccessModes)) {
          return r.Error(modes[k], fk,
                         "unknown access mode \"" + mode +
                             "\" (known: ReadWriteOnce, ReadOnlyMany, ReadWriteMany, "
                             "ReadWriteOncePod)");
        }
        if (mode == "ReadWriteOncePod" && !again) spec->rwop_claims.push_back(claim);
      }
    }
    if (v["csi"]) {
      AttachableVolume attachable;
      GANTRY_RETURN_IF_ERROR(
          ReadAttachable(r, v["csi"], f + ".csi", spec->namespace_ + "/" + claim, &attachable));
      spec->attachable_volumes.push_back(std::move(attachable));
    }
    if (v["waitForFirstConsumer"]) {
      if (v["nodeAffinity"] || v["labels"]) {
        return r.Error(v["waitForFirstConsumer"], f + ".waitForFirstConsumer",
                       "an unbound claim has no volume yet: give nodeAffinity and labels of "
                       "its candidate volumes instead");
      }
      if (!again) {
        DelayedClaim delayed;
        Milli request = 0;
        GANTRY_RETURN_IF_ERROR(ReadDelayedClaim(r, pod, v["waitForFirstConsumer"],
                                                f + ".waitForFirstConsumer", claim, &delayed,
                                                &request));
        delayed_requests.push_back(request);
        spec->delayed_claims.push_back(std::move(delayed));
      }
    }
    if (v["nodeAffinity"]) {
      NodeAffinity affinity;
      GANTRY_RETURN_IF_ERROR(
          pod.NodeSelectorTerms(v["nodeAffinity"], f + ".nodeAffinity", &affinity.terms));
      if (affinity.terms.empty()) {
        return r.Error(v["nodeAffinity"], f + ".nodeAffinity",
                       "needs at least one node selector term (a volume no node matches has "
                       "no nodeAffinity to give)");
      }
      AddOnce(&spec->volume_node_affinity, std::move(affinity));
    }
    if (v["labels"]) {
      Labels labels;
      GANTRY_RETURN_IF_ERROR(r.LabelMap(v["labels"], f + ".labels", &labels));
      for (std::string_view key : kVolumeTopologyKeys) {
        const std::string* value = labels.Find(key);
        if (value == nullptr) continue;
        VolumeTopology zone;
        zone.key = std::string(key);
        if (!ParseVolumeZones(*value, &zone.values)) {
          return r.Error(v["labels"][std::string(key)], f + ".labels." + std::string(key),
                         "\"" + *value +
                             "\" has an empty zone (several zones are written \"a__b\"); "
                             "kube-scheduler would ignore this label");
        }
        AddOnce(&spec->volume_zones, std::move(zone));
      }
    }
  }
  std::sort(spec->rwop_claims.begin(), spec->rwop_claims.end());
  std::vector<AttachableVolume>& attachable = spec->attachable_volumes;
  std::sort(attachable.begin(), attachable.end(),
            [](const AttachableVolume& a, const AttachableVolume& b) { return a.VolumeBefore(b); });
  for (size_t i = 1; i < attachable.size(); ++i) {
    if (attachable[i].SameVolume(attachable[i - 1])) {
      return r.Error(node, field,
                     "two claims attach the same volume (driver \"" + attachable[i].driver +
                         "\", handle \"" + attachable[i].handle + "\")");
    }
  }
  // The smallest request first, as findMatchingVolumes matches them.
  std::vector<size_t> order(spec->delayed_claims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return delayed_requests[a] < delayed_requests[b]; });
  std::vector<DelayedClaim> sorted;
  for (size_t i : order) sorted.push_back(std::move(spec->delayed_claims[i]));
  spec->delayed_claims = std::move(sorted);
  return Status::Ok();
}

Status ReadScenarioInlineDisks(const YamlReader& r, const YAML::Node& node,
                               const std::string& field, TaskSpec* spec) {
  GANTRY_RETURN_IF_ERROR(r.List(node, field));
  struct Kind {
    const char* name;       // the volume source, as in a pod's spec.volumes[]
    const char* id;         // its field naming the disk
    const char* prefix;     // of InlineDisk::key
    bool read_only_shares;  // two readers may share it (not EBS)
  };
  static constexpr Kind kKinds[] = {{"gcePersistentDisk", "pdName", "gce-pd/", true},
                                    {"awsElasticBlockStore", "volumeID", "aws-ebs/", false},
                                    {"iscsi", "iqn", "iscsi/", true},
                                    {"rbd", "image", "rbd/", true}};
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(
        r.Map(node[i], f, {"gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"}));
    if (node[i].size() != 1) {
      return r.Error(node[i], f, "give one of gcePersistentDisk, awsElasticBlockStore, iscsi, rbd");
    }
    for (const Kind& kind : kKinds) {
      const YAML::Node& source = node[i][kind.name];
      if (!source) continue;
      const std::string fk = f + "." + kind.name;
      const bool rbd = std::string_view(kind.name) == "rbd";
      GANTRY_RETURN_IF_ERROR(rbd ? r.Map(source, fk, {"image", "readOnly", "pool", "monitors"})
                                 : r.Map(source, fk, {kind.id, "readOnly"}));
      std::string id;
      if (!source[kind.id]) return r.Error(source, fk + "." + kind.id, "required");
      GANTRY_RETURN_IF_ERROR(r.String(source[kind.id], fk + "." + kind.id, &id));
      bool read_only = false;
      if (source["readOnly"]) {
        GANTRY_RETURN_IF_ERROR(r.Bool(source["readOnly"], fk + ".readOnly", &read_only));
      }
      read_only = read_only && kind.read_only_shares;
      if (!rbd) {
        spec->inline_disks.push_back({kind.prefix + id, read_only});
        continue;
      }
      std::string pool = "rbd";  // the API server's default
      if (source["pool"]) GANTRY_RETURN_IF_ERROR(r.String(source["pool"], fk + ".pool", &pool));
      const YAML::Node& monitors = source["monitors"];
      if (!monitors) return r.Error(source, fk + ".monitors", "required");
      GANTRY_RETURN_IF_ERROR(r.List(monitors, fk + ".monitors"));
      for (size_t m = 0; m < monitors.size(); ++m) {
        std::string monitor;
        GANTRY_RETURN_IF_ERROR(
            r.String(monitors[m], fk + ".monitors[" + std::to_string(m) + "]", &monitor));
        spec->inline_disks.push_back({kind.prefix + pool + "/" + id + "/" + monitor, read_only});
      }
    }
  }
  std::vector<InlineDisk>& disks = spec->inline_disks;
  std::sort(disks.begin(), disks.end(), [](const InlineDisk& a, const InlineDisk& b) {
    return a.key != b.key ? a.key < b.key : a.read_only < b.read_only;
  });
  disks.erase(std::unique(disks.begin(), disks.end()), disks.end());
  return Status::Ok();
}

}  // namespace gantry
