// The selector cache (src/dra/selector_cache.h): each (expression, device) is evaluated
// once, by upstream's CEL library, until the device changes. Expected verdicts are written
// by hand from the devices' attributes.
#include "dra/selector_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace gantry::dra {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

Device Gpu(std::string model, int64_t memory_gi) {
  Device device;
  device.name = "gpu-0";
  device.attributes["gpu.nvidia.com/productName"] = std::move(model);
  device.attributes["gpu.nvidia.com/index"] = int64_t{0};
  device.capacity["gpu.nvidia.com/memory"].value = memory_gi * kGi * kMilliPerUnit;
  return device;
}

const DeviceName kKey{"gpu.nvidia.com", "node-1", "gpu-0"};
constexpr std::string_view kIsH100 =
    R"(device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100")";
constexpr std::string_view kAtLeast80Gi =
    R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0)";

TEST(DraSelectorCacheTest, EvaluatesEachPairOnce) {
  SelectorCache cache;
  Device h100 = Gpu("NVIDIA H100", 80);
  for (int i = 0; i < 3; ++i) {
    Result<bool> verdict = cache.Matches(kIsH100, kKey, "gpu.nvidia.com", h100);
    ASSERT_TRUE(verdict.ok()) << verdict.status().message();
    EXPECT_TRUE(*verdict);
  }
  EXPECT_EQ(cache.evaluations(), 1);
  Result<bool> memory = cache.Matches(kAtLeast80Gi, kKey, "gpu.nvidia.com", h100);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_TRUE(*memory);  // the capacity reaches CEL exactly: 80Gi is not less than 80Gi
  EXPECT_EQ(cache.evaluations(), 2);
  EXPECT_EQ(cache.expression_count(), 2u);
  EXPECT_EQ(cache.device_count(), 1u);
}

TEST(DraSelectorCacheTest, AChangedDeviceIsAskedAgain) {
  SelectorCache cache;
  ASSERT_TRUE(*cache.Matches(kIsH100, kKey, "gpu.nvidia.com", Gpu("NVIDIA H100", 80)));
  // The same name in a new slice generation, now another GPU with less memory.
  Device a100 = Gpu("NVIDIA A100", 40);
  Result<bool> model = cache.Matches(kIsH100, kKey, "gpu.nvidia.com", a100);
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(*model);
  Result<bool> memory = cache.Matches(kAtLeast80Gi, kKey, "gpu.nvidia.com", a100);
  ASSERT_TRUE(memory.ok());
  EXPECT_FALSE(*memory);
  EXPECT_EQ(cache.evaluations(), 3);
  EXPECT_EQ(cache.device_count(), 1u);
}

TEST(DraSelectorCacheTest, ErrorsAreUpstreamsAndKept) {
  SelectorCache cache;
  Device gpu = Gpu("NVIDIA H100", 80);
  Result<bool> syntax = cache.Matches("device.driver ==", kKey, "gpu.nvidia.com", gpu);
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(syntax.status().message().find("compilation failed"), std::string::npos)
      << syntax.status().message();

  // A key the device lacks is a runtime error of this device, as in kube-scheduler.
  constexpr std::string_view kMissing = R"(device.attributes["gpu.nvidia.com"].uuid == "x")";
  for (int i = 0; i < 2; ++i) {
    Result<bool> missing = cache.Matches(kMissing, kKey, "gpu.nvidia.com", gpu);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), Status::Code::kFailed);
    EXPECT_NE(missing.status().message().find("uuid"), std::string::npos)
        << missing.status().message();
  }
  EXPECT_EQ(cache.evaluations(), 1);
}

TEST(DraSelectorCacheTest, ForgettingDropsVerdicts) {
  SelectorCache cache;
  Device gpu = Gpu("NVIDIA H100", 80);
  DeviceName other{"gpu.nvidia.com", "node-2", "gpu-0"};
  ASSERT_TRUE(cache.Matches(kIsH100, kKey, "gpu.nvidia.com", gpu).ok());
  ASSERT_TRUE(cache.Matches(kIsH100, other, "gpu.nvidia.com", gpu).ok());
  ASSERT_TRUE(cache.Matches(kAtLeast80Gi, kKey, "gpu.nvidia.com", gpu).ok());
  EXPECT_EQ(cache.evaluations(), 3);

  cache.ForgetDevice(kKey);
  EXPECT_EQ(cache.device_count(), 1u);
  ASSERT_TRUE(cache.Matches(kIsH100, other, "gpu.nvidia.com", gpu).ok());  // still cached
  EXPECT_EQ(cache.evaluations(), 3);
  ASSERT_TRUE(cache.Matches(kIsH100, kKey, "gpu.nvidia.com", gpu).ok());  // asked again
  EXPECT_EQ(cache.evaluations(), 4);

  cache.ForgetExpression(kIsH100);
  EXPECT_EQ(cache.expression_count(), 1u);
  ASSERT_TRUE(cache.Matches(kIsH100, other, "gpu.nvidia.com", gpu).ok());
  EXPECT_EQ(cache.evaluations(), 5);
}

TEST(DraSelectorCacheTest, DescribesQuantitiesExactly) {
  Device device;
  device.capacity["dra.example.com/cores"].value = 1500;  // 1.5 cores
  device.attributes["dra.example.com/driverVersion"] = SemanticVersion{"1.2.3"};
  device.allow_multiple_allocations = true;
  DeviceDescription description = DescribeDevice("dra.example.com", device);
  EXPECT_EQ(description.driver, "dra.example.com");
  EXPECT_EQ(description.capacity.at("dra.example.com/cores"), "1500m");
  EXPECT_EQ(description.allow_multiple_allocations, std::optional<bool>(true));
  SelectorCache cache;
  Result<bool> verdict = cache.Matches(
      R"(device.capacity["dra.example.com"].cores == quantity("1.5") && )"
      R"(device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.2.0")) && )"
      R"(device.allowMultipleAllocations)",
      {"dra.example.com", "p", "d"}, "dra.example.com", device);
  ASSERT_TRUE(verdict.ok()) << verdict.status().message();
  EXPECT_TRUE(*verdict);
}

}  // namespace
}  // namespace gantry::dra
