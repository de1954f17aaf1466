// The DRA decoders' test fixtures, written by hand in the shapes NVIDIA's GPU DRA driver
// (gpu.nvidia.com) publishes: whole GPUs with their attributes and memory, and a
// partitionable GPU whose MIG devices consume a shared counter set (in 1.37 the counters
// sit in a slice of their own in the same pool); a class, claims and a pod. Shared by
// dra_slice_objects_test.cc and dra_claim_objects_test.cc; tests/fuzz/make_seeds.py makes
// the dra_objects fuzz seeds from them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "k8s/dra_objects.h"
#include "model/quantity.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s::dra_test {

using json = nlohmann::json;

inline constexpr Milli kMilliGi = (Milli{1} << 30) * kMilliPerUnit;
inline constexpr Milli kMilliMi = (Milli{1} << 20) * kMilliPerUnit;

// Two H100s on node-1, as the driver publishes them (attributes in its own domain written
// bare, the PCIe root in resource.kubernetes.io's).
inline const char* const kWholeGpuSlice = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
  "metadata": {"name": "node-1-gpu", "uid": "6f1c", "resourceVersion": "1234",
               "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1",
                                    "uid": "n1"}]},
  "spec": {
    "driver": "gpu.nvidia.com",
    "nodeName": "node-1",
    "pool": {"name": "node-1", "generation": 3, "resourceSliceCount": 1},
    "devices": [
      {"name": "gpu-0",
       "attributes": {
         "architecture": {"string": "Hopper"},
         "brand": {"string": "Nvidia"},
         "cudaComputeCapability": {"version": "9.0.0"},
         "driverVersion": {"version": "570.124.6"},
         "index": {"int": 0},
         "productName": {"string": "NVIDIA H100 80GB HBM3"},
         "type": {"string": "gpu"},
         "uuid": {"string": "GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"},
         "resource.kubernetes.io/pcieRoot": {"string": "pci0000:40"}},
       "capacity": {"memory": {"value": "80Gi"}}},
      {"name": "gpu-1",
       "attributes": {
         "driverVersion": {"version": "570.124.6"},
         "index": {"int": 1},
         "productName": {"string": "NVIDIA H100 80GB HBM3"},
         "type": {"string": "gpu"},
         "uuid": {"string": "GPU-9d2e2c1a-5b7f-4c1e-8d6a-0f3b2a1c9e87"},
         "resource.kubernetes.io/pcieRoot": {"string": "pci0000:c0"}},
       "capacity": {"memory": {"value": "80Gi"}}}
    ]
  }
})";

// The counters of an A100 40GB on node-2 (one set per GPU, a counter per memory slice).
inline const char* const kMigCounterSlice = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
  "metadata": {"name": "node-2-gpu-counters"},
  "spec": {
    "driver": "gpu.nvidia.com",
    "nodeName": "node-2",
    "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 2},
    "sharedCounters": [
      {"name": "gpu-0-counter-set",
       "counters": {"multiprocessors": {"value": "98"}, "memory": {"value": "40Gi"},
                    "memory-slice-0": {"value": "1"}, "memory-slice-1": {"value": "1"},
                    "memory-slice-2": {"value": "1"}, "memory-slice-3": {"value": "1"}}}
    ]
  }
})";

// The devices of that pool: the whole GPU consumes everything, each MIG device its part.
inline const char* const kMigDeviceSlice = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
  "metadata": {"name": "node-2-gpu-devices"},
  "spec": {
    "driver": "gpu.nvidia.com",
    "nodeName": "node-2",
    "pool": {"name": "node-2", "generation": 1, "resourceSliceCount": 2},
    "devices": [
      {"name": "gpu-0",
       "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA A100-SXM4-40GB"}},
       "capacity": {"memory": {"value": "40Gi"}, "multiprocessors": {"value": "98"}},
       "consumesCounters": [
         {"counterSet": "gpu-0-counter-set",
          "counters": {"multiprocessors": {"value": "98"}, "memory": {"value": "40Gi"},
                       "memory-slice-0": {"value": "1"}, "memory-slice-1": {"value": "1"},
                       "memory-slice-2": {"value": "1"}, "memory-slice-3": {"value": "1"}}}]},
      {"name": "gpu-0-mig-19-0-1",
       "attributes": {"type": {"string": "mig"}, "profile": {"string": "1g.5gb"},
                      "parentUUID": {"string": "GPU-0b8a"}},
       "capacity": {"memory": {"value": "4864Mi"}, "multiprocessors": {"value": "14"}},
       "consumesCounters": [
         {"counterSet": "gpu-0-counter-set",
          "counters": {"multiprocessors": {"value": "14"}, "memory": {"value": "4864Mi"},
                       "memory-slice-0": {"value": "1"}}}]},
      {"name": "gpu-0-mig-14-0-2",
       "attributes": {"type": {"string": "mig"}, "profile": {"string": "2g.10gb"}},
       "capacity": {"memory": {"value": "9856Mi"}, "multiprocessors": {"value": "28"}},
       "consumesCounters": [
         {"counterSet": "gpu-0-counter-set",
          "counters": {"multiprocessors": {"value": "28"}, "memory": {"value": "9856Mi"},
                       "memory-slice-0": {"value": "1"}, "memory-slice-1": {"value": "1"}}}]}
    ]
  }
})";

