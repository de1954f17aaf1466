// A claim's status.allocation as the daemon writes it (k8s::EncodeAllocation): the JSON
// the API takes, field by field as written here from resource.k8s.io/v1's types, and read
// back by the decoder into the same value.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "k8s/dra_objects.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

// A claim with requests "gpu" and "nic" (firstAvailable "any"), for results to name.
json ClaimWith(const json& allocation) {
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "c"}, {"namespace", "ml"}, {"uid", "u-c"}}},
      {"spec",
       {{"devices",
         {{"requests",
           {{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.example.com"}}}},
            {{"name", "nic"},
             {"firstAvailable", {{{"name", "any"}, {"deviceClassName", "nic.example.com"}}}}}}}}}}},
      {"status", {{"allocation", allocation}}}};
}

// Every field set; a term's label requirements before its node name one, the order a
// node selector is read in (matchExpressions, then matchFields).
dra::Allocation FullAllocation() {
  dra::Allocation a;
  dra::AllocationResult gpu;
  gpu.request = "gpu";
  gpu.driver = "gpu.example.com";
  gpu.pool = "node-1";
  gpu.device = "gpu-0";
  gpu.admin_access = true;
  gpu.tolerations = {{"maintenance", dra::DeviceToleration::Op::kExists, "",
                      dra::DeviceTaintEffect::kNoExecute, 60},
                     {"flaky", dra::DeviceToleration::Op::kEqual, "yes", std::nullopt, {}}};
  gpu.binding_conditions = {"gpu.example.com/attached"};
  gpu.binding_failure_conditions = {"gpu.example.com/failed"};
  a.results.push_back(gpu);
  dra::AllocationResult nic;
  nic.request = "nic/any";
  nic.driver = "nic.example.com";
  nic.pool = "rack/a";
  nic.device = "eth-1";
  nic.share_id = "0b5e7b3c-1f2a-4c3d-9e8f-a1b2c3d4e5f6";
  nic.consumed_capacity = {{"nic.example.com/bandwidth", 10'000'000'000'000}};
  a.results.push_back(nic);
  a.config = {{true, {}, "gpu.example.com", R"({"kind":"GpuConfig"})"},
              {false, {"nic/any"}, "nic.example.com", R"({"mtu":9000})"}};
  a.node_selector = std::vector<std::vector<SelectorRequirement>>{
      {{"zone", SelectorRequirement::Op::kNotIn, {"z1", "z2"}},
       {std::string(kNodeNameField), SelectorRequirement::Op::kIn, {"node-1"}}}};
  a.allocation_timestamp = 1767323045;  // 2026-01-02T03:04:05Z
  return a;
}

TEST(EncodeAllocation, WritesTheApiFields) {
  const json out = EncodeAllocation(FullAllocation());
  const json& gpu = out["devices"]["results"][0];
  EXPECT_EQ(gpu["request"], "gpu");
  EXPECT_EQ(gpu["driver"], "gpu.example.com");
  EXPECT_EQ(gpu["pool"], "node-1");
  EXPECT_EQ(gpu["device"], "gpu-0");
  EXPECT_EQ(gpu["adminAccess"], true);
  EXPECT_EQ(gpu["tolerations"][0],
            json::parse(R"({"key": "maintenance", "operator": "Exists", "effect": "NoExecute",
                            "tolerationSeconds": 60})"));
  EXPECT_EQ(gpu["tolerations"][1],
            json::parse(R"({"key": "flaky", "operator": "Equal", "value": "yes"})"));
  EXPECT_EQ(gpu["bindingConditions"], json::parse(R"(["gpu.example.com/attached"])"));
  EXPECT_EQ(gpu["bindingFailureConditions"], json::parse(R"(["gpu.example.com/failed"])"));
  const json& nic = out["devices"]["results"][1];
  EXPECT_EQ(nic["request"], "nic/any");
  EXPECT_EQ(nic["shareID"], "0b5e7b3c-1f2a-4c3d-9e8f-a1b2c3d4e5f6");
  EXPECT_EQ(nic["consumedCapacity"],
            json::parse(R"({"nic.example.com/bandwidth": "10000000000"})"));
  EXPECT_FALSE(nic.contains("adminAccess"));
  EXPECT_FALSE(nic.contains("tolerations"));
  EXPECT_EQ(out["devices"]["config"], json::parse(R"([
      {"source": "FromClass", "opaque": {"driver": "gpu.example.com",
                                         "parameters": {"kind": "GpuConfig"}}},
      {"source": "FromClaim", "requests": ["nic/any"],
       "opaque": {"driver": "nic.example.com", "parameters": {"mtu": 9000}}}])"));
  EXPECT_EQ(out["nodeSelector"], json::parse(R"({"nodeSelectorTerms": [{
      "matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z1", "z2"]}],
      "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]})"));
  EXPECT_EQ(out["allocationTimestamp"], "2026-01-02T03:04:05Z");
}

// A capacity its device named without the domain is written so (kube-scheduler writes
// {"memory": ...} for a device's "memory"); a qualified one stays qualified.
TEST(EncodeAllocation, WritesBareCapacityNamesBare) {
  dra::Allocation a;
  dra::AllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.example.com";
  r.pool = "node-1";
  r.device = "gpu-0";
  r.share_id = "0b5e7b3c-1f2a-4c3d-9e8f-a1b2c3d4e5f6";
  r.consumed_capacity = {{"gpu.example.com/memory", (Milli{1} << 30) * kMilliPerUnit},
                         {"gpu.example.com/cores", 8000}};
  r.consumed_bare = {"gpu.example.com/memory"};
  a.results.push_back(r);
  EXPECT_EQ(EncodeAllocation(a)["devices"]["results"][0]["consumedCapacity"],
            json::parse(R"({"memory": "1073741824", "gpu.example.com/cores": "8"})"));
}

TEST(EncodeAllocation, ReadsBackAsWritten) {
  const dra::Allocation a = FullAllocation();
  const dra::ResourceClaim claim = Must(DecodeResourceClaim(ClaimWith(EncodeAllocation(a))));
  ASSERT_TRUE(claim.allocation.has_value());
  EXPECT_EQ(*claim.allocation, a);
}

TEST(EncodeAllocation, AMinimalAllocationHasOnlyItsResults) {
  dra::Allocation a;
  dra::AllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.example.com";
  r.pool = "node-1";
  r.device = "gpu-1";
  a.results.push_back(r);
  const json out = EncodeAllocation(a);
  EXPECT_EQ(out, json::parse(R"({"devices": {"results": [{"request": "gpu",
      "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"}]}})"));
  const dra::ResourceClaim claim = Must(DecodeResourceClaim(ClaimWith(out)));
  EXPECT_EQ(claim.allocation, a);
}

// What the API server wrote (a claim as read) is written again the same way.
TEST(EncodeAllocation, AnAllocationReadIsWrittenAsRead) {
  const json written = json::parse(R"({
      "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1",
                               "device": "gpu-0"}],
                  "config": [{"source": "FromClaim", "requests": ["gpu"],
                              "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
          {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
      "allocationTimestamp": "2026-01-02T03:04:05Z"})");
  const dra::ResourceClaim claim = Must(DecodeResourceClaim(ClaimWith(written)));
  ASSERT_TRUE(claim.allocation.has_value());
  EXPECT_EQ(EncodeAllocation(*claim.allocation), written);
}

}  // namespace
}  // namespace gantry::k8s
