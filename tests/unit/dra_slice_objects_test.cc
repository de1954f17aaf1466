// ResourceSlices, DeviceClasses and DeviceTaintRules (resource.k8s.io/v1) decoded into
// model/dra.h, and hostile input. Expected values come from the fixtures (dra_fixtures.h)
// and upstream's types and validation, not from the decoder.
#include "k8s/dra_objects.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/labels.h"
#include "tests/unit/dra_fixtures.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using namespace dra_test;

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
