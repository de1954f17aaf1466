// DRA's objects (resource.k8s.io/v1) decoded into model/dra.h. The fixtures are written by
// hand in the shapes NVIDIA's GPU DRA driver (gpu.nvidia.com) publishes: whole GPUs with
// their attributes and memory, and a partitionable GPU whose MIG devices consume a shared
// counter set (in 1.37 the counters sit in a slice of their own in the same pool). Expected
// values come from the fixtures and upstream's types and validation, not from the decoder.
#include "k8s/dra_objects.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/labels.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

constexpr Milli kMilliGi = (Milli{1} << 30) * kMilliPerUnit;
constexpr Milli kMilliMi = (Milli{1} << 20) * kMilliPerUnit;

// Two H100s on node-1, as the driver publishes them (attributes in its own domain written
// bare, the PCIe root in resource.kubernetes.io's).
const char* const kWholeGpuSlice = R"({
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
const char* const kMigCounterSlice = R"({
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
const char* const kMigDeviceSlice = R"({
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

const char* const kGpuClass = R"({
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
const char* const kClaim = R"json({
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
const char* const kAllocatedClaim = R"({
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

dra::ResourceSlice Slice(const char* text) {
  return Must(DecodeResourceSlice(json::parse(text)));
}

// The error `object` is refused with; fails the test when it is accepted.
template <typename Decode>
std::string Error(Decode decode, const json& object) {
  auto r = decode(object);
  EXPECT_FALSE(r.ok()) << object.dump();
  return r.ok() ? "" : r.status().message();
}
std::string SliceError(const json& o) {
  return Error(DecodeResourceSlice, o);
}
std::string ClaimError(const json& o) {
  return Error(DecodeResourceClaim, o);
}

// ---------------------------------------------------------------------------------------
// ResourceSlices

TEST(DecodeResourceSlice, WholeGpus) {
  dra::ResourceSlice s = Slice(kWholeGpuSlice);
  EXPECT_EQ(s.name, "node-1-gpu");
  EXPECT_EQ(s.driver, "gpu.nvidia.com");
  EXPECT_EQ(s.pool, (dra::ResourcePool{"node-1", 3, 1}));
  ASSERT_TRUE(s.node_selection.has_value());
  EXPECT_EQ(s.node_selection->node_name, "node-1");
  EXPECT_FALSE(s.node_selection->node_selector.has_value());
  EXPECT_FALSE(s.node_selection->all_nodes);
  EXPECT_FALSE(s.per_device_node_selection);
  EXPECT_TRUE(s.shared_counters.empty());
  ASSERT_EQ(s.devices.size(), 2u);
  const dra::Device& d = s.devices[0];
  EXPECT_EQ(d.name, "gpu-0");
  ASSERT_EQ(d.attributes.size(), 9u);
  EXPECT_EQ(d.attributes.at("gpu.nvidia.com/productName"),
            dra::AttributeValue(std::string("NVIDIA H100 80GB HBM3")));
  EXPECT_EQ(d.attributes.at("gpu.nvidia.com/uuid"),
            dra::AttributeValue(std::string("GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c")));
  EXPECT_EQ(d.attributes.at("gpu.nvidia.com/driverVersion"),
            dra::AttributeValue(dra::SemanticVersion{"570.124.6"}));
  EXPECT_EQ(d.attributes.at("gpu.nvidia.com/cudaComputeCapability"),
            dra::AttributeValue(dra::SemanticVersion{"9.0.0"}));
  EXPECT_EQ(d.attributes.at("gpu.nvidia.com/index"), dra::AttributeValue(int64_t{0}));
  EXPECT_EQ(d.attributes.at("resource.kubernetes.io/pcieRoot"),
            dra::AttributeValue(std::string("pci0000:40")));
  ASSERT_EQ(d.capacity.size(), 1u);
  const dra::DeviceCapacity& memory = d.capacity.at("gpu.nvidia.com/memory");
  EXPECT_EQ(memory.value, 80 * kMilliGi);
  EXPECT_TRUE(memory.bare_name);
  EXPECT_FALSE(memory.request_policy.has_value());
  EXPECT_TRUE(d.consumes_counters.empty());
  EXPECT_FALSE(d.node_selection.has_value());
  EXPECT_TRUE(d.taints.empty());
  EXPECT_FALSE(d.binds_to_node);
  EXPECT_FALSE(d.allow_multiple_allocations);
  EXPECT_EQ(s.devices[1].name, "gpu-1");
  EXPECT_EQ(s.devices[1].attributes.at("gpu.nvidia.com/index"), dra::AttributeValue(int64_t{1}));
  EXPECT_EQ(s.devices[1].attributes.at("resource.kubernetes.io/pcieRoot"),
            dra::AttributeValue(std::string("pci0000:c0")));
}

TEST(DecodeResourceSlice, SharedCountersInTheirOwnSlice) {
  dra::ResourceSlice s = Slice(kMigCounterSlice);
  EXPECT_EQ(s.pool, (dra::ResourcePool{"node-2", 1, 2}));
  EXPECT_TRUE(s.devices.empty());
  ASSERT_EQ(s.shared_counters.size(), 1u);
  EXPECT_EQ(s.shared_counters[0].name, "gpu-0-counter-set");
  EXPECT_EQ(s.shared_counters[0].counters, (dra::Counters{{"memory", 40 * kMilliGi},
                                                          {"memory-slice-0", 1000},
                                                          {"memory-slice-1", 1000},
                                                          {"memory-slice-2", 1000},
                                                          {"memory-slice-3", 1000},
                                                          {"multiprocessors", 98000}}));
}

