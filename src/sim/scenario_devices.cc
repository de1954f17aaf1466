#include "sim/scenario_devices.h"

#include <algorithm>

#include "model/quote.h"
#include "sim/pod_spec_reader.h"

namespace gantry {
namespace {

// Names are unique per kind (and claims per namespace), as in the API server.
Status CheckUnique(const YamlReader& r, const YAML::Node& at, const std::string& field,
                   const ScenarioDevices& d) {
  std::set<std::string> classes, slices, rules;
  for (const dra::DeviceClass& c : d.classes) {
    if (!classes.insert(c.name).second) {
      return r.Error(at, field, "two DeviceClasses are named " + QuoteForMessage(c.name));
    }
  }
  for (const dra::ResourceSlice& s : d.slices) {
    if (!slices.insert(s.name).second) {
      return r.Error(at, field, "two ResourceSlices are named " + QuoteForMessage(s.name));
    }
  }
  for (const dra::DeviceTaintRule& t : d.taint_rules) {
    if (!rules.insert(t.name).second) {
      return r.Error(at, field, "two DeviceTaintRules are named " + QuoteForMessage(t.name));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseScenarioDevices(const YamlReader& r, const YAML::Node& node,
                            const DeviceObjectReader* reader, ScenarioDevices* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(node, "dra", {"objects", "adminAccessNamespaces"}));
  if (const YAML::Node objects = node["objects"]) {
    GANTRY_RETURN_IF_ERROR(r.List(objects, "dra.objects"));
    if (reader == nullptr && objects.size() > 0) {
      return r.Error(objects, "dra.objects",
                     "DRA objects (resource.k8s.io) are read by `gantry schedule` only, not "
                     "here (the simulator's replay does not model DRA yet)");
    }
    for (size_t i = 0; i < objects.size(); ++i) {
      const std::string f = "dra.objects[" + std::to_string(i) + "]";
      const size_t claims = out->claims.size();
      Status added = reader->Add(objects[i], out);
      if (!added.ok()) return r.Error(objects[i], f, added.message());
      if (objects[i]["kind"] && objects[i]["kind"].IsScalar() &&
          objects[i]["kind"].Scalar() == "ResourceClaim" && out->claims.size() == claims) {
        return r.Error(objects[i], f, "a second ResourceClaim of this namespace and name");
      }
      GANTRY_RETURN_IF_ERROR(CheckUnique(r, objects[i], f, *out));
    }
  }
  if (const YAML::Node namespaces = node["adminAccessNamespaces"]) {
    GANTRY_RETURN_IF_ERROR(r.List(namespaces, "dra.adminAccessNamespaces"));
    const PodSpecReader pod(r);
    for (size_t i = 0; i < namespaces.size(); ++i) {
      std::string name;
      GANTRY_RETURN_IF_ERROR(pod.Namespace(
          namespaces[i], "dra.adminAccessNamespaces[" + std::to_string(i) + "]", &name));
      out->admin_namespaces.insert(std::move(name));
    }
  }
  out->inventory = dra::Inventory(out->slices, out->classes, out->taint_rules);
  return Status::Ok();
}

}  // namespace gantry
