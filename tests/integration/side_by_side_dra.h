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

#include "tests/integration/dra_objects.h"
#include "tests/integration/side_by_side.h"

namespace gantry::testing {

constexpr const char* kTestDriver = "dra.gantry.test";
constexpr const char* kNvidiaDriver = "gpu.nvidia.com";
constexpr const char* kRunLabel = "sbs-dra";
constexpr const char* kRoleLabel = "sbs-dra-role";

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

// ---- The NVIDIA driver's shapes (gpu.nvidia.com): its DeviceClasses' expressions, whole
// GPUs, and a partitionable A100 whose MIG devices consume memory slices of a counter set
// published in a slice of its own in the node's pool.

inline const char* const kGpuExpression =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
inline const char* const kMigExpression =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";

inline json MemorySlices(int first, int count) {
  json counters = json::object();
  for (int i = first; i < first + count; ++i) {
    counters["memory-slice-" + std::to_string(i)] = Qty("1");
  }
  return counters;
}

// A MIG device as the driver names it (gpu-0-mig-PROFILEID-START-SIZE), consuming its
// memory slices and multiprocessors.
inline json Mig(int profile_id, const std::string& profile, int start, int size,
                int multiprocessors) {
  json counters = MemorySlices(start, size);
  counters["multiprocessors"] = Qty(std::to_string(multiprocessors));
  json device = Device("gpu-0-mig-" + std::to_string(profile_id) + "-" + std::to_string(start) +
                           "-" + std::to_string(size),
                       {{"type", Str("mig")},
                        {"profile", Str(profile)},
                        {"productName", Str("NVIDIA A100-SXM4-40GB")}},
                       {{"memory", Qty(std::to_string(5 * size) + "Gi")}});
  device["consumesCounters"] = {{{"counterSet", "gpu-0-counter-set"}, {"counters", counters}}};
  return device;
}

// A partitionable A100 40GB (8 memory slices, 98 multiprocessors): the counters' slice and
// the devices' slice of the node's pool; the whole GPU consumes everything.
inline std::vector<json> PartitionableGpu(const std::string& node, json migs) {
  json all = MemorySlices(0, 8);
  all["multiprocessors"] = Qty("98");
  json whole =
      Device("gpu-0", {{"type", Str("gpu")}, {"productName", Str("NVIDIA A100-SXM4-40GB")}},
             {{"memory", Qty("40Gi")}});
  whole["consumesCounters"] = {{{"counterSet", "gpu-0-counter-set"}, {"counters", all}}};
  json devices = {whole};
  for (const json& m : migs) devices.push_back(m);
  return {Slice(node + "-gpu-counters", kNvidiaDriver, node, nullptr, 2,
                {{{"name", "gpu-0-counter-set"}, {"counters", all}}}),
          Slice(node + "-gpu-devices", kNvidiaDriver, node, devices, 2)};
}

inline json ProfileRequest(const std::string& request, const std::string& mig_class,
                           const std::string& profile) {
  return {
      {"name", request},
      {"exactly",
       {{"deviceClassName", mig_class},
        {"selectors", Cel("device.attributes['gpu.nvidia.com'].profile == '" + profile + "'")}}}};
}

}  // namespace gantry::testing