TEST(DecodeResourceSlice, MigDevicesConsumeCounters) {
  dra::ResourceSlice s = Slice(kMigDeviceSlice);
  ASSERT_EQ(s.devices.size(), 3u);
  const dra::Device& whole = s.devices[0];
  ASSERT_EQ(whole.consumes_counters.size(), 1u);
  EXPECT_EQ(whole.consumes_counters[0].counter_set, "gpu-0-counter-set");
  EXPECT_EQ(whole.consumes_counters[0].counters.size(), 6u);
  const dra::Device& mig = s.devices[1];
  EXPECT_EQ(mig.name, "gpu-0-mig-19-0-1");
  EXPECT_EQ(mig.attributes.at("gpu.nvidia.com/profile"),
            dra::AttributeValue(std::string("1g.5gb")));
  EXPECT_EQ(mig.capacity.at("gpu.nvidia.com/memory").value, 4864 * kMilliMi);
  EXPECT_EQ(mig.capacity.at("gpu.nvidia.com/multiprocessors").value, 14000);
  ASSERT_EQ(mig.consumes_counters.size(), 1u);
  EXPECT_EQ(
      mig.consumes_counters[0],
      (dra::DeviceCounterConsumption{
          "gpu-0-counter-set",
          {{"memory", 4864 * kMilliMi}, {"memory-slice-0", 1000}, {"multiprocessors", 14000}}}));
  EXPECT_EQ(s.devices[2].consumes_counters[0].counters.at("memory-slice-1"), 1000);
}

TEST(DecodeResourceSlice, NodeSelectorAllNodesAndPerDevice) {
  json o = json::parse(kWholeGpuSlice);
  o["spec"].erase("nodeName");
  o["spec"]["nodeSelector"] = json::parse(
      R"({"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "topology.example.com/rack", "operator": "In", "values": ["r1", "r2"]}]}]})");
  dra::ResourceSlice s = Must(DecodeResourceSlice(o));
  ASSERT_TRUE(s.node_selection && s.node_selection->node_selector);
  const auto& terms = *s.node_selection->node_selector;
  ASSERT_EQ(terms.size(), 1u);
  ASSERT_EQ(terms[0].size(), 1u);
  EXPECT_EQ(terms[0][0],
            (SelectorRequirement{
                "topology.example.com/rack", SelectorRequirement::Op::kIn, {"r1", "r2"}}));
  EXPECT_FALSE(s.node_selection->node_name.has_value());

  o["spec"].erase("nodeSelector");
  o["spec"]["allNodes"] = true;
  s = Must(DecodeResourceSlice(o));
  ASSERT_TRUE(s.node_selection.has_value());
  EXPECT_TRUE(s.node_selection->all_nodes);

  o["spec"].erase("allNodes");
  o["spec"]["perDeviceNodeSelection"] = true;
  o["spec"]["devices"][0]["nodeName"] = "node-7";
  o["spec"]["devices"][1]["allNodes"] = true;
  s = Must(DecodeResourceSlice(o));
  EXPECT_TRUE(s.per_device_node_selection);
  EXPECT_FALSE(s.node_selection.has_value());
  ASSERT_TRUE(s.devices[0].node_selection.has_value());
  EXPECT_EQ(s.devices[0].node_selection->node_name, "node-7");
  ASSERT_TRUE(s.devices[1].node_selection.has_value());
  EXPECT_TRUE(s.devices[1].node_selection->all_nodes);
}

TEST(DecodeResourceSlice, ConsumableCapacityTaintsAndBindingConditions) {
  json o = json::parse(kWholeGpuSlice);
  json& d = o["spec"]["devices"][0];
  d["allowMultipleAllocations"] = true;
  d["capacity"]["memory"]["requestPolicy"] = json::parse(
      R"({"default": "10Gi", "validRange": {"min": "1Gi", "max": "80Gi", "step": "1Gi"}})");
  d["capacity"]["gpu.nvidia.com/cores"] = json::parse(
      R"({"value": "100", "requestPolicy": {"default": "50", "validValues": ["25", "50", "100"]}})");
  d["taints"] = json::parse(R"([{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute",
                                "timeAdded": "2026-01-02T03:04:05Z"},
                               {"key": "drain", "effect": "None"}])");
  d["bindsToNode"] = true;
  d["bindingConditions"] = {"dra.example.com/attached"};
  d["bindingFailureConditions"] = {"dra.example.com/failed"};
  dra::Device device = Must(DecodeResourceSlice(o)).devices[0];
  EXPECT_TRUE(device.allow_multiple_allocations);
  const dra::DeviceCapacity& memory = device.capacity.at("gpu.nvidia.com/memory");
  ASSERT_TRUE(memory.request_policy.has_value());
  EXPECT_EQ(memory.request_policy->default_value, 10 * kMilliGi);
  EXPECT_EQ(memory.request_policy->valid_range,
            (dra::CapacityRequestPolicy::Range{1 * kMilliGi, 80 * kMilliGi, 1 * kMilliGi}));
  const dra::DeviceCapacity& cores = device.capacity.at("gpu.nvidia.com/cores");
  EXPECT_FALSE(cores.bare_name);
  EXPECT_EQ(cores.request_policy->valid_values, (std::vector<Milli>{25000, 50000, 100000}));
  ASSERT_EQ(device.taints.size(), 2u);
  EXPECT_EQ(device.taints[0], (dra::DeviceTaint{"gpu.nvidia.com/xid", "79",
                                                dra::DeviceTaintEffect::kNoExecute, 1767323045}));
  EXPECT_EQ(device.taints[1],
            (dra::DeviceTaint{"drain", "", dra::DeviceTaintEffect::kNone, std::nullopt}));
  EXPECT_TRUE(device.binds_to_node);
  EXPECT_EQ(device.binding_conditions, std::vector<std::string>{"dra.example.com/attached"});
  EXPECT_EQ(device.binding_failure_conditions, std::vector<std::string>{"dra.example.com/failed"});
}

TEST(DecodeResourceSlice, QualifiedAttributeWinsOverBareOne) {
  json o = json::parse(kWholeGpuSlice);
  o["spec"]["devices"][0]["attributes"]["gpu.nvidia.com/type"] = {{"string", "explicit"}};
  dra::Device device = Must(DecodeResourceSlice(o)).devices[0];
  EXPECT_EQ(device.attributes.at("gpu.nvidia.com/type"),
            dra::AttributeValue(std::string("explicit")));
  // The same with a driver whose domain sorts after the bare id.
  json z = json::parse(R"({"metadata": {"name": "z"}, "spec": {"driver": "zz.example.com",
      "allNodes": true, "pool": {"name": "p", "resourceSliceCount": 1},
      "devices": [{"name": "d", "attributes": {"zz.example.com/a": {"int": 2}, "a": {"int": 1}}}]}})");
  EXPECT_EQ(Must(DecodeResourceSlice(z)).devices[0].attributes.at("zz.example.com/a"),
            dra::AttributeValue(int64_t{2}));
}

