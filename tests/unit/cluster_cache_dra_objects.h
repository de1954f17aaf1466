// DRA objects as the watch hands them to the daemon's cluster cache, for its unit tests
// (cluster_cache_dra_test.cc, cluster_cache_dra_binding_test.cc): a class of every device,
// claims of one device in namespace ml, pods of a claim; and a session over the cache.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry::cache_dra {

using json = nlohmann::json;

// A class without selectors: every device of the slices matches, CEL or not.
inline json Class() {
  return {{"metadata", {{"name", "gpu"}, {"uid", "u-class"}}}, {"spec", json::object()}};
}

// A claim in ml of one device of that class.
inline json Claim(const std::string& name = "c1") {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "u-" + name}}},
          {"spec",
           {{"devices",
             {{"requests", {{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}}}}}}}};
}

// A pending pod in ml that names `claim`.
inline json ClaimPod(const std::string& name, const std::string& claim = "c1") {
  json pod = volume_objects::PodObject(name, json::array());
  pod["spec"]["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimName", claim}}};
  return pod;
}

// One session over what the cache holds, with its DRA inputs.
inline Decisions RunWithDevices(ClusterCache& c,
                                const SchedulerConfig& config = SchedulerConfig::Default()) {
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c.state());
  snapshot.set_devices(c.DeviceInputsForSession());
  return Session(snapshot, policy, SessionOptions{}).Run();
}

}  // namespace gantry::cache_dra
