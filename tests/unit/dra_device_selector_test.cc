// DRA CEL selectors through upstream's library (src/dra/device_selector.h). The expected
// values come from the Kubernetes documentation of DRA selectors and from upstream's own
// tests (k8s.io/dynamic-resource-allocation/cel/compile_test.go, v0.37.2), not from running
// this code.
#include "dra/device_selector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

// The Go side's entry point (src/dra/dracel/dracel.go), called directly to check that a Go
// panic comes back as an error instead of unwinding into C++.
extern "C" int gantry_dracel_matches(uintptr_t selector, uintptr_t device, char** error);

namespace gantry::dra {
namespace {

// An NVIDIA GPU as the gpu.nvidia.com DRA driver publishes it (attribute names from its
// ResourceSlices; short names are in the driver's domain).
DeviceDescription A100(std::string memory = "80Gi", std::string driver_version = "550.54.15") {
  DeviceDescription device;
  device.driver = "gpu.nvidia.com";
  device.attributes["type"] = std::string("gpu");
  device.attributes["productName"] = std::string("NVIDIA A100-SXM4-80GB");
  device.attributes["gpu.nvidia.com/index"] = int64_t{3};
  device.attributes["gpu.nvidia.com/cudaComputeCapability"] = SemanticVersion{"8.0.0"};
  device.attributes["driverVersion"] = SemanticVersion{std::move(driver_version)};
  device.attributes["resource.kubernetes.io/pcieRoot"] = std::string("pci0000:00");
  device.attributes["gpu.nvidia.com/migEnabled"] = false;
  device.capacity["memory"] = std::move(memory);
  return device;
}

// Compiles (the test fails if that fails) and evaluates against `device`.
Result<bool> Eval(std::string_view expression, const DeviceDescription& device) {
  Result<DeviceSelector> selector = DeviceSelector::Compile(expression);
  EXPECT_TRUE(selector.ok()) << expression << ": " << selector.status().message();
  if (!selector.ok()) return selector.status();
  return selector->Matches(device);
}

// True or false, or the test fails with the runtime error.
bool Match(std::string_view expression, const DeviceDescription& device) {
  Result<bool> result = Eval(expression, device);
  EXPECT_TRUE(result.ok()) << expression << ": " << result.status().message();
  return result.ok() && *result;
}

TEST(DraDeviceSelectorTest, DriverName) {
  EXPECT_TRUE(Match(R"(device.driver == "gpu.nvidia.com")", A100()));
  EXPECT_FALSE(Match(R"(device.driver == "dra.example.com")", A100()));
}

TEST(DraDeviceSelectorTest, NvidiaDeviceClassSelector) {
  // The gpu.nvidia.com DeviceClass shipped with NVIDIA's DRA driver.
  const char* kGpuClass = R"(device.driver == "gpu.nvidia.com" && )"
                          R"(device.attributes["gpu.nvidia.com"].type == "gpu")";
  EXPECT_TRUE(Match(kGpuClass, A100()));
  DeviceDescription mig = A100();
  mig.attributes["type"] = std::string("mig");
  EXPECT_FALSE(Match(kGpuClass, mig));
}

TEST(DraDeviceSelectorTest, ShortAttributeNamesAreInTheDriversDomain) {
  // "productName" was published without a domain: it is gpu.nvidia.com/productName.
  EXPECT_TRUE(Match(R"(device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB")",
                    A100()));
  EXPECT_TRUE(
      Match(R"(device.attributes["gpu.nvidia.com"]["productName"].startsWith("NVIDIA"))", A100()));
  // A qualified name stays in its own domain.
  EXPECT_TRUE(
      Match(R"(device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00")", A100()));
}

TEST(DraDeviceSelectorTest, IntBoolAndRegex) {
  EXPECT_TRUE(Match(R"(device.attributes["gpu.nvidia.com"].index == 3)", A100()));
  EXPECT_FALSE(Match(R"(device.attributes["gpu.nvidia.com"].index < 3)", A100()));
  EXPECT_TRUE(Match(R"(!device.attributes["gpu.nvidia.com"].migEnabled)", A100()));
  EXPECT_TRUE(Match(
      R"(device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA A[0-9]+-"))", A100()));
  EXPECT_FALSE(Match(
      R"(device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA H[0-9]+"))", A100()));
}

TEST(DraDeviceSelectorTest, MissingDomainIsAnEmptyMap) {
  EXPECT_TRUE(Match(R"(device.attributes["x.example.com"].size() == 0)", A100()));
  EXPECT_TRUE(Match(R"(device.capacity["x.example.com"].size() == 0)", A100()));
  // ... yet the domain is not in the map.
  EXPECT_FALSE(Match(R"("x.example.com" in device.attributes)", A100()));
  EXPECT_TRUE(Match(R"("gpu.nvidia.com" in device.attributes)", A100()));
}

TEST(DraDeviceSelectorTest, MissingKeyIsARuntimeError) {
  Result<bool> result = Eval(R"(device.attributes["gpu.nvidia.com"].noSuchAttr == "x")", A100());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Status::Code::kFailed);
  EXPECT_NE(result.status().message().find("no such key: noSuchAttr"), std::string::npos)
      << result.status().message();
  // kube-scheduler's hint (cel.EnhanceRuntimeError).
  EXPECT_NE(result.status().message().find("consider using CEL optional chaining"),
            std::string::npos)
      << result.status().message();
  // Guarded lookups are how a selector avoids it.
  EXPECT_FALSE(Match(R"(has(device.attributes["gpu.nvidia.com"].noSuchAttr))", A100()));
  EXPECT_TRUE(
      Match(R"(device.attributes["gpu.nvidia.com"].?noSuchAttr.orValue("x") == "x")", A100()));
}

TEST(DraDeviceSelectorTest, CapacityQuantities) {
  const char* kAtLeast40Gi =
      R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)";
  EXPECT_TRUE(Match(kAtLeast40Gi, A100("80Gi")));
  EXPECT_TRUE(Match(kAtLeast40Gi, A100("40Gi")));
  EXPECT_TRUE(Match(kAtLeast40Gi, A100("42949672960")));  // 40Gi in bytes
  EXPECT_FALSE(Match(kAtLeast40Gi, A100("40G")));         // 40e9 < 40 * 2^30
  EXPECT_FALSE(Match(kAtLeast40Gi, A100("20Gi")));
  EXPECT_TRUE(
      Match(R"(device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("1Ki")))", A100()));
}