struct SliceCase {
  std::string name;
  std::string patch;  // a JSON merge patch (RFC 7386) on kWholeGpuSlice
  std::string error;
};

TEST(DecodeResourceSlice, Errors) {
  const std::string at = "ResourceSlice \"node-1-gpu\": spec";
  const std::vector<SliceCase> cases = {
      {"no name", R"({"metadata": {"name": null}})", "ResourceSlice: metadata.name: required"},
      {"no spec", R"({"spec": null})", at + ": required"},
      {"no driver", R"({"spec": {"driver": null}})", at + ".driver: required"},
      {"driver", R"({"spec": {"driver": "-gpu"}})",
       at + ".driver: \"-gpu\" is not a driver name (at most 63 alphanumerics, '-', '_' or '.', "
            "starting and ending alphanumeric)"},
      {"pool", R"({"spec": {"pool": null}})", at + ".pool: required"},
      {"pool count", R"({"spec": {"pool": {"resourceSliceCount": 0}}})",
       at + ".pool.resourceSliceCount: must be greater than zero"},
      {"generation", R"({"spec": {"pool": {"generation": -1}}})",
       at + ".pool.generation: must not be negative"},
      {"no node selection", R"({"spec": {"nodeName": null}})",
       at + ": exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is "
            "required"},
      {"two node selections", R"({"spec": {"allNodes": true}})",
       at + ": exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is "
            "allowed, got nodeName and allNodes"},
      {"allNodes false", R"({"spec": {"nodeName": null, "allNodes": false}})",
       at + ".allNodes: must be unset or true"},
      {"two terms",
       R"({"spec": {"nodeName": null, "nodeSelector": {"nodeSelectorTerms": [{}, {}]}}})",
       at + ".nodeSelector.nodeSelectorTerms: must have exactly one node selector term, got 2"},
      {"no terms", R"({"spec": {"nodeName": null, "nodeSelector": {"nodeSelectorTerms": []}}})",
       at + ".nodeSelector.nodeSelectorTerms: must have at least one node selector term"},
      {"bad requirement",
       R"({"spec": {"nodeName": null, "nodeSelector": {"nodeSelectorTerms": [
           {"matchExpressions": [{"key": "a", "operator": "Near"}]}]}}})",
       at + ".nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: \"Near\" is not "
            "supported (In, NotIn, Exists, DoesNotExist, Gt, Lt)"},
      {"devices and counters",
       R"({"spec": {"sharedCounters": [{"name": "c", "counters": {"a": {"value": "1"}}}]}})",
       at + ": only one of sharedCounters or devices is allowed"},
      {"device name", R"({"spec": {"devices": [{"name": "GPU_0"}]}})",
       at + ".devices[0].name: \"GPU_0\" is not a DNS label (at most 63 lowercase alphanumerics or "
            "'-', starting and ending alphanumeric)"},
      {"no device name", R"({"spec": {"devices": [{"attributes": {}}]}})",
       at + ".devices[0].name: required"},
      {"list attribute",
       R"({"spec": {"devices": [{"name": "a", "attributes": {"links": {"ints": [1, 2]}}}]}})",
       at + ".devices[0].attributes[\"links\"].ints: list-typed attributes need the feature gate "
            "DRAListTypeAttributes, off by default in Kubernetes 1.37"},
      {"two values",
       R"({"spec": {"devices": [{"name": "a", "attributes": {"x": {"int": 1, "string": "1"}}}]}})",
       at + ".devices[0].attributes[\"x\"]: exactly one of int, bool, string, version is "
            "required, got int and string"},
      {"no value", R"({"spec": {"devices": [{"name": "a", "attributes": {"x": {}}}]}})",
       at + ".devices[0].attributes[\"x\"]: exactly one of int, bool, string, version is "
            "required"},
      {"int type", R"({"spec": {"devices": [{"name": "a", "attributes": {"x": {"int": "1"}}}]}})",
       at + ".devices[0].attributes[\"x\"].int: expected a 64-bit integer, got \"1\""},
      {"version",
       R"({"spec": {"devices": [{"name": "a", "attributes": {"v": {"version": "570.124.06"}}}]}})",
       at + ".devices[0].attributes[\"v\"].version: \"570.124.06\" is not a semantic version "
            "(semver.org 2.0.0)"},
      {"long string",
       R"({"spec": {"devices": [{"name": "a", "attributes": {"s": {"string": "0123456789012345678901234567890123456789012345678901234567890123x"}}}]}})",
       at + ".devices[0].attributes[\"s\"].string: "
            "\"0123456789012345678901234567890123456789012345678"
            "901234567890123x\" is longer than 64 bytes"},
      {"attribute name",
       R"({"spec": {"devices": [{"name": "a", "attributes": {"product-name": {"string": "x"}}}]}})",
       at + ".devices[0].attributes[\"product-name\"]: \"product-name\" is not a C identifier of "
            "at most 32 bytes"},
      {"empty domain",
       R"({"spec": {"devices": [{"name": "a", "attributes": {"/x": {"string": "x"}}}]}})",
       at + ".devices[0].attributes[\"/x\"]: the domain must not be empty"},
      {"capacity quantity",
       R"({"spec": {"devices": [{"name": "a", "capacity": {"gpu.nvidia.com/memory": {"value": "16Ei"}}}]}})",
       at + ".devices[0].capacity[\"gpu.nvidia.com/memory\"].value: quantity \"16Ei\" is too "
            "large (the limit is 9223372036854775807 milli-units)"},
      {"capacity value missing",
       R"({"spec": {"devices": [{"name": "a", "capacity": {"memory": {}}}]}})",
       at + ".devices[0].capacity[\"memory\"].value: required"},
      {"capacity twice",
       R"({"spec": {"devices": [{"name": "a", "capacity": {"memory": {"value": "1"}, "gpu.nvidia.com/memory": {"value": "2"}}}]}})",
       at + ".devices[0].capacity[\"memory\"]: the capacity gpu.nvidia.com/memory is given both "
            "with and without its domain"},
      {"policy without sharing",
       R"({"spec": {"devices": [{"name": "a", "capacity": {"memory": {"value": "1", "requestPolicy": {}}}}]}})",
       at + ".devices[0].capacity[\"memory\"].requestPolicy: only for a device with "
            "allowMultipleAllocations"},
      {"policy order",
       R"({"spec": {"devices": [{"name": "a", "allowMultipleAllocations": true, "capacity": {"memory": {"value": "10", "requestPolicy": {"default": "2", "validValues": ["2", "1"]}}}}]}})",
       at + ".devices[0].capacity[\"memory\"].requestPolicy.validValues[1]: values must be in "
            "ascending order, without repeats"},
      {"policy default",
       R"({"spec": {"devices": [{"name": "a", "allowMultipleAllocations": true, "capacity": {"memory": {"value": "10", "requestPolicy": {"validRange": {"min": "1"}}}}}]}})",
       at + ".devices[0].capacity[\"memory\"].requestPolicy.default: required with validValues "
            "or validRange"},
      {"policy step",
       R"({"spec": {"devices": [{"name": "a", "allowMultipleAllocations": true, "capacity": {"memory": {"value": "10", "requestPolicy": {"default": "1", "validRange": {"min": "1", "step": "0"}}}}}]}})",
       at + ".devices[0].capacity[\"memory\"].requestPolicy.validRange.step: must be positive"},
      {"duplicate device", R"({"spec": {"devices": [{"name": "a"}, {"name": "a"}]}})",
       at + ".devices[1].name: \"a\" is given twice"},
      {"device node name", R"({"spec": {"devices": [{"name": "a", "nodeName": "n"}]}})",
       at + ".devices[0].nodeName: only with perDeviceNodeSelection in the slice's spec"},
      {"per device without selection",
       R"({"spec": {"nodeName": null, "perDeviceNodeSelection": true, "devices": [{"name": "a"}]}})",
       at + ".devices[0]: exactly one of nodeName, nodeSelector, allNodes is required"},
      {"taint effect",
       R"({"spec": {"devices": [{"name": "a", "taints": [{"key": "k", "effect": "Evict"}]}]}})",
       at + ".devices[0].taints[0].effect: \"Evict\" is not None, NoSchedule or NoExecute"},
      {"taint key", R"({"spec": {"devices": [{"name": "a", "taints": [{"effect": "None"}]}]}})",
       at + ".devices[0].taints[0].key: required"},
      {"taint time",
       R"({"spec": {"devices": [{"name": "a", "taints": [{"key": "k", "effect": "None", "timeAdded": 5}]}]}})",
       at + ".devices[0].taints[0].timeAdded: expected an RFC 3339 time, got 5"},
      {"binding conditions alone",
       R"({"spec": {"devices": [{"name": "a", "bindingConditions": ["ready"]}]}})",
       at + ".devices[0]: bindingConditions and bindingFailureConditions are set together or not "
            "at all"},
      {"binding overlap",
       R"({"spec": {"devices": [{"name": "a", "bindingConditions": ["x"], "bindingFailureConditions": ["x"]}]}})",
       at + ".devices[0].bindingFailureConditions[0]: \"x\" is also a binding condition"},
      {"counters",
       R"({"spec": {"devices": [{"name": "a", "consumesCounters": [{"counterSet": "s"}]}]}})",
       at + ".devices[0].consumesCounters[0].counters: required"},
      {"counter set twice",
       R"({"spec": {"devices": [{"name": "a", "consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}, {"counterSet": "s", "counters": {"c": {"value": "1"}}}]}]}})",
       at + ".devices[0].consumesCounters[1].counterSet: \"s\" is given twice"},
      {"three consumptions",
       R"({"spec": {"devices": [{"name": "a", "consumesCounters": [{}, {}, {}]}]}})",
       at + ".devices[0].consumesCounters: 3 entries, at most 2 allowed"},
      {"devices not a list", R"({"spec": {"devices": {"name": "a"}}})",
       at + ".devices: expected a list, got {\"name\":\"a\"}"},
  };
  for (const SliceCase& c : cases) {
    json o = json::parse(kWholeGpuSlice);
    o.merge_patch(json::parse(c.patch));
    EXPECT_EQ(SliceError(o), c.error) << c.name;
  }
}

