// What DRA devices count as for queues (engine/dra/accounting.h): whole GPUs of a mapped
// class count one nvidia.com/gpu each on their node; a partitionable GPU counts once however
// many of its partitions are published; MIG devices count by their memory slices; a claim
// counts its allocated devices, or before that the least an allocation can count.
#include "engine/dra/accounting.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/dra_fixtures.h"

namespace gantry::dra {
namespace {

using k8s::dra_test::kMigCounterSlice;
using k8s::dra_test::kMigDeviceSlice;
using k8s::dra_test::kWholeGpuSlice;
using k8s::dra_test::Slice;

// Stands in for CEL: "type == X" matches the devices whose gpu.nvidia.com type attribute is
// X (the NVIDIA classes' expressions, reduced to what the test needs).
class TypeVerdicts : public SelectorVerdicts {
 public:
  Result<bool> Matches(std::string_view expression, const DeviceRef& device) const override {
    if (!expression.starts_with("type == ")) return Status::Invalid("unknown expression");
    const std::string want(expression.substr(8));
    for (const auto& [name, value] : device.device.attributes) {
      if (name == "gpu.nvidia.com/type") return std::get<std::string>(value) == want;
    }
    return Status::Failed("no such key: type");
  }
};

DeviceClass Class(const std::string& name, const std::string& type) {
  DeviceClass c;
  c.name = name;
  c.selectors = {"type == " + type};
  return c;
}

ClassResource Entry(const std::string& device_class, std::string counter_prefix = "") {
  ClassResource e;
  e.device_class = device_class;
  e.resource = kGpu;
  e.counter_prefix = std::move(counter_prefix);
  return e;
}

DeviceRequest Exactly(const std::string& name, const std::string& device_class, int64_t count) {
  DeviceRequest r;
  r.name = name;
  r.exactly.emplace();
  r.exactly->device_class_name = device_class;
  r.exactly->count = count;
  return r;
}

ResourceClaim ClaimOf(std::vector<DeviceRequest> requests) {
  ResourceClaim c;
  c.name_space = "ml";
  c.name = "c";
  c.spec.requests = std::move(requests);
  return c;
}

class DraAccounting : public ::testing::Test {
 protected:
  DraAccounting()
      : inventory_({Slice(kWholeGpuSlice), Slice(kMigCounterSlice), Slice(kMigDeviceSlice)},
                   {Class("gpu.nvidia.com", "gpu"), Class("mig.nvidia.com", "mig")}) {}

  DeviceAccounting Accounting(std::vector<ClassResource> map) const {
    return DeviceAccounting(map, inventory_, &verdicts_);
  }
  Milli Requested(const DeviceAccounting& a, const ResourceClaim& claim) const {
    const ResourceClaim* claims[] = {&claim};
    return a.ClaimRequests(claims).Get(kGpu);
  }