inline const char* const kGpuClass = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
  "metadata": {"name": "gpu.nvidia.com"},
  "spec": {
    "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
    "config": [{"opaque": {"driver": "gpu.nvidia.com",
                           "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                                          "kind": "GpuConfig"}}}],
    "extendedResourceName": "nvidia.com/gpu"
  }
})";

// Two H100s on one PCIe root, else four of any GPU; one NIC on the same root.
inline const char* const kClaim = R"json({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "train-gpus", "namespace": "ml", "uid": "c-1", "resourceVersion": "42",
               "finalizers": ["example.com/other"]},
  "spec": {"devices": {
    "requests": [
      {"name": "gpus", "firstAvailable": [
         {"name": "h100", "deviceClassName": "gpu.nvidia.com", "count": 2,
          "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"
}
}]
},
         {"name": "any", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
          "count": 4,
          "tolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"},
                          {"key": "flaky", "value": "yes", "tolerationSeconds": 300}]}]
},
      {"name": "nic", "exactly": {"deviceClassName": "rdma.example.com", "allocationMode": "All",
                                  "adminAccess": false,
                                  "capacity": {"requests": {"bandwidth": "10G"}}}}],
    "constraints": [
      {"requests": ["gpus", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"},
      {"requests": ["gpus/h100"], "distinctAttribute": "gpu.nvidia.com/uuid"}],
    "config": [
      {"requests": ["gpus"],
       "opaque": {"driver": "gpu.nvidia.com",
                  "parameters": {"kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}}}]
}
}
})json";

// One shared GPU allocated on node-1 and reserved for two pods.
inline const char* const kAllocatedClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "shared-gpu", "namespace": "ml", "uid": "c-2", "resourceVersion": "77",
               "deletionTimestamp": "2026-01-02T03:05:00Z",
               "finalizers": ["resource.kubernetes.io/delete-protection"]},
  "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
  "status": {
    "allocation": {
      "devices": {
        "results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-1",
                     "device": "gpu-0", "shareID": "0b5e7b3c-1f2a-4c3d-9e8f-a1b2c3d4e5f6",
                     "consumedCapacity": {"memory": "40Gi"},
                     "bindingConditions": ["dra.example.com/attached"],
                     "bindingFailureConditions": ["dra.example.com/failed"]}],
        "config": [{"source": "FromClass", "opaque": {"driver": "gpu.nvidia.com",
                                                      "parameters": {"kind": "GpuConfig"}}}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
      "allocationTimestamp": "2026-01-02T03:04:05Z"},
    "reservedFor": [{"resource": "pods", "name": "train-0", "uid": "p-0"},
                    {"apiGroup": "", "resource": "pods", "name": "train-1", "uid": "p-1"}]
  }
})";

inline dra::ResourceSlice Slice(const char* text) {
  return Must(DecodeResourceSlice(json::parse(text)));
}

// The error `object` is refused with; fails the test when it is accepted.
template <typename Decode>
std::string Error(Decode decode, const json& object) {
  auto r = decode(object);
  EXPECT_FALSE(r.ok()) << object.dump();
  return r.ok() ? "" : r.status().message();
}
inline std::string SliceError(const json& o) {
  return Error(DecodeResourceSlice, o);
}
inline std::string ClaimError(const json& o) {
  return Error(DecodeResourceClaim, o);
}

inline const char* const kPod = R"({
  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-0", "namespace": "ml"},
  "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpus"}]}}],
           "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "one-gpu"},
                              {"name": "shared", "resourceClaimName": "shared-gpu"}]},
  "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "train-0-gpus-x7k2p"},
                                       {"name": "scratch"}]}
})";

}  // namespace gantry::k8s::dra_test
