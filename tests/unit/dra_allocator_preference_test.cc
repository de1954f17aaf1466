// The allocator's device preference (engine/dra/preference.h, AllocateOptions::preference):
// devices are tried in its order, so the first solution is the preferred devices where they
// fit; without one, upstream's order (first that fits); devices it does not rank keep
// upstream's order; a preferred device that is taken or too small is passed over. And best
// fit among shared devices (AllocateOptions::pack_shared).
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
  std::string Pick(const ResourceClaim& claim, const DevicePreference* preference,
                   bool pack_shared = false, const std::vector<ResourceSlice>& slices = {Gpus(4)}) {
    DeviceClass gpu_class;
    gpu_class.name = "gpu";
    const Inventory inventory(slices, {gpu_class});
    const Labels labels;
    AllocateOptions options;
    options.preference = preference;
    options.pack_shared = pack_shared;
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

  // Someone else's claim holding `device` whole.
  void HoldWhole(const std::string& device) {
    Allocation allocation;
    AllocationResult result;
    result.request = "gpu";
    result.driver = kDriver;
    result.pool = "n1";
    result.device = device;
    allocation.results.push_back(result);
    allocated_.Add(allocation);
  }

  AllocatedState allocated_;
};

// Two GPUs of 4 memory slices, each published as four 1-slice partitions that consume
// the GPU's counter set (gpu-G-sS); the counter sets in a slice of their own, as the API
// has them.
std::vector<ResourceSlice> PartitionedGpus() {
  ResourceSlice counters = Gpus(0);
  counters.name = "n1-counters";
  counters.pool.resource_slice_count = 2;
  ResourceSlice devices = Gpus(0);
  devices.pool.resource_slice_count = 2;
  for (int g = 0; g < 2; ++g) {
    const std::string gpu = "gpu-" + std::to_string(g);
    CounterSet set;
    set.name = gpu + "-counters";
    set.counters["memory-slices"] = 4 * kMilliPerUnit;
    counters.shared_counters.push_back(set);
    for (int s = 0; s < 4; ++s) {
      Device device;
      device.name = gpu + "-s" + std::to_string(s);
      DeviceCounterConsumption consumption;
      consumption.counter_set = set.name;
      consumption.counters["memory-slices"] = kMilliPerUnit;
      device.consumes_counters.push_back(consumption);
      devices.devices.push_back(std::move(device));
    }
  }
  return {counters, devices};
}

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

// Best fit (AllocateOptions::pack_shared): a share goes to the fullest device it fits,
// where first fit starts a free GPU; a whole GPU still takes a free one.
TEST_F(DraPreferenceTest, PackingSharesTheFullestDeviceThatFits) {
  Hold("gpu-1", 200);
  Hold("gpu-2", 600);
  EXPECT_EQ(Pick(Claim("share", 1, 400), nullptr, /*pack_shared=*/true), "gpu-2");
  EXPECT_EQ(Pick(Claim("share", 1, 400), nullptr, /*pack_shared=*/false), "gpu-0");
  // 500 does not fit gpu-2 (400 left): gpu-1, with 800 left, before the free ones.
  EXPECT_EQ(Pick(Claim("share", 1, 500), nullptr, /*pack_shared=*/true), "gpu-1");
  EXPECT_EQ(Pick(Claim("whole", 1), nullptr, /*pack_shared=*/true), "gpu-0");
}

// A partition goes to the GPU with fewest slices left (gpu-1: 1 of 4) rather than the
// first free partition in upstream's order (gpu-0-s1), keeping gpu-0 the emptier.
TEST_F(DraPreferenceTest, PackingFillsThePartlyPartitionedGpuFirst) {
  HoldWhole("gpu-0-s0");
  HoldWhole("gpu-1-s0");
  HoldWhole("gpu-1-s1");
  HoldWhole("gpu-1-s2");
  const std::vector<ResourceSlice> slices = PartitionedGpus();
  EXPECT_EQ(Pick(Claim("one", 1), nullptr, /*pack_shared=*/true, slices), "gpu-1-s3");
  EXPECT_EQ(Pick(Claim("one", 1), nullptr, /*pack_shared=*/false, slices), "gpu-0-s1");
  // Two partitions: gpu-1's last, then gpu-0's first free one.
  EXPECT_EQ(Pick(Claim("two", 2), nullptr, /*pack_shared=*/true, slices), "gpu-1-s3,gpu-0-s1");
  // The preference still comes first.
  const NamedPreference gpu0({{"gpu-0-s3", 0}});
  EXPECT_EQ(Pick(Claim("one", 1), &gpu0, /*pack_shared=*/true, slices), "gpu-0-s3");
}

}  // namespace
}  // namespace gantry::dra