TEST(DraDeviceSelectorTest, SemanticVersions) {
  const char* kNewerThan1 =
      R"(device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("1.0.0")))";
  EXPECT_TRUE(Match(kNewerThan1, A100("80Gi", "550.54.15")));
  EXPECT_FALSE(Match(kNewerThan1, A100("80Gi", "1.0.0")));
  EXPECT_FALSE(Match(kNewerThan1, A100("80Gi", "0.9.9")));
  // Compared as versions, not as strings ("10.0.0" < "9.0.0" as text).
  EXPECT_TRUE(
      Match(R"(device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("9.0.0")) > 0)",
            A100("80Gi", "10.0.0")));
  EXPECT_TRUE(Match(
      R"(device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("7.5.0")))",
      A100()));
}

TEST(DraDeviceSelectorTest, BindListsAndAllowMultipleAllocations) {
  EXPECT_TRUE(Match(R"(cel.bind(gpu, device.attributes["gpu.nvidia.com"],)"
                    R"( gpu.type == "gpu" && gpu.index in [1, 3, 5]))",
                    A100()));
  // allowMultipleAllocations (consumable capacity, on by default in 1.37): unset is false.
  EXPECT_TRUE(Match("device.allowMultipleAllocations == false", A100()));
  DeviceDescription shared = A100();
  shared.allow_multiple_allocations = true;
  EXPECT_TRUE(Match("device.allowMultipleAllocations", shared));
}

TEST(DraDeviceSelectorTest, SyntaxErrorIsACompileError) {
  Result<DeviceSelector> selector = DeviceSelector::Compile("?!");
  ASSERT_FALSE(selector.ok());
  EXPECT_EQ(selector.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(selector.status().message().find("compilation failed"), std::string::npos)
      << selector.status().message();
  EXPECT_NE(selector.status().message().find("Syntax error"), std::string::npos)
      << selector.status().message();
  EXPECT_FALSE(DeviceSelector::Compile("").ok());
}

TEST(DraDeviceSelectorTest, UndeclaredNamesAreCompileErrors) {
  Result<DeviceSelector> selector = DeviceSelector::Compile("pod.name == \"x\"");
  ASSERT_FALSE(selector.ok());
  EXPECT_NE(selector.status().message().find("undeclared reference to 'pod'"), std::string::npos)
      << selector.status().message();
}

TEST(DraDeviceSelectorTest, ResultMustBeABool) {
  Result<DeviceSelector> number = DeviceSelector::Compile("1");
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.status().message().find("must evaluate to bool or the unknown type, not int"),
            std::string::npos)
      << number.status().message();
  Result<DeviceSelector> text = DeviceSelector::Compile("device.driver");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not string"), std::string::npos)
      << text.status().message();
  // An attribute's type is only known when evaluated: a non-bool one fails then.
  Result<bool> result = Eval(R"(device.attributes["gpu.nvidia.com"].index)", A100());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("could not be converted to bool"), std::string::npos)
      << result.status().message();
}