  Inventory inventory_;
  TypeVerdicts verdicts_;
};

TEST_F(DraAccounting, WholeGpusCountOneEachOnTheirNode) {
  const DeviceAccounting a = Accounting({Entry("gpu.nvidia.com")});
  EXPECT_EQ(a.NodeCapacity("node-1").Get(kGpu), 2000);
  // node-2's one partitionable A100, published whole (and as MIG devices of another class).
  EXPECT_EQ(a.NodeCapacity("node-2").Get(kGpu), 1000);
  EXPECT_TRUE(a.NodeCapacity("node-3").empty());
}

TEST_F(DraAccounting, APartitionableGpuCountsOnceWhateverItsPartitions) {
  const DeviceAccounting a =
      Accounting({Entry("gpu.nvidia.com"), Entry("mig.nvidia.com", "memory-slice")});
  // The whole A100 and its two MIG devices all consume gpu-0-counter-set: one GPU.
  EXPECT_EQ(a.NodeCapacity("node-2").Get(kGpu), 1000);
  EXPECT_EQ(a.NodeCapacity("node-1").Get(kGpu), 2000);
}

TEST_F(DraAccounting, NoMapCountsNothing) {
  const DeviceAccounting a = Accounting({});
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(a.NodeCapacity("node-1").empty());
  EXPECT_EQ(Requested(a, ClaimOf({Exactly("gpu", "gpu.nvidia.com", 2)})), 0);
}

TEST_F(DraAccounting, APendingClaimCountsItsExactCount) {
  const DeviceAccounting a = Accounting({Entry("gpu.nvidia.com")});
  EXPECT_EQ(Requested(a, ClaimOf({Exactly("gpu", "gpu.nvidia.com", 2)})), 2000);
  // A class that is not mapped, admin access and "All" count nothing.
  EXPECT_EQ(Requested(a, ClaimOf({Exactly("nic", "rdma.example.com", 1)})), 0);
  ResourceClaim admin = ClaimOf({Exactly("gpu", "gpu.nvidia.com", 1)});
  admin.spec.requests[0].exactly->admin_access = true;
  EXPECT_EQ(Requested(a, admin), 0);
  ResourceClaim all = ClaimOf({Exactly("gpu", "gpu.nvidia.com", 1)});
  all.spec.requests[0].exactly->allocation_mode = AllocationMode::kAll;
  EXPECT_EQ(Requested(a, all), 0);
}

TEST_F(DraAccounting, MigDevicesCountByTheirMemorySlices) {
  const DeviceAccounting a = Accounting({Entry("mig.nvidia.com", "memory-slice")});
  // Before allocation: the smallest MIG device, 1g.5gb, is 1 of the A100's 4 slices.
  EXPECT_EQ(Requested(a, ClaimOf({Exactly("mig", "mig.nvidia.com", 2)})), 500);
  // Allocated the 2g.10gb device: 2 of 4 slices.
  ResourceClaim claim = ClaimOf({Exactly("mig", "mig.nvidia.com", 1)});
  AllocationResult result;
  result.request = "mig";
  result.driver = "gpu.nvidia.com";
  result.pool = "node-2";
  result.device = "gpu-0-mig-14-0-2";
  claim.allocation.emplace();
  claim.allocation->results.push_back(result);
  EXPECT_EQ(Requested(a, claim), 500);
  claim.allocation->results[0].device = "gpu-0-mig-19-0-1";
  EXPECT_EQ(Requested(a, claim), 250);
}

TEST_F(DraAccounting, FirstAvailableCountsItsLeastSubrequest) {
  const DeviceAccounting a = Accounting({Entry("gpu.nvidia.com")});
  DeviceRequest request;
  request.name = "gpus";
  for (int64_t count : {4, 2}) {
    DeviceSubRequest sub;
    sub.name = "n" + std::to_string(count);
    sub.spec.device_class_name = "gpu.nvidia.com";
    sub.spec.count = count;
    request.first_available.push_back(sub);
  }
  ResourceClaim claim = ClaimOf({request});
  EXPECT_EQ(Requested(a, claim), 2000);
  // Allocated through its first subrequest: the results name it, four devices.
  claim.allocation.emplace();
  for (int i = 0; i < 4; ++i) {
    AllocationResult result;
    result.request = "gpus/n4";
    result.driver = "gpu.nvidia.com";
    result.pool = "node-1";
    result.device = "gpu-" + std::to_string(i % 2);
    claim.allocation->results.push_back(result);
  }
  EXPECT_EQ(Requested(a, claim), 4000);
}

TEST_F(DraAccounting, DevicesReachableFromSeveralNodesBelongToNone) {
  ResourceSlice shared = Slice(kWholeGpuSlice);
  shared.name = "fabric";
  shared.pool.name = "fabric";
  shared.node_selection = NodeSelection{};
  shared.node_selection->all_nodes = true;
  const Inventory inventory({shared}, {Class("gpu.nvidia.com", "gpu")});
  const std::vector<ClassResource> map = {Entry("gpu.nvidia.com")};
  const DeviceAccounting a(map, inventory, &verdicts_);
  EXPECT_TRUE(a.NodeCapacity("node-1").empty());
  // A claim still counts what it asks.
  EXPECT_EQ(Requested(a, ClaimOf({Exactly("gpu", "gpu.nvidia.com", 1)})), 1000);
}

}  // namespace
}  // namespace gantry::dra