TEST(DecodeResourceSlice, Limits) {
  const std::string at = "ResourceSlice \"node-1-gpu\": spec";
  json o = json::parse(kWholeGpuSlice);
  json devices = json::array();
  for (int i = 0; i < 129; ++i) devices.push_back({{"name", "d" + std::to_string(i)}});
  o["spec"]["devices"] = devices;
  EXPECT_EQ(SliceError(o), at + ".devices: 129 entries, at most 128 allowed");
  devices.erase(devices.begin() + 128);
  o["spec"]["devices"] = devices;
  EXPECT_EQ(Must(DecodeResourceSlice(o)).devices.size(), 128u);
  // Taints (or counters) anywhere lower the limit to 64.
  devices.erase(devices.begin() + 65, devices.end());
  devices[3]["taints"] = json::parse(R"([{"key": "k", "effect": "NoSchedule"}])");
  o["spec"]["devices"] = devices;
  EXPECT_EQ(SliceError(o), at + ".devices: 65 devices, at most 64 allowed when devices have "
                                "taints or consume counters");
  json attributes = json::object();
  for (int i = 0; i < 30; ++i) attributes["a" + std::to_string(i)] = {{"int", i}};
  o = json::parse(kWholeGpuSlice);
  o["spec"]["devices"][0]["attributes"] = attributes;
  o["spec"]["devices"][0]["capacity"] =
      json::parse(R"({"c1": {"value": "1"}, "c2": {"value": "1"}, "c3": {"value": "1"}})");
  EXPECT_EQ(SliceError(o), at + ".devices[0]: 33 attributes and capacities, at most 32 allowed");
}

// ---------------------------------------------------------------------------------------
// DeviceClasses, DeviceTaintRules

TEST(DecodeDeviceClass, NvidiaGpuClass) {
  dra::DeviceClass c = Must(DecodeDeviceClass(json::parse(kGpuClass)));
  EXPECT_EQ(c.name, "gpu.nvidia.com");
  EXPECT_EQ(c.selectors,
            std::vector<std::string>{"device.driver == 'gpu.nvidia.com' && "
                                     "device.attributes['gpu.nvidia.com'].type == 'gpu'"});
  ASSERT_EQ(c.config.size(), 1u);
  EXPECT_EQ(c.config[0].driver, "gpu.nvidia.com");
  EXPECT_EQ(c.config[0].parameters_json,
            R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig"})");
  EXPECT_EQ(c.extended_resource_name, "nvidia.com/gpu");
}

