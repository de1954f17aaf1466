// Dynamic Resource Allocation side by side (side_by_side_dra_test.cc): each case is run
// twice at once, by kube-scheduler and by gantry, each on nodes of its own ("RUN-ROLE",
// RUN = CASE-kube or CASE-gantry) that publish the same devices, since a claim allocated by
// one run keeps its devices. The pieces here build the case's objects (slices, classes,
// claims, pods) and judge a run: where each pod went (by node role) and whether each claim
// of a bound pod is allocated devices of that node's pools, reserved for the pod.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/side_by_side.h"

namespace gantry::testing {

constexpr const char* kDraApi = "/apis/resource.k8s.io/v1";
constexpr const char* kTestDriver = "dra.gantry.test";
constexpr const char* kNvidiaDriver = "gpu.nvidia.com";
constexpr const char* kRunLabel = "sbs-dra";
constexpr const char* kRoleLabel = "sbs-dra-role";

inline json Str(const std::string& value) {
  return {{"string", value}};
}
inline json Qty(const std::string& value) {
  return {{"value", value}};
}

inline json Device(const std::string& name, json attributes = json::object(),
                   json capacity = json::object()) {
  json device = {{"name", name}};
  if (!attributes.empty()) device["attributes"] = std::move(attributes);
  if (!capacity.empty()) device["capacity"] = std::move(capacity);
  return device;
}

// One of `count` slices of `node`'s pool (named as the node, as the NVIDIA driver does):
// `devices`, or the pool's shared counter sets when `counters` is given.
inline json Slice(const std::string& name, const std::string& driver, const std::string& node,
                  json devices, int count = 1, json counters = nullptr) {
  json spec = {{"driver", driver},
               {"nodeName", node},
               {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", count}}}};
  if (counters.is_null()) {
    spec["devices"] = std::move(devices);
  } else {
    spec["sharedCounters"] = std::move(counters);
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

inline json DeviceClass(const std::string& name, const std::string& expression) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec", {{"selectors", {{{"cel", {{"expression", expression}}}}}}}}};
}

inline json Cel(const std::string& expression) {
  return {{{"cel", {{"expression", expression}}}}};
}

// A claim of `requests` (each {"name", "exactly" or "firstAvailable"}), with `constraints`.
inline json Claim(const std::string& name, json requests, json constraints = nullptr) {
  json devices = {{"requests", std::move(requests)}};
  if (!constraints.is_null()) devices["constraints"] = std::move(constraints);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}}},
          {"spec", {{"devices", devices}}}};
}

// A claim of one request "gpu" of the class, `exactly` merged into its ExactDeviceRequest.
inline json ExactClaim(const std::string& name, const std::string& device_class,
                       json exactly = json::object()) {
  json request = {{"deviceClassName", device_class}};
  request.merge_patch(exactly);
  return Claim(name, {{{"name", "gpu"}, {"exactly", request}}});
}

// A pod of `cpu` whose one container uses each of `claims` (ResourceClaims by name), on the
// node of `role` when one is given (the run's own label is added when it is made).
inline json DraPod(const std::string& name, const std::vector<std::string>& claims,
                   const std::string& role = "", const std::string& cpu = "500m") {
  json pod = {
      {"metadata", {{"name", name}}},
      {"spec", {{"containers", {Container("main", cpu)}}, {"nodeSelector", json::object()}}}};
  for (size_t i = 0; i < claims.size(); ++i) {
    const std::string entry = "c" + std::to_string(i);
    pod["spec"]["resourceClaims"].push_back({{"name", entry}, {"resourceClaimName", claims[i]}});
    pod["spec"]["containers"][0]["resources"]["claims"].push_back({{"name", entry}});
  }
  if (!role.empty()) pod["spec"]["nodeSelector"][kRoleLabel] = role;
  return pod;
}

// POSTs `object` to `collection`; one that exists already is fine.
inline void CreateObject(const std::string& collection, const json& object) {
  auto r = Env().Call("POST", collection, object);
  EXPECT_TRUE(r.ok() || r.status().message().find("AlreadyExists") != std::string::npos ||
              r.status().message().find("already exists") != std::string::npos)
      << r.status().message();
}

// The claims (ResourceClaim names) a pod names.
inline std::vector<std::string> ClaimsOf(const json& pod) {
  std::vector<std::string> out;
  for (const json& c : pod["spec"].value("resourceClaims", json::array())) {
    out.push_back(c.value("resourceClaimName", ""));
  }
  return out;
}

// What is wrong with the allocation of `claim`, used by `pod` bound to `node` whose pools
// publish `devices` ("driver/device"), or "": allocated for that node only, each result a
// device of its pools for a request the claim has, reserved for the pod.
inline std::string AllocationProblem(const json& claim, const json& pod, const std::string& node,
                                     const std::set<std::string>& devices) {
  const json status = claim.value("status", json::object());
  if (!status.contains("allocation")) return "not allocated";
  const json& allocation = status["allocation"];
  const json node_selector = {
      {"nodeSelectorTerms",
       {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}};
  if (allocation.value("nodeSelector", json()) != node_selector) {
    return "allocation's node selector " + allocation.value("nodeSelector", json()).dump();
  }
  std::set<std::string> requests;
  for (const json& r : claim["spec"]["devices"]["requests"]) {
    const std::string name = r.value("name", "");
    if (r.contains("exactly")) requests.insert(name);
    for (const json& sub : r.value("firstAvailable", json::array())) {
      requests.insert(name + "/" + sub.value("name", ""));
    }
  }
  const json results = allocation["devices"].value("results", json::array());
  if (results.empty()) return "no devices allocated";
  for (const json& r : results) {
    if (r.value("pool", "") != node) return "device of pool " + r.value("pool", "");
    if (!devices.count(r.value("driver", "") + "/" + r.value("device", ""))) {
      return "device " + r.dump() + " is not published for " + node;
    }
    if (!requests.count(r.value("request", ""))) return "result for no request: " + r.dump();
  }
  for (const json& consumer : status.value("reservedFor", json::array())) {
    if (consumer.value("uid", "") == pod["metadata"].value("uid", "")) return "";
  }
  return "not reserved for " + pod["metadata"].value("name", "");
}

// A claim's results as "request=device", sorted.
inline std::vector<std::string> Results(const json& claim) {
  std::vector<std::string> out;
  const json results =
      claim.value("/status/allocation/devices/results"_json_pointer, json::array());
  for (const json& r : results) {
    out.push_back(r.value("request", "") + "=" + r.value("device", ""));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gantry::testing
