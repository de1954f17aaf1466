// One Allocate of the DRA structured allocator (src/engine/dra/allocator.h) on one node:
// what kube-scheduler's Filter pays per node for a pod's claims, CEL left out (the
// verdicts come from a constant table; src/dra/ caches real ones per device).
//   WholeGpus:       8 GPUs in one slice, 1 claim for 1 GPU (scheduler_perf's
//                    SchedulingWithResourceClaimTemplate shape), with 0 or 7 in use.
//   MigPartitions:   one partitionable GPU (NVIDIA's MIG shape: a counter set of 7
//                    compute slices and 80Gi; 7 1g, 3 2g, 2 3g, 1 4g, 1 7g partitions),
//                    1 claim for a 3g partition, with 0 or 2 partitions in use.
//   dra_allocator_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine/dra/allocator.h"

namespace gantry::dra {
namespace {

constexpr const char* kDriver = "gpu.nvidia.com";
constexpr const char* kClassSelector = R"(device.driver == "gpu.nvidia.com")";
constexpr const char* kProfileSelector =
    R"(device.attributes["gpu.nvidia.com"].profile == "3g.40gb")";

class ConstantVerdicts : public SelectorVerdicts {
 public:
  Result<bool> Matches(std::string_view expression, const DeviceRef& device) const override {
    if (expression == kProfileSelector) {
      auto it = device.device.attributes.find("gpu.nvidia.com/profile");
      return it != device.device.attributes.end() && std::get<std::string>(it->second) == "3g.40gb";
    }
    return true;
  }
};

ResourceSlice NodeSlice(std::vector<Device> devices) {
  ResourceSlice slice;
  slice.name = "node-1-gpu.nvidia.com";
  slice.driver = kDriver;
  slice.pool = {"node-1", 1, 1};
  slice.node_selection = NodeSelection{};
  slice.node_selection->node_name = "node-1";
  slice.devices = std::move(devices);
  return slice;
}

Device Gpu(int index) {
  Device device;
  device.name = "gpu-" + std::to_string(index);
  device.attributes["gpu.nvidia.com/type"] = std::string("gpu");
  device.attributes["gpu.nvidia.com/productName"] = std::string("NVIDIA A100-SXM4-80GB");
  device.attributes["gpu.nvidia.com/index"] = int64_t{index};
  device.capacity["gpu.nvidia.com/memory"] = {80LL * 1024 * 1024 * 1024 * 1000, {}};
  return device;
}

std::vector<ResourceSlice> MigSlices() {
  constexpr Milli kGiMilli = 1024LL * 1024 * 1024 * 1000;
  std::vector<Device> devices;
  Device whole = Gpu(0);
  whole.consumes_counters.push_back(
      {"gpu-0-counters", {{"slices", 7000}, {"memory", 80 * kGiMilli}}});
  devices.push_back(whole);
  struct Profile {
    const char* name;
    int count;
    Milli slices;
    Milli memory_gi;
  };
  for (const Profile& profile : {Profile{"1g.10gb", 7, 1000, 10}, Profile{"2g.20gb", 3, 2000, 20},
                                 Profile{"3g.40gb", 2, 3000, 40}, Profile{"4g.40gb", 1, 4000, 40},
                                 Profile{"7g.80gb", 1, 7000, 80}}) {
    for (int i = 0; i < profile.count; ++i) {
      Device device;
      device.name = std::string("gpu-0-mig-") + profile.name + "-" + std::to_string(i);
      device.attributes["gpu.nvidia.com/type"] = std::string("mig");
      device.attributes["gpu.nvidia.com/profile"] = std::string(profile.name);
      device.consumes_counters.push_back(
          {"gpu-0-counters",
           {{"slices", profile.slices}, {"memory", profile.memory_gi * kGiMilli}}});
      devices.push_back(std::move(device));
    }
  }
  ResourceSlice slice = NodeSlice(std::move(devices));
  slice.shared_counters.push_back(
      {"gpu-0-counters", {{"slices", 7000}, {"memory", 80 * kGiMilli}}});
  // Upstream's API puts counters and devices in separate slices of the pool.
  ResourceSlice counters = slice;
  counters.name += "-counters";
  counters.devices.clear();
  slice.shared_counters.clear();
  slice.pool.resource_slice_count = counters.pool.resource_slice_count = 2;
  return {slice, counters};
}

ResourceClaim OneDeviceClaim(std::vector<std::string> selectors = {}) {
  ResourceClaim claim;
  claim.name_space = "default";
  claim.name = "claim";
  claim.uid = "0f1e2d3c-0000-4000-8000-000000000001";
  DeviceRequest request;
  request.name = "gpu";
  request.exactly = DeviceRequestSpec{};
  request.exactly->device_class_name = "gpu.nvidia.com";
  request.exactly->selectors = std::move(selectors);
  claim.spec.requests.push_back(std::move(request));
  return claim;
}

ResourceClaim Holding(const std::string& device) {
  ResourceClaim claim = OneDeviceClaim();
  claim.name = "holder-" + device;
  claim.allocation = Allocation{};
  AllocationResult& result = claim.allocation->results.emplace_back();
  result.request = "gpu";
  result.driver = kDriver;
  result.pool = "node-1";
  result.device = device;
  return claim;
}

void Run(benchmark::State& state, const Inventory& inventory, const ResourceClaim& claim,
         const AllocatedState& allocated) {
  const ConstantVerdicts verdicts;
  const Labels labels;
  const std::vector<ResourceClaim> claims{claim};
  for (auto _ : state) {
    auto result = Allocate(inventory, NodeRef{"node-1", labels}, claims, allocated, verdicts);
    if (!result.ok() || !result->has_value()) std::abort();
    benchmark::DoNotOptimize(result);
  }
}

DeviceClass GpuClass() {
  return DeviceClass{"gpu.nvidia.com", {kClassSelector}, {}, {}};
}

void BM_WholeGpus(benchmark::State& state) {
  std::vector<Device> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(Gpu(i));
  const Inventory inventory({NodeSlice(std::move(gpus))}, {GpuClass()});
  std::vector<ResourceClaim> holders;
  for (int i = 0; i < state.range(0); ++i) holders.push_back(Holding("gpu-" + std::to_string(i)));
  Run(state, inventory, OneDeviceClaim(), AllocatedState::FromClaims(holders));
}
BENCHMARK(BM_WholeGpus)->Arg(0)->Arg(7);

void BM_MigPartitions(benchmark::State& state) {
  const Inventory inventory(MigSlices(), {GpuClass()});
  std::vector<ResourceClaim> holders;
  if (state.range(0) > 0) {
    holders.push_back(Holding("gpu-0-mig-1g.10gb-0"));
    holders.push_back(Holding("gpu-0-mig-2g.20gb-0"));
  }
  Run(state, inventory, OneDeviceClaim({kProfileSelector}), AllocatedState::FromClaims(holders));
}
BENCHMARK(BM_MigPartitions)->Arg(0)->Arg(2);

}  // namespace
}  // namespace gantry::dra

BENCHMARK_MAIN();