TEST(DecodeDeviceClass, Errors) {
  const std::string at = "DeviceClass \"gpu.nvidia.com\": spec";
  auto error = [](const std::string& patch) {
    json o = json::parse(kGpuClass);
    o.merge_patch(json::parse(patch));
    return Error(DecodeDeviceClass, o);
  };
  EXPECT_EQ(error(R"({"spec": {"extendedResourceName": "gpu"}})"),
            at + ".extendedResourceName: \"gpu\" is not an extended resource name (domain/name, "
                 "outside kubernetes.io)");
  EXPECT_EQ(error(R"({"spec": {"extendedResourceName": "kubernetes.io/gpu"}})"),
            at + ".extendedResourceName: \"kubernetes.io/gpu\" is not an extended resource name "
                 "(domain/name, outside kubernetes.io)");
  EXPECT_EQ(error(R"({"spec": {"selectors": [{"cel": {}}]}})"),
            at + ".selectors[0].cel.expression: required");
  EXPECT_EQ(error(R"({"spec": {"selectors": [{"expression": "true"}]}})"),
            at + ".selectors[0].cel: required");
  EXPECT_EQ(error(R"({"spec": {"config": [{"opaque": {"driver": "gpu.nvidia.com"}}]}})"),
            at + ".config[0].opaque.parameters: required");
  EXPECT_EQ(
      error(
          R"({"spec": {"config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": [1]}}]}})"),
      at + ".config[0].opaque.parameters: must be a JSON object, got [1]");
  EXPECT_EQ(error(R"({"spec": {"config": [{}]}})"), at + ".config[0].opaque: required");
  EXPECT_EQ(error(R"({"spec": null})"), at + ": required");
}

TEST(DecodeDeviceClass, OpaqueParametersAreBounded) {
  const std::string at = "DeviceClass \"gpu.nvidia.com\": spec.config[0].opaque.parameters";
  json o = json::parse(kGpuClass);
  json deep = json::object();
  for (int i = 0; i < 100; ++i) deep = json{{"a", deep}};
  o["spec"]["config"][0]["opaque"]["parameters"] = deep;
  EXPECT_EQ(Error(DecodeDeviceClass, o), at + ": nested deeper than 64 levels");
  o["spec"]["config"][0]["opaque"]["parameters"] = {{"blob", std::string(10300, 'x')}};
  EXPECT_EQ(Error(DecodeDeviceClass, o), at + ": 10311 bytes as JSON, at most 10240");
}

TEST(DecodeDeviceTaintRule, SelectorAndTaint) {
  json o = json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
      "metadata": {"name": "drain-gpu-0"},
      "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-0"},
               "taint": {"key": "maintenance", "value": "planned", "effect": "NoExecute"}}})");
  dra::DeviceTaintRule r = Must(DecodeDeviceTaintRule(o));
  EXPECT_EQ(r.name, "drain-gpu-0");
  EXPECT_EQ(r.driver, "gpu.nvidia.com");
  EXPECT_EQ(r.pool, "node-1");
  EXPECT_EQ(r.device, "gpu-0");
  EXPECT_EQ(r.taint, (dra::DeviceTaint{"maintenance", "planned", dra::DeviceTaintEffect::kNoExecute,
                                       std::nullopt}));
  o["spec"].erase("deviceSelector");
  r = Must(DecodeDeviceTaintRule(o));
  EXPECT_FALSE(r.driver || r.pool || r.device);
  o["spec"].erase("taint");
  EXPECT_EQ(Error(DecodeDeviceTaintRule, o),
            "DeviceTaintRule \"drain-gpu-0\": spec.taint: required");
}

// ---------------------------------------------------------------------------------------
// ResourceClaims and templates

