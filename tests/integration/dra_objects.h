// DRA's objects (resource.k8s.io/v1) as the integration tests make them: devices, slices
// and classes, and a node whose devices a slice publishes.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/testenv.h"

namespace gantry::testing {

constexpr const char* kDraApi = "/apis/resource.k8s.io/v1";

inline nlohmann::json Str(const std::string& value) {
  return {{"string", value}};
}
inline nlohmann::json Qty(const std::string& value) {
  return {{"value", value}};
}

inline nlohmann::json Device(const std::string& name,
                             nlohmann::json attributes = nlohmann::json::object(),
                             nlohmann::json capacity = nlohmann::json::object()) {
  nlohmann::json device = {{"name", name}};
  if (!attributes.empty()) device["attributes"] = std::move(attributes);
  if (!capacity.empty()) device["capacity"] = std::move(capacity);
  return device;
}

// One of `count` slices of `node`'s pool (named as the node, as the NVIDIA driver does):
// `devices`, or the pool's shared counter sets when `counters` is given.
inline nlohmann::json Slice(const std::string& name, const std::string& driver,
                            const std::string& node, nlohmann::json devices, int count = 1,
                            nlohmann::json counters = nullptr) {
  nlohmann::json spec = {
      {"driver", driver},
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

inline nlohmann::json DeviceClass(const std::string& name, const std::string& expression) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec", {{"selectors", {{{"cel", {{"expression", expression}}}}}}}}};
}

// A ResourceClaim `name` of one request "gpu" for `count` devices of `device_class`.
inline nlohmann::json GpuClaim(const std::string& name, const std::string& device_class,
                               int count = 1) {
  nlohmann::json exactly = {{"deviceClassName", device_class}};
  if (count != 1) exactly["count"] = count;
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}}},
          {"spec", {{"devices", {{"requests", {{{"name", "gpu"}, {"exactly", exactly}}}}}}}}};
}

inline nlohmann::json Cel(const std::string& expression) {
  return {{{"cel", {{"expression", expression}}}}};
}

// A node without GPUs in its allocatable (labelled gantry-test=NODE) and one ResourceSlice
// of `driver` publishing `devices` for it, its pool named as the node.
inline void CreateNodeWithDevices(const std::string& node, nlohmann::json devices,
                                  const std::string& driver = "gpu.example.com") {
  auto created = TestEnv::Get().CreateNode(node, 0, "8", "16Gi", {{"gantry-test", node}});
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto slice = TestEnv::Get().Call("POST", std::string(kDraApi) + "/resourceslices",
                                   Slice(node + "-gpus", driver, node, std::move(devices)));
  ASSERT_TRUE(slice.ok()) << slice.status().message();
}

}  // namespace gantry::testing
