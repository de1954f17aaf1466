// ResourceClaims, ResourceClaimTemplates and a pod's claims (resource.k8s.io/v1, core/v1)
// decoded into model/dra.h. Expected values come from the fixtures (dra_fixtures.h) and
// upstream's types, defaults and validation, not from the decoder.
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
  // ... and remembered as written bare ("memory"), to be written back so.
  EXPECT_EQ(r.consumed_bare, std::set<dra::QualifiedName>{"gpu.nvidia.com/memory"});
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

}  // namespace
}  // namespace gantry::k8s
