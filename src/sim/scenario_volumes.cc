#include "sim/scenario_volumes.h"

#include <algorithm>

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

}  // namespace

Status ReadScenarioVolumes(const YamlReader& r, const PodSpecReader& pod, const YAML::Node& node,
                           const std::string& field, TaskSpec* spec) {
  GANTRY_RETURN_IF_ERROR(r.List(node, field));
  std::vector<std::string> claims;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& v = node[i];
    const std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(v, f, {"claim", "accessModes", "nodeAffinity", "labels"}));
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
  return Status::Ok();
}

}  // namespace gantry
