// One DRA CEL selector evaluation through upstream's library (src/dra/device_selector.h):
// what each (selector, device) pair costs an allocator that has compiled the expression and
// prepared the device once. The boundary alone (a trivial `true`) is measured beside a
// realistic selector (NVIDIA's gpu.nvidia.com class plus a memory request), and the
// unprepared path that decodes the device on every call.
//   dra_selector_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "dra/device_selector.h"

namespace gantry::dra {
namespace {

DeviceDescription Gpu() {
  DeviceDescription device;
  device.driver = "gpu.nvidia.com";
  device.attributes["type"] = std::string("gpu");
  device.attributes["productName"] = std::string("NVIDIA A100-SXM4-80GB");
  device.attributes["index"] = int64_t{3};
  device.attributes["driverVersion"] = SemanticVersion{"550.54.15"};
  device.attributes["cudaComputeCapability"] = SemanticVersion{"8.0.0"};
  device.attributes["uuid"] = std::string("GPU-4d2b8f3e-9a51-4c1e-8e2f-1f0b6c9d7a10");
  device.capacity["memory"] = "80Gi";
  return device;
}

constexpr const char* kTrivial = "true";
constexpr const char* kRealistic =
    R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu")"
    R"( && device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)";

DeviceSelector CompileOrDie(const char* expression) {
  Result<DeviceSelector> selector = DeviceSelector::Compile(expression);
  if (!selector.ok()) std::abort();
  return std::move(*selector);
}

void Evaluate(benchmark::State& state, const char* expression) {
  DeviceSelector selector = CompileOrDie(expression);
  Result<CelDevice> device = CelDevice::Prepare(Gpu());
  if (!device.ok()) std::abort();
  for (auto _ : state) {
    Result<bool> matches = selector.Matches(*device);
    if (!matches.ok() || !*matches) std::abort();
  }
}

void BM_MatchesTrivial(benchmark::State& state) {
  Evaluate(state, kTrivial);
}
BENCHMARK(BM_MatchesTrivial);

void BM_MatchesPrepared(benchmark::State& state) {
  Evaluate(state, kRealistic);
}
BENCHMARK(BM_MatchesPrepared);

void BM_MatchesUnprepared(benchmark::State& state) {
  DeviceSelector selector = CompileOrDie(kRealistic);
  DeviceDescription device = Gpu();
  for (auto _ : state) {
    Result<bool> matches = selector.Matches(device);
    if (!matches.ok() || !*matches) std::abort();
  }
}
BENCHMARK(BM_MatchesUnprepared);

void BM_Compile(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(CompileOrDie(kRealistic));
}
BENCHMARK(BM_Compile);

}  // namespace
}  // namespace gantry::dra

BENCHMARK_MAIN();
