// The allocator's device preference (engine/dra/preference.h, AllocateOptions::preference):
// devices are tried in its order, so the first solution is the preferred devices where they
// fit; without one, upstream's order (first that fits); devices it does not rank keep
// upstream's order; a preferred device that is taken or too small is passed over.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/dra/allocator.h"
#include "engine/dra/preference.h"

namespace gantry::dra {
namespace {

constexpr const char* kDriver = "gpu.example.com";

// No class or request here has a selector: any question is a test error.
class NoVerdicts : public SelectorVerdicts {
 public:
  Result<bool> Matches(std::string_view expression, const DeviceRef&) const override {
    return Status::Failed("unexpected selector " + std::string(expression));
  }
};

// Ranks by device name, from a table; unlisted devices rank last.
class NamedPreference : public DevicePreference {
 public:
  explicit NamedPreference(std::map<std::string, int64_t> ranks) : ranks_(std::move(ranks)) {}
  int64_t Rank(const ResourceSlice&, const Device& device) const override {
    auto it = ranks_.find(device.name);
    return it == ranks_.end() ? 1'000 : it->second;
  }

 private:
  std::map<std::string, int64_t> ranks_;
};

// Node n1's slice of `count` devices gpu-0.., each with 1000 "cores" shared by claims.
ResourceSlice Gpus(int count) {
  ResourceSlice slice;
  slice.name = "n1-gpus";
  slice.driver = kDriver;
  slice.pool.name = "n1";
  slice.pool.generation = 1;
  slice.pool.resource_slice_count = 1;
  slice.node_selection = NodeSelection{};
  slice.node_selection->node_name = "n1";
  for (int i = 0; i < count; ++i) {
    Device device;
    device.name = "gpu-" + std::to_string(i);
    DeviceCapacity cores;
    cores.value = 1000 * kMilliPerUnit;
    device.capacity[std::string(kDriver) + "/cores"] = cores;
    device.allow_multiple_allocations = true;
    slice.devices.push_back(std::move(device));
  }
  return slice;
}

ResourceClaim Claim(const std::string& name, int64_t count, Milli cores = 0) {
  DeviceRequestSpec spec;
  spec.device_class_name = "gpu";
  spec.count = count;
  if (cores > 0) spec.capacity_requests[std::string(kDriver) + "/cores"] = cores * kMilliPerUnit;
  DeviceRequest request;
  request.name = "gpu";
  request.exactly = spec;
  ResourceClaim claim;
  claim.name_space = "ml";
  claim.name = name;
  claim.uid = "uid-" + name;
  claim.spec.requests.push_back(request);
  return claim;
}

class DraPreferenceTest : public ::testing::Test {
 protected:
  // The devices the claim gets, "gpu-a,gpu-b", or "none".
  std::string Pick(const ResourceClaim& claim, const DevicePreference* preference) {
    DeviceClass gpu_class;
    gpu_class.name = "gpu";
    const Inventory inventory({Gpus(4)}, {gpu_class});
    const Labels labels;
    AllocateOptions options;
    options.preference = preference;
    const NoVerdicts verdicts;
    const ResourceClaim* claims[] = {&claim};
    auto result =
        Allocate(inventory, NodeRef{"n1", labels}, std::span<const ResourceClaim* const>(claims),
                 allocated_, verdicts, options);
    EXPECT_TRUE(result.ok()) << result.status().message();
    if (!result.ok() || !result->has_value()) return "none";
    std::string out;
    for (const AllocationResult& r : (**result)[0].results) {
      out += (out.empty() ? "" : ",") + r.device;
    }
    return out;
  }
  // A claim of someone else holding `cores` of `device`.
  void Hold(const std::string& device, Milli cores) {
    Allocation allocation;
    AllocationResult result;
    result.request = "gpu";
    result.driver = kDriver;
    result.pool = "n1";
    result.device = device;
    result.share_id = "share-" + device;
    result.consumed_capacity[std::string(kDriver) + "/cores"] = cores * kMilliPerUnit;
    allocation.results.push_back(result);
    allocated_.Add(allocation);
  }

  AllocatedState allocated_;
};

TEST_F(DraPreferenceTest, WithoutAPreferenceTheFirstDevicesThatFit) {
  Hold("gpu-2", 600);
  EXPECT_EQ(Pick(Claim("share", 1, 400), nullptr), "gpu-0");
  EXPECT_EQ(Pick(Claim("two", 2), nullptr), "gpu-0,gpu-1");
}

// The fragmentation-aware choice for a 400 share is gpu-2, which 600 already fill: first
// fit takes a whole GPU (gpu-0) instead.
TEST_F(DraPreferenceTest, ThePreferredDeviceWhenItFits) {
  Hold("gpu-2", 600);
  const NamedPreference fill_gpu2({{"gpu-2", 0}});
  EXPECT_EQ(Pick(Claim("share", 1, 400), &fill_gpu2), "gpu-2");
}

TEST_F(DraPreferenceTest, SeveralDevicesInThePreferredOrder) {
  const NamedPreference last_two({{"gpu-3", 0}, {"gpu-1", 1}});
  EXPECT_EQ(Pick(Claim("two", 2), &last_two), "gpu-3,gpu-1");
  // A third device comes from the unranked ones, in upstream's order.
  EXPECT_EQ(Pick(Claim("three", 3), &last_two), "gpu-3,gpu-1,gpu-0");
}

// gpu-2 has 400 left: a 500 share does not fit there, a whole GPU neither.
TEST_F(DraPreferenceTest, APreferredDeviceWithoutRoomIsPassedOver) {
  Hold("gpu-2", 600);
  const NamedPreference gpu2_then_3({{"gpu-2", 0}, {"gpu-3", 1}});
  EXPECT_EQ(Pick(Claim("share", 1, 500), &gpu2_then_3), "gpu-3");
  EXPECT_EQ(Pick(Claim("whole", 1), &gpu2_then_3), "gpu-3");
}

}  // namespace
}  // namespace gantry::dra