TEST(DecodeResourceClaim, FirstAvailableConstraintsAndConfig) {
  dra::ResourceClaim c = Must(DecodeResourceClaim(json::parse(kClaim)));
  EXPECT_EQ(c.name_space, "ml");
  EXPECT_EQ(c.name, "train-gpus");
  EXPECT_EQ(c.uid, "c-1");
  EXPECT_EQ(c.resource_version, 42);
  EXPECT_FALSE(c.deleting);
  EXPECT_FALSE(c.has_finalizer);
  EXPECT_FALSE(c.allocation.has_value());
  EXPECT_TRUE(c.reserved_for.empty());
  ASSERT_EQ(c.spec.requests.size(), 2u);
  const dra::DeviceRequest& gpus = c.spec.requests[0];
  EXPECT_EQ(gpus.name, "gpus");
  EXPECT_FALSE(gpus.exactly.has_value());
  ASSERT_EQ(gpus.first_available.size(), 2u);
  const dra::DeviceSubRequest& h100 = gpus.first_available[0];
  EXPECT_EQ(h100.name, "h100");
  EXPECT_EQ(h100.spec.device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(h100.spec.allocation_mode, dra::AllocationMode::kExactCount);
  EXPECT_EQ(h100.spec.count, 2);
  EXPECT_EQ(h100.spec.selectors,
            std::vector<std::string>{
                "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"});
  const dra::DeviceSubRequest& any = gpus.first_available[1];
  EXPECT_EQ(any.spec.count, 4);
  ASSERT_EQ(any.spec.tolerations.size(), 2u);
  EXPECT_EQ(any.spec.tolerations[0],
            (dra::DeviceToleration{"maintenance", dra::DeviceToleration::Op::kExists, "",
                                   dra::DeviceTaintEffect::kNoSchedule, std::nullopt}));
  // No operator: Equal, the API server's default; no effect: every effect.
  EXPECT_EQ(any.spec.tolerations[1],
            (dra::DeviceToleration{"flaky", dra::DeviceToleration::Op::kEqual, "yes", std::nullopt,
                                   300}));
  const dra::DeviceRequest& nic = c.spec.requests[1];
  ASSERT_TRUE(nic.exactly.has_value());
  EXPECT_TRUE(nic.first_available.empty());
  EXPECT_EQ(nic.exactly->allocation_mode, dra::AllocationMode::kAll);
  EXPECT_FALSE(nic.exactly->admin_access);
  EXPECT_EQ(nic.exactly->capacity_requests,
            (std::map<dra::QualifiedName, Milli>{{"bandwidth", 10'000'000'000'000}}));
  ASSERT_EQ(c.spec.constraints.size(), 2u);
  EXPECT_EQ(
      c.spec.constraints[0],
      (dra::DeviceConstraint{{"gpus", "nic"}, "resource.kubernetes.io/pcieRoot", std::nullopt}));
  EXPECT_EQ(c.spec.constraints[1],
            (dra::DeviceConstraint{{"gpus/h100"}, std::nullopt, "gpu.nvidia.com/uuid"}));
  ASSERT_EQ(c.spec.config.size(), 1u);
  EXPECT_EQ(c.spec.config[0],
            (dra::ClaimConfig{{"gpus"},
                              "gpu.nvidia.com",
                              R"({"kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}})"}));
}

TEST(DecodeResourceClaim, DefaultsOfExactly) {
  json o = json::parse(kClaim);
  o["spec"]["devices"]["requests"][1]["exactly"] = {{"deviceClassName", "gpu.nvidia.com"}};
  dra::DeviceRequestSpec spec = *Must(DecodeResourceClaim(o)).spec.requests[1].exactly;
  EXPECT_EQ(spec.allocation_mode, dra::AllocationMode::kExactCount);
  EXPECT_EQ(spec.count, 1);
  EXPECT_FALSE(spec.admin_access);
  EXPECT_TRUE(spec.selectors.empty() && spec.tolerations.empty() && spec.capacity_requests.empty());
  o["spec"]["devices"]["requests"][1]["exactly"]["adminAccess"] = true;
  EXPECT_TRUE(Must(DecodeResourceClaim(o)).spec.requests[1].exactly->admin_access);
}

TEST(DecodeResourceClaim, AllocatedAndReserved) {
  dra::ResourceClaim c = Must(DecodeResourceClaim(json::parse(kAllocatedClaim)));
  EXPECT_EQ(c.resource_version, 77);
  EXPECT_TRUE(c.deleting);
  EXPECT_TRUE(c.has_finalizer);
  ASSERT_TRUE(c.allocation.has_value());
  ASSERT_EQ(c.allocation->results.size(), 1u);
  const dra::AllocationResult& r = c.allocation->results[0];
  EXPECT_EQ(r.request, "gpu");
  EXPECT_EQ(r.driver, "gpu.nvidia.com");
  EXPECT_EQ(r.pool, "node-1");
  EXPECT_EQ(r.device, "gpu-0");
  EXPECT_FALSE(r.admin_access);
  EXPECT_EQ(r.share_id, "0b5e7b3c-1f2a-4c3d-9e8f-a1b2c3d4e5f6");
  // Qualified with the result's driver, as the device's capacity is.
  EXPECT_EQ(r.consumed_capacity,
            (std::map<dra::QualifiedName, Milli>{{"gpu.nvidia.com/memory", 40 * kMilliGi}}));
  EXPECT_EQ(r.binding_conditions, std::vector<std::string>{"dra.example.com/attached"});
  EXPECT_EQ(r.binding_failure_conditions, std::vector<std::string>{"dra.example.com/failed"});
  ASSERT_TRUE(c.allocation->node_selector.has_value());
  ASSERT_EQ(c.allocation->node_selector->size(), 1u);
  EXPECT_EQ((*c.allocation->node_selector)[0],
            (std::vector<SelectorRequirement>{
                {std::string(kNodeNameField), SelectorRequirement::Op::kIn, {"node-1"}}}));
  EXPECT_EQ(c.allocation->allocation_timestamp, 1767323045);
  ASSERT_EQ(c.reserved_for.size(), 2u);
  EXPECT_EQ(c.reserved_for[0], (dra::ConsumerReference{"", "pods", "train-0", "p-0"}));
  EXPECT_EQ(c.reserved_for[1], (dra::ConsumerReference{"", "pods", "train-1", "p-1"}));
}

struct ClaimCase {
  std::string name;
  const char* base;
  std::string patch;  // a JSON merge patch
  std::string error;
};

TEST(DecodeResourceClaim, Errors) {
  const std::string at = "ResourceClaim \"ml/train-gpus\": spec.devices";
  const std::string st = "ResourceClaim \"ml/shared-gpu\": status";
  const std::vector<ClaimCase> cases = {
      {"no namespace", kClaim, R"({"metadata": {"namespace": null}})",
       "ResourceClaim \"train-gpus\": metadata.namespace: required"},
      {"resource version", kClaim, R"({"metadata": {"resourceVersion": "abc"}})",
       "ResourceClaim \"ml/train-gpus\": metadata.resourceVersion: expected a decimal number, "
       "got \"abc\""},
      {"no devices", kClaim, R"({"spec": {"devices": null}})", at + ": required"},
      {"both", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c"}, "firstAvailable": [{"name": "b", "deviceClassName": "c"}]}]}}})",
       at + ".requests[0]: exactly one of exactly, firstAvailable is required, got both"},
      {"neither", kClaim, R"({"spec": {"devices": {"requests": [{"name": "a"}]}}})",
       at + ".requests[0]: exactly one of exactly, firstAvailable is required"},
      {"request name", kClaim, R"({"spec": {"devices": {"requests": [{"exactly": {}}]}}})",
       at + ".requests[0].name: required"},
      {"class", kClaim, R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {}}]}}})",
       at + ".requests[0].exactly.deviceClassName: required"},
      {"subrequest class", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "firstAvailable": [{"name": "b"}]}]}}})",
       at + ".requests[0].firstAvailable[0].deviceClassName: required"},
      {"negative count", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "count": -1}}]}}})",
       at + ".requests[0].exactly.count: -1 must be greater than zero"},
      {"count with All", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "All", "count": 2}}]}}})",
       at + ".requests[0].exactly.count: must not be set with allocationMode All"},
      {"mode", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "Some"}}]}}})",
       at + ".requests[0].exactly.allocationMode: \"Some\" is not ExactCount or All"},
      {"duplicate request", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c"}}, {"name": "a", "exactly": {"deviceClassName": "c"}}]}}})",
       at + ".requests[1].name: \"a\" is given twice"},
      {"operator", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "tolerations": [{"key": "k", "operator": "Gt"}]}}]}}})",
       at + ".requests[0].exactly.tolerations[0].operator: \"Gt\" is not Equal or Exists"},
      {"exists with value", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}}]}}})",
       at + ".requests[0].exactly.tolerations[0].value: must be empty for operator Exists"},
      {"constraint request", kClaim,
       R"({"spec": {"devices": {"constraints": [{"requests": ["gpus/a100"], "matchAttribute": "a.b/c"}]}}})",
       at + ".constraints[0].requests[0]: \"gpus/a100\" is not a request of the claim (a "
            "request's name, or a request's and a subrequest's separated by '/')"},
      {"constraint kind", kClaim,
       R"({"spec": {"devices": {"constraints": [{"requests": ["gpus"]}]}}})",
       at + ".constraints[0]: exactly one of matchAttribute, distinctAttribute is required"},
      {"constraint both", kClaim,
       R"({"spec": {"devices": {"constraints": [{"matchAttribute": "a.b/c", "distinctAttribute": "a.b/c"}]}}})",
       at + ".constraints[0]: exactly one of matchAttribute, distinctAttribute is required, got "
            "both"},
      {"unqualified", kClaim,
       R"({"spec": {"devices": {"constraints": [{"matchAttribute": "uuid"}]}}})",
       at + ".constraints[0].matchAttribute: \"uuid\" is not fully qualified (a domain and a name "
            "separated by '/')"},
      {"config driver", kClaim,
       R"({"spec": {"devices": {"config": [{"opaque": {"parameters": {}}}]}}})",
       at + ".config[0].opaque.driver: required"},
      {"config request", kClaim,
       R"({"spec": {"devices": {"config": [{"requests": ["x"], "opaque": {"driver": "d", "parameters": {}}}]}}})",
       at + ".config[0].requests[0]: \"x\" is not a request of the claim (a request's name, or a "
            "request's and a subrequest's separated by '/')"},
      {"capacity request", kClaim,
       R"({"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "capacity": {"requests": {"memory": "lots"}}}}]}}})",
       at + ".requests[0].exactly.capacity.requests[\"memory\"]: invalid quantity \"lots\": "},
      {"reserved without allocation", kAllocatedClaim, R"({"status": {"allocation": null}})",
       st + ".reservedFor: set while the claim is not allocated"},
      {"reserved uid", kAllocatedClaim,
       R"({"status": {"reservedFor": [{"resource": "pods", "name": "a"}]}})",
       st + ".reservedFor[0].uid: required"},
      {"result request", kAllocatedClaim,
       R"({"status": {"allocation": {"devices": {"results": [{"request": "cpu", "driver": "d", "pool": "p", "device": "x"}]}}}})",
       st + ".allocation.devices.results[0].request: \"cpu\" is not a request of the claim"},
      {"result device", kAllocatedClaim,
       R"({"status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p"}]}}}})",
       st + ".allocation.devices.results[0].device: required"},
      {"share id", kAllocatedClaim,
       R"({"status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "x", "shareID": "ABC"}]}}}})",
       st + ".allocation.devices.results[0].shareID: \"ABC\" is not a lowercase UUID"},
      {"allocation time", kAllocatedClaim,
       R"({"status": {"allocation": {"allocationTimestamp": "yesterday"}}})",
       st + ".allocation.allocationTimestamp: "},
      {"allocation selector", kAllocatedClaim,
       R"({"status": {"allocation": {"nodeSelector": {"nodeSelectorTerms": null}}}})",
       st + ".allocation.nodeSelector.nodeSelectorTerms: must have at least one node selector "
            "term"},
  };
  for (const ClaimCase& c : cases) {
    json o = json::parse(c.base);
    o.merge_patch(json::parse(c.patch));
    const std::string error = ClaimError(o);
    if (c.error.back() == ' ') {
      // The rest is ParseQuantity's or ParseRfc3339's own message.
      EXPECT_EQ(error.substr(0, c.error.size()), c.error) << c.name;
      EXPECT_GT(error.size(), c.error.size()) << c.name;
    } else {
      EXPECT_EQ(error, c.error) << c.name;
    }
  }
}

