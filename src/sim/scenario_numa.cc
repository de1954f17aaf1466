#include "sim/scenario_numa.h"

namespace gantry {

Status ParseNodeNuma(const YamlReader& r, const YAML::Node& numa, const std::string& field,
                     Node* node) {
  GANTRY_RETURN_IF_ERROR(r.Map(numa, field, {"policy", "scope", "zones"}));
  NodeNuma out;
  out.policy = NumaPolicy::kSingleNumaNode;
  if (numa["policy"]) {
    std::string policy;
    GANTRY_RETURN_IF_ERROR(r.String(numa["policy"], field + ".policy", &policy));
    auto parsed = ParseNumaPolicy(policy);
    if (!parsed.ok()) return r.Error(numa["policy"], field + ".policy", parsed.status().message());
    out.policy = *parsed;
  }
  if (numa["scope"]) {
    std::string scope;
    GANTRY_RETURN_IF_ERROR(r.String(numa["scope"], field + ".scope", &scope));
    auto parsed = ParseNumaScope(scope);
    if (!parsed.ok()) return r.Error(numa["scope"], field + ".scope", parsed.status().message());
    out.scope = *parsed;
  }
  const YAML::Node& zones = numa["zones"];
  if (!zones) return r.Error(numa, field + ".zones", "required");
  GANTRY_RETURN_IF_ERROR(r.List(zones, field + ".zones"));
  if (zones.size() == 0 || zones.size() > kMaxNumaZones) {
    return r.Error(zones, field + ".zones",
                   "a node has 1 to " + std::to_string(kMaxNumaZones) + " NUMA nodes");
  }
  for (size_t z = 0; z < zones.size(); ++z) {
    NumaZone zone;
    zone.id = static_cast<int32_t>(z);
    const std::string zf = field + ".zones[" + std::to_string(z) + "]";
    GANTRY_RETURN_IF_ERROR(r.Resources(zones[z], zf, NameSource::kTrusted, &zone.allocatable));
    if (zone.allocatable.Get(kGpu) % kMilliPerUnit != 0) {
      return r.Error(zones[z], zf + ".nvidia.com/gpu", "whole GPUs only");
    }
    out.zones.push_back(std::move(zone));
  }
  // Checked here, so that the error points at the zones rather than at the node's name.
  NodeNuma checked = out;
  std::vector<int32_t> device_zones;
  Status st = PrepareNodeNuma(node->name, node->gpus.size(), &checked, &device_zones);
  if (!st.ok()) return r.Error(zones, field + ".zones", st.message());
  node->numa = std::move(out);
  return Status::Ok();
}

Status ParseTaskNuma(const YamlReader& r, const YAML::Node& t, const std::string& field,
                     TaskSpec* spec) {
  if (t["guaranteed"]) {
    GANTRY_RETURN_IF_ERROR(r.Bool(t["guaranteed"], field + ".guaranteed", &spec->numa.guaranteed));
  }
  return Status::Ok();
}

}  // namespace gantry
