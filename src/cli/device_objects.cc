#include "cli/device_objects.h"

#include <nlohmann/json.hpp>

#include "k8s/dra_objects.h"
#include "k8s/yaml_json.h"
#include "model/dra_inventory.h"
#include "model/quote.h"
#ifdef GANTRY_HAVE_DRA_CEL
#include "dra/selector_cache.h"
#endif

namespace gantry {

Status ApiDeviceObjectReader::Add(const YAML::Node& node, ScenarioDevices* devices) const {
  const nlohmann::json object = k8s::YamlToJson(node);
  if (!object.is_object() || !object.contains("kind") || !object["kind"].is_string()) {
    return Status::Invalid(
        "kind: required (DeviceClass, ResourceSlice, ResourceClaim or "
        "DeviceTaintRule)");
  }
  const std::string kind = object["kind"].get<std::string>();
  if (kind == "DeviceClass") {
    auto decoded = k8s::DecodeDeviceClass(object);
    if (!decoded.ok()) return decoded.status();
    devices->classes.push_back(std::move(*decoded));
  } else if (kind == "ResourceSlice") {
    auto decoded = k8s::DecodeResourceSlice(object);
    if (!decoded.ok()) return decoded.status();
    devices->slices.push_back(std::move(*decoded));
  } else if (kind == "ResourceClaim") {
    auto decoded = k8s::DecodeResourceClaim(object);
    if (!decoded.ok()) return decoded.status();
    if (decoded->name_space.empty()) decoded->name_space = "default";
    const std::string key = dra::ClaimKey(decoded->name_space, decoded->name);
    if (devices->claims.count(key) > 0) {
      return Status::Invalid("ResourceClaim " + QuoteForMessage(key) + " is given twice");
    }
    devices->claims.emplace(key, std::move(*decoded));
  } else if (kind == "DeviceTaintRule") {
    auto decoded = k8s::DecodeDeviceTaintRule(object);
    if (!decoded.ok()) return decoded.status();
    devices->taint_rules.push_back(std::move(*decoded));
  } else {
    return Status::Invalid("kind: " + QuoteForMessage(kind) +
                           " is not one of DeviceClass, ResourceSlice, ResourceClaim, "
                           "DeviceTaintRule");
  }
  return Status::Ok();
}

#ifdef GANTRY_HAVE_DRA_CEL
struct RunVerdicts::Parts {
  dra::SelectorCache cache;
  dra::CelVerdicts verdicts{cache};
};
RunVerdicts::RunVerdicts() : parts_(std::make_unique<Parts>()) {}
const dra::SelectorVerdicts* RunVerdicts::get() const {
  return &parts_->verdicts;
}
#else
struct RunVerdicts::Parts {};
RunVerdicts::RunVerdicts() = default;
const dra::SelectorVerdicts* RunVerdicts::get() const {
  return nullptr;
}
#endif
RunVerdicts::~RunVerdicts() = default;

}  // namespace gantry