TEST(DecodeResourceClaim, Limits) {
  json o = json::parse(kAllocatedClaim);
  json reserved = json::array();
  for (int i = 0; i < 257; ++i) {
    reserved.push_back({{"resource", "pods"}, {"name", "p"}, {"uid", "u" + std::to_string(i)}});
  }
  o["status"]["reservedFor"] = reserved;
  EXPECT_EQ(ClaimError(o),
            "ResourceClaim \"ml/shared-gpu\": status.reservedFor: 257 entries, at most 256 "
            "allowed");
  reserved.erase(reserved.begin() + 256);
  reserved[1]["uid"] = "u0";
  o["status"]["reservedFor"] = reserved;
  EXPECT_EQ(ClaimError(o),
            "ResourceClaim \"ml/shared-gpu\": status.reservedFor[1].uid: \"u0\" is given twice");
  reserved[1]["uid"] = "u1";
  o["status"]["reservedFor"] = reserved;
  EXPECT_EQ(Must(DecodeResourceClaim(o)).reserved_for.size(), 256u);

  o = json::parse(kClaim);
  json requests = json::array();
  for (int i = 0; i < 33; ++i) {
    requests.push_back(
        {{"name", "r" + std::to_string(i)}, {"exactly", {{"deviceClassName", "c"}}}});
  }
  o["spec"]["devices"] = {{"requests", requests}};
  EXPECT_EQ(ClaimError(o),
            "ResourceClaim \"ml/train-gpus\": spec.devices.requests: 33 entries, at most 32 "
            "allowed");
  json subrequests = json::array();
  for (int i = 0; i < 9; ++i) {
    subrequests.push_back({{"name", "s" + std::to_string(i)}, {"deviceClassName", "c"}});
  }
  o["spec"]["devices"] = {{"requests", {{{"name", "a"}, {"firstAvailable", subrequests}}}}};
  EXPECT_EQ(ClaimError(o),
            "ResourceClaim \"ml/train-gpus\": spec.devices.requests[0].firstAvailable: 9 entries, "
            "at most 8 allowed");
}