// Upstream's "expensive" case: ten nested all() over ten elements.
constexpr const char* kExpensive =
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))";

TEST(DraDeviceSelectorTest, RuntimeCostLimit) {
  // The scheduler compiles it (no estimate for stored expressions) and stops it at run time
  // at CELSelectorExpressionMaxCost (1,000,000).
  Result<bool> result = Eval(kExpensive, A100());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("actual cost limit exceeded"), std::string::npos)
      << result.status().message();
}

TEST(DraDeviceSelectorTest, ValidateAsTheApiServer) {
  EXPECT_TRUE(DeviceSelector::Validate(R"(device.driver == "gpu.nvidia.com")").ok());
  // The estimated worst case (85,555,551) is over the limit: refused when created.
  Status expensive = DeviceSelector::Validate(kExpensive);
  ASSERT_FALSE(expensive.ok());
  EXPECT_NE(expensive.message().find("too complex, exceeds cost limit"), std::string::npos)
      << expensive.message();
  Status syntax = DeviceSelector::Validate("?!");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.message().find("Syntax error"), std::string::npos) << syntax.message();
  // CELSelectorExpressionMaxLength: 10 KiB.
  std::string long_expression = "true";
  while (long_expression.size() <= 10 * 1024) long_expression += " && true";
  Status too_long = DeviceSelector::Validate(long_expression);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.message().find("10240"), std::string::npos) << too_long.message();
}

TEST(DraDeviceSelectorTest, StoredExpressionsCompileWhatNewOnesMayNot) {
  // With DRAListTypeAttributes off (1.37's default) an attribute is not a list in a new
  // object, so the API server refuses a macro over one; the scheduler compiles stored
  // expressions in the widest environment and fails, if at all, when it evaluates.
  const char* kListMacro = R"(device.attributes["gpu.nvidia.com"].index.exists(i, i == 3))";
  Status created = DeviceSelector::Validate(kListMacro);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.message().find("compilation failed"), std::string::npos) << created.message();
  Result<bool> result = Eval(kListMacro, A100());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("expected iterable type"), std::string::npos)
      << result.status().message();
}

TEST(DraDeviceSelectorTest, BadDevicesAreErrorsNamingTheValue) {
  DeviceDescription bad_quantity = A100("80 gigs");
  Result<CelDevice> device = CelDevice::Prepare(bad_quantity);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("quantities must match"), std::string::npos)
      << device.status().message();

  Result<CelDevice> unknown = CelDevice::FromJson(R"({"driver": "x", "atributes": {}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("atributes"), std::string::npos)
      << unknown.status().message();

  // A version that is not semver fails where upstream fails: when evaluated.
  Result<bool> result = Eval("true", A100("80Gi", "v1"));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("parse semantic version"), std::string::npos)
      << result.status().message();
}

TEST(DraDeviceSelectorTest, PreparedDeviceAndSelectorFromManyThreads) {
  Result<DeviceSelector> selector = DeviceSelector::Compile(
      R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)");
  ASSERT_TRUE(selector.ok()) << selector.status().message();
  Result<CelDevice> big = CelDevice::Prepare(A100("80Gi"));
  Result<CelDevice> small = CelDevice::Prepare(A100("20Gi"));
  ASSERT_TRUE(big.ok() && small.ok());
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Result<bool> a = selector->Matches(*big);
        Result<bool> b = selector->Matches(*small);
        if (!a.ok() || !*a || !b.ok() || *b) ++wrong[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

TEST(DraDeviceSelectorTest, GoPanicsComeBackAsErrors) {
  char* error = nullptr;
  // Handles that were never made: cgo.Handle.Value panics on the Go side.
  EXPECT_EQ(gantry_dracel_matches(12345, 67890, &error), -1);
  ASSERT_NE(error, nullptr);
  const std::string message(error);
  std::free(error);
  EXPECT_NE(message.find("internal error in matches"), std::string::npos) << message;
  EXPECT_NE(message.find("invalid Handle"), std::string::npos) << message;
}

TEST(DraDeviceSelectorTest, MovedFromSelectorsAndDevicesReleaseOnce) {
  Result<DeviceSelector> first = DeviceSelector::Compile("true");
  ASSERT_TRUE(first.ok());
  DeviceSelector moved = std::move(*first);
  Result<CelDevice> device = CelDevice::Prepare(A100());
  ASSERT_TRUE(device.ok());
  CelDevice kept = std::move(*device);
  Result<bool> result = moved.Matches(kept);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(*result);
  EXPECT_EQ(moved.expression(), "true");
}

}  // namespace
}  // namespace gantry::dra
