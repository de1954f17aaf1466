// DRA in a session, for the engine's unit tests (device_reservations_test.cc,
// dra_extended_resources_test.cc): nodes' GPUs published by one driver, a class of them,
// claims in namespace ml, and a session with those inputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/session.h"
#include "model/dra.h"
#include "model/dra_inventory.h"
#include "model/dra_verdicts.h"
#include "tests/unit/test_util.h"

namespace gantry::engine_dra {

inline constexpr const char* kDriver = "gpu.example.com";
inline constexpr const char* kClassSelector = R"(device.driver == "gpu.example.com")";

// The class's one selector matches every device of kDriver; any other expression is a CEL
// runtime error, as upstream's for a missing attribute.
class DriverVerdicts : public dra::SelectorVerdicts {
 public:
  Result<bool> Matches(std::string_view expression, const dra::DeviceRef& device) const override {
    if (expression == kClassSelector) return device.driver == kDriver;
    return Status::Failed("no such key: " + std::string(expression));
  }
};

// The cluster's DRA objects and the snapshot inputs pointing at them.
struct Devices {
  std::vector<dra::DeviceClass> classes = {dra::DeviceClass{"gpu", {kClassSelector}, {}, {}}};
  std::vector<dra::ResourceSlice> slices;
  dra::ClaimTable claims;
  dra::Inventory inventory;
  DriverVerdicts verdicts;
  // DeviceInputs::align_by (empty: upstream's order).
  std::vector<dra::QualifiedName> align_by;

  void AddNodeGpus(const std::string& node, int count) {
    dra::ResourceSlice slice;
    slice.name = node + "-gpus";
    slice.driver = kDriver;
    slice.pool = {node, 1, 1};
    slice.node_selection = dra::NodeSelection{};
    slice.node_selection->node_name = node;
    for (int i = 0; i < count; ++i) {
      dra::Device device;
      device.name = "gpu-" + std::to_string(i);
      slice.devices.push_back(std::move(device));
    }
    slices.push_back(std::move(slice));
  }
  // A claim in namespace "ml" for `count` devices of the class ("" selectors: the class's).
  std::string AddClaim(const std::string& name, int64_t count = 1,
                       std::vector<std::string> selectors = {}) {
    dra::ResourceClaim claim;
    claim.name_space = "ml";
    claim.name = name;
    claim.uid = "uid-" + name;
    dra::DeviceRequest request;
    request.name = "gpu";
    request.exactly = dra::DeviceRequestSpec{};
    request.exactly->device_class_name = "gpu";
    request.exactly->count = count;
    request.exactly->selectors = std::move(selectors);
    claim.spec.requests.push_back(std::move(request));
    const std::string key = dra::ClaimKey("ml", name);
    claims[key] = std::move(claim);
    return key;
  }
  // Marks the claim allocated on `node`'s `device`, reserved for `reserved` pods.
  void Allocate(const std::string& key, const std::string& node, const std::string& device,
                int reserved = 1) {
    dra::Allocation allocation;
    dra::AllocationResult result;
    result.request = "gpu";
    result.driver = kDriver;
    result.pool = node;
    result.device = device;
    allocation.results.push_back(std::move(result));
    allocation.node_selector.emplace();
    allocation.node_selector->push_back(
        {SelectorRequirement{std::string(kNodeNameField), SelectorRequirement::Op::kIn, {node}}});
    dra::ResourceClaim& claim = claims.at(key);
    claim.allocation = std::move(allocation);
    claim.reserved_for.clear();
    for (int i = 0; i < reserved; ++i) {
      claim.reserved_for.push_back(
          dra::ConsumerReference{"", "pods", "p" + std::to_string(i), "u" + std::to_string(i)});
    }
  }
  DeviceInputs Inputs() {
    inventory = dra::Inventory(slices, classes);
    DeviceInputs inputs{&inventory, &claims, &verdicts, nullptr};
    inputs.align_by = &align_by;
    return inputs;
  }
};

inline Decisions RunWithDevices(const ClusterState& c, Devices& devices,
                                const SchedulerConfig& config = SchedulerConfig::Default()) {
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c);
  const DeviceInputs inputs = devices.Inputs();
  snapshot.set_devices(inputs);
  return Session(snapshot, policy).Run();
}

}  // namespace gantry::engine_dra