TEST(DecodeResourceClaimTemplate, SpecOfTheClaimsItMakes) {
  json o = json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
      "metadata": {"name": "one-gpu", "namespace": "ml"},
      "spec": {"metadata": {"labels": {"team": "a"}},
               "spec": {"devices": {"requests": [{"name": "gpu",
                                                  "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}})");
  dra::ResourceClaimTemplate t = Must(DecodeResourceClaimTemplate(o));
  EXPECT_EQ(t.name_space, "ml");
  EXPECT_EQ(t.name, "one-gpu");
  ASSERT_EQ(t.spec.requests.size(), 1u);
  EXPECT_EQ(t.spec.requests[0].exactly->device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(t.spec.requests[0].exactly->count, 1);
  o["spec"]["spec"]["devices"]["requests"][0]["exactly"].erase("deviceClassName");
  EXPECT_EQ(Error(DecodeResourceClaimTemplate, o),
            "ResourceClaimTemplate \"ml/one-gpu\": spec.spec.devices.requests[0].exactly."
            "deviceClassName: required");
  o["spec"].erase("spec");
  EXPECT_EQ(Error(DecodeResourceClaimTemplate, o),
            "ResourceClaimTemplate \"ml/one-gpu\": spec.spec: required");
}

// ---------------------------------------------------------------------------------------
// Pods

const char* const kPod = R"({
  "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-0", "namespace": "ml"},
  "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpus"}]}}],
           "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "one-gpu"},
                              {"name": "shared", "resourceClaimName": "shared-gpu"}]},
  "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "train-0-gpus-x7k2p"},
                                       {"name": "scratch"}]}
})";

TEST(DecodePodClaims, RefsAndStatuses) {
  json pod = json::parse(kPod);
  std::vector<dra::PodClaimRef> refs = Must(DecodePodClaimRefs(pod));
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0], (dra::PodClaimRef{"gpus", std::nullopt, "one-gpu"}));
  EXPECT_EQ(refs[1], (dra::PodClaimRef{"shared", "shared-gpu", std::nullopt}));
  std::vector<PodClaimStatus> statuses = Must(DecodePodClaimStatuses(pod));
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0], (PodClaimStatus{"gpus", "train-0-gpus-x7k2p"}));
  EXPECT_EQ(statuses[1], (PodClaimStatus{"scratch", std::nullopt}));
  pod["spec"].erase("resourceClaims");
  pod.erase("status");
  EXPECT_TRUE(Must(DecodePodClaimRefs(pod)).empty());
  EXPECT_TRUE(Must(DecodePodClaimStatuses(pod)).empty());
}

TEST(DecodePodClaims, Errors) {
  const std::string at = "pod ml/train-0: spec.resourceClaims";
  auto error = [](const std::string& patch) {
    json o = json::parse(kPod);
    o.merge_patch(json::parse(patch));
    return Error(DecodePodClaimRefs, o);
  };
  EXPECT_EQ(
      error(
          R"({"spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}]}})"),
      at + "[0]: exactly one of resourceClaimName, resourceClaimTemplateName is required, "
           "got both");
  EXPECT_EQ(error(R"({"spec": {"resourceClaims": [{"name": "a"}]}})"),
            at + "[0]: exactly one of resourceClaimName, resourceClaimTemplateName is required");
  EXPECT_EQ(error(R"({"spec": {"resourceClaims": [{"resourceClaimName": "x"}]}})"),
            at + "[0].name: required");
  EXPECT_EQ(
      error(
          R"({"spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "x"}, {"name": "a", "resourceClaimName": "y"}]}})"),
      at + "[1].name: \"a\" is given twice");
  EXPECT_EQ(error(R"({"spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "X!"}]}})"),
            at + "[0].resourceClaimName: \"X!\" is not a DNS subdomain (at most 253 lowercase "
                 "alphanumerics, '-' or '.', starting and ending alphanumeric)");
  EXPECT_EQ(error(R"({"spec": {"resourceClaims": {"name": "a"}}})"),
            at + ": expected a list, got {\"name\":\"a\"}");
  json o = json::parse(kPod);
  o["status"]["resourceClaimStatuses"][1]["name"] = "gpus";
  EXPECT_EQ(Error(DecodePodClaimStatuses, o),
            "pod ml/train-0: status.resourceClaimStatuses[1].name: \"gpus\" is given twice");
}

// Whatever the value, a decoder answers: a value, or an error with a message.
template <typename T>
bool Answered(const Result<T>& r) {
  return r.ok() || !r.status().message().empty();
}

TEST(DecodeDra, DeepValuesAreNotWrittenOut) {
  // Built by moves: copying a value this deep would recurse as deep.
  json deep = json::array();
  for (int i = 0; i < 20000; ++i) {
    json outer = json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  json o = json::parse(kWholeGpuSlice);
  o["spec"]["devices"][0]["attributes"]["x"] = std::move(deep);
  EXPECT_EQ(SliceError(o),
            "ResourceSlice \"node-1-gpu\": spec.devices[0].attributes[\"x\"]: expected an object, "
            "got array nested deeper than 16 levels");
  EXPECT_EQ(Error(DecodePodClaimRefs, o["spec"]["devices"][0]["attributes"]["x"]),
            "pod: metadata.name: required");
}

TEST(DecodeDra, AnyJsonIsAnsweredWithoutACrash) {
  const std::vector<json> values = {
      json(),
      json(5),
      json("text"),
      json::array(),
      json::object(),
      json::parse(R"({"metadata": {"name": 5}})"),
      json::parse(R"({"metadata": {"name": "a", "namespace": "b"}, "spec": [], "status": 7})"),
      json::parse(
          R"({"metadata": {"name": "a", "namespace": "b"}, "spec": {"devices": {"requests": "x"}, "driver": 1, "pool": []}})")};
  for (const json& v : values) {
    EXPECT_TRUE(Answered(DecodeDeviceClass(v))) << v.dump();
    EXPECT_FALSE(DecodeResourceSlice(v).ok()) << v.dump();
    EXPECT_FALSE(DecodeResourceClaim(v).ok()) << v.dump();
    EXPECT_FALSE(DecodeResourceClaimTemplate(v).ok()) << v.dump();
    EXPECT_FALSE(DecodeDeviceTaintRule(v).ok()) << v.dump();
    EXPECT_TRUE(Answered(DecodePodClaimRefs(v))) << v.dump();
    EXPECT_TRUE(Answered(DecodePodClaimStatuses(v))) << v.dump();
  }
}

}  // namespace
}  // namespace gantry::k8s
