#include "engine/fragmentation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/unit/test_util.h"

namespace gantry {
namespace {

GpuModelId ModelA() {
  return GpuModels().Intern("frag-A100");
}
GpuModelId ModelV() {
  return GpuModels().Intern("frag-V100");
}

// ---------------------------------------------------------------- NodeFragmentation

// Shared 500 (cpu 4), one whole GPU (cpu 8), CPU-only (cpu 2): weights 0.5, 0.3, 0.2.
WorkloadProfile ThreeTypes() {
  return TypesProfile(
      {SharedGpuType(4000, 500, 5), WholeGpuType(8000, 1, 3), CpuOnlyType(2000, 2)});
}

struct FragCase {
  const char* what;
  Milli cpu_free;
  std::vector<int32_t> free_milli;
  double want;
};

TEST(NodeFragmentationTest, HandComputedFromTheDefinition) {
  FragmentationMeasure m(ThreeTypes());
  const FragCase cases[] = {
      // G = 1900. Shared 500 fits (devices 1000 and 600): fragment 300 + 0. The whole GPU
      // fits (device 1000): fragment 300 + 0 + 600. CPU-only: all 1900.
      // 0.5 x 300 + 0.3 x 900 + 0.2 x 1900 = 150 + 270 + 380.
      {"all GPU types fit", 16000, {1000, 300, 0, 600}, 800},
      // CPU 6 cores: the whole-GPU type (8 cores) does not fit: all 1900 for it.
      {"CPU too small for one type", 6000, {1000, 300, 0, 600}, 150 + 0.3 * 1900 + 380},
      // CPU 3 cores: neither GPU type fits.
      {"CPU too small for every type", 3000, {1000, 300, 0, 600}, 1900},
      // No device has 500 free: nothing fits, G = 800 is all fragment.
      {"no device big enough", 16000, {400, 400}, 800},
      // A device of 500 exactly fits the shared type; no whole GPU free.
      // 0.5 x 0 (the 500 fits; no smaller device) + 0.3 x 500 + 0.2 x 500.
      {"share fits exactly", 16000, {500, 0}, 250},
      // Everything free on one idle GPU: only the CPU-only type sees a fragment.
      {"idle GPU", 16000, {1000}, 0.2 * 1000},
      // Exactly the CPU the types need fits.
      {"CPU fits exactly", 8000, {1000, 1000}, 0.2 * 2000},
      {"no free GPU", 16000, {0, 0, 0}, 0},
      {"no GPUs at all", 16000, {}, 0},
  };
  for (const FragCase& c : cases) {
    EXPECT_NEAR(m.NodeFragmentation(c.cpu_free, ModelA(), c.free_milli), c.want, 1e-9) << c.what;
  }
}

TEST(NodeFragmentationTest, GpuModelTheTypeMayNotUseCountsAllFreeGpu) {
  // One type, only on V100s.
  FragmentationMeasure m(TypesProfile({SharedGpuType(1000, 300, 1, {ModelV()})}));
  std::vector<int32_t> free = {1000, 200};
  EXPECT_NEAR(m.NodeFragmentation(8000, ModelA(), free), 1200, 1e-9);
  EXPECT_NEAR(m.NodeFragmentation(8000, ModelV(), free), 200, 1e-9);
}

TEST(NodeFragmentationTest, MultiGpuTypesNeedEnoughWholeDevices) {
  FragmentationMeasure m(TypesProfile({WholeGpuType(0, 2, 1)}));
  std::vector<int32_t> two_free = {1000, 1000, 500};
  std::vector<int32_t> one_free = {1000, 500, 500};
  EXPECT_NEAR(m.NodeFragmentation(1000, ModelA(), two_free), 500, 1e-9);
  EXPECT_NEAR(m.NodeFragmentation(1000, ModelA(), one_free), 2000, 1e-9);
}

TEST(NodeFragmentationTest, CoverageKeepsTheMostFrequentTypesAndRenormalizes) {
  // Counts 50, 30, 15, 5 of 100. Node: 16 cores, devices free 1000 and 200 (G = 1200).
  // Fragments: shared 500 -> 200, whole GPU -> 200, CPU-only -> 1200, shared 100 -> 0.
  WorkloadProfile p = TypesProfile({SharedGpuType(4000, 500, 50), WholeGpuType(4000, 1, 30),
                                    CpuOnlyType(4000, 15), SharedGpuType(1000, 100, 5)});
  std::vector<int32_t> free = {1000, 200};
  // All four types: (50 x 200 + 30 x 200 + 15 x 1200 + 5 x 0) / 100.
  EXPECT_NEAR(FragmentationMeasure(p, 1.0).NodeFragmentation(16000, ModelA(), free), 340, 1e-9);
  // 95 %: 50 + 30 + 15 = 95 covers it; the rarest type is dropped and the weights are
  // counts over 95.
  EXPECT_NEAR(FragmentationMeasure(p, 0.95).NodeFragmentation(16000, ModelA(), free), 34000.0 / 95,
              1e-9);
  // 75 %: 50 + 30 = 80 >= 75: two types, weights over 80.
  EXPECT_NEAR(FragmentationMeasure(p, 0.75).NodeFragmentation(16000, ModelA(), free), 200, 1e-9);
  // 50 %: the first type alone.
  EXPECT_NEAR(FragmentationMeasure(p, 0.5).NodeFragmentation(16000, ModelA(), free), 200, 1e-9);
  // 96 %: the fourth type is needed too.
  EXPECT_NEAR(FragmentationMeasure(p, 0.96).NodeFragmentation(16000, ModelA(), free), 340, 1e-9);
}

TEST(NodeFragmentationTest, EmptyProfileMeasuresNothing) {
  FragmentationMeasure m{WorkloadProfile{}};
  EXPECT_TRUE(m.empty());
  std::vector<int32_t> free = {1000, 300};
  EXPECT_EQ(m.NodeFragmentation(1000, ModelA(), free), 0);
  EXPECT_FALSE(FragmentationMeasure(ThreeTypes()).empty());
  EXPECT_FALSE(FragmentationMeasure(TypesProfile({CpuOnlyType(1000, 1)})).empty());
}

TEST(NodeFragmentationTest, CachedEqualsUncachedOverRandomStates) {
  // Types with several CPU steps, shares, counts and a model constraint.
  WorkloadProfile p = TypesProfile(
      {SharedGpuType(3152, 810, 40), WholeGpuType(11300, 1, 30), SharedGpuType(11908, 470, 20),
       CpuOnlyType(12500, 15), WholeGpuType(32000, 2, 8), SharedGpuType(6000, 250, 6, {ModelV()}),
       WholeGpuType(88000, 8, 3), SharedGpuType(2000, 100, 2)});
  for (double coverage : {1.0, 0.95}) {
    FragmentationMeasure cached(p, coverage);
    FragmentationMeasure plain(p, coverage);
    std::mt19937_64 rng(20240611);
    const int32_t shares[] = {0, 100, 190, 250, 470, 500, 530, 810, 1000};
    for (int i = 0; i < 20000; ++i) {
      const int devices = static_cast<int>(rng() % 11);  // 0..10: past the cache's 8 too
      std::vector<int32_t> free;
      for (int d = 0; d < devices; ++d) {
        free.push_back(rng() % 4 == 0 ? static_cast<int32_t>(rng() % 1001) : shares[rng() % 9]);
      }
      const Milli cpu = static_cast<Milli>(rng() % 100000);
      const GpuModelId model = rng() % 2 ? ModelA() : ModelV();
      const double want = plain.NodeFragmentation(cpu, model, free);
      ASSERT_EQ(cached.CachedNodeFragmentation(cpu, model, free), want)
          << "state " << i << " cpu " << cpu << " devices " << devices;
      // The same state again, devices in another order: the same value.
      std::vector<int32_t> reversed(free.rbegin(), free.rend());
      ASSERT_EQ(cached.CachedNodeFragmentation(cpu, model, reversed), want) << "state " << i;
    }
  }
}

// ---------------------------------------------------------------- FillFragmentation

TEST(FillFragmentationTest, HandComputed) {
  // Shared 300 (2 cores) and one whole GPU (4 cores), 1 each; CPU-only (2): left out.
  // GPU weights 0.25 + 0.25 = 0.5; the result is divided by it.
  FragmentationMeasure m(
      TypesProfile({SharedGpuType(2000, 300, 1), WholeGpuType(4000, 1, 1), CpuOnlyType(1000, 2)}));
  std::vector<int32_t> free = {1000, 700, 250};  // G = 1950, one whole GPU free
  // 10 cores: 300s fill 3 + 2 + 0 = 5 slots (CPU allows 5): 1500 used, 450 left.
  // Whole: 1 slot (CPU allows 2): 1000 used, 950 left. (0.25 x 450 + 0.25 x 950) / 0.5.
  EXPECT_NEAR(m.FillFragmentation(10000, ModelA(), free), 700, 1e-9);
  // 4 cores: CPU allows two 300s (1350 left) and one whole GPU (950 left).
  EXPECT_NEAR(m.FillFragmentation(4000, ModelA(), free), 1150, 1e-9);
  // 1 core: nothing fits, all 1950 stays unused for both types.
  EXPECT_NEAR(m.FillFragmentation(1000, ModelA(), free), 1950, 1e-9);
  std::vector<int32_t> full = {0, 0};
  EXPECT_EQ(m.FillFragmentation(10000, ModelA(), full), 0);
}

TEST(FillFragmentationTest, ModelsMultiGpuAndCpuOnlyProfiles) {
  // A type only for V100s leaves everything on an A100 node unused.
  FragmentationMeasure v(TypesProfile({SharedGpuType(1000, 300, 1, {ModelV()})}));
  std::vector<int32_t> free = {1000, 700};
  EXPECT_NEAR(v.FillFragmentation(64000, ModelA(), free), 1700, 1e-9);
  // On a V100 node: 3 + 2 slots of 300, 1500 used, 200 left.
  EXPECT_NEAR(v.FillFragmentation(64000, ModelV(), free), 200, 1e-9);

  // Two whole GPUs per task: three free devices hold one task, one device stays unused;
  // the partly used device too.
  FragmentationMeasure two(TypesProfile({WholeGpuType(0, 2, 1)}));
  std::vector<int32_t> three = {1000, 1000, 1000, 400};
  EXPECT_NEAR(two.FillFragmentation(64000, ModelA(), three), 1400, 1e-9);

  // Only CPU-only types: no GPU type to measure against.
  FragmentationMeasure cpu(TypesProfile({CpuOnlyType(1000, 3)}));
  EXPECT_EQ(cpu.FillFragmentation(64000, ModelA(), free), 0);
}

// ---------------------------------------------------------------- FgdScore

int64_t Reference(double x) {
  return static_cast<int64_t>(100.0 / (1.0 + std::exp(-x)));
}

TEST(FillFragmentationTest, ShareGivenOnlyAsGpuMemoryIsTheSmallestShare) {
  // A task type asking for GPU memory and no share (gantry.dev/gpu-memory alone) used to
  // divide by zero (SIGFPE) in ComputeFill; the property test found it.
  TaskType memory_only;
  memory_only.requests.Set(kCpu, 1000);
  memory_only.gpu.memory_mib = 8192;
  memory_only.count = 1;
  FragmentationMeasure m(TypesProfile({memory_only}));
  const std::vector<int32_t> free = {1000, 300, 0};
  // Every free thousandth can be used by a share of 1: nothing is fragmented.
  EXPECT_EQ(m.FillFragmentation(2'000'000, ModelA(), free), 0.0);
  EXPECT_EQ(m.NodeFragmentation(64000, ModelA(), free), 0.0);
}

TEST(FgdScoreTest, FiftyAtNoChange) {
  for (double f : {0.0, 1.0, 800.0, 7999.5}) EXPECT_EQ(FgdScore(f, f), 50) << f;
}

TEST(FgdScoreTest, HandTable) {
  // x = (before - after) / 1000; 100 / (1 + e^-x) by hand.
  struct Case {
    double before, after;
    int64_t want;
  };
  const Case cases[] = {
      {2000, 1000, 73},  // 73.11
      {1000, 2000, 26},  // 26.89
      {3000, 1000, 88},  // 88.08
      {1000, 3000, 11},  // 11.92
      {500, 0, 62},      // 62.25
      {0, 500, 37},      // 37.75
      {3000, 0, 95},     // 95.26
      {5000, 0, 99},     // 99.33
      {0, 5000, 0},      // 0.67
      {0, 300, 42},      // 42.56
      {8000, 0, 99},     // 99.97
      {0, 8000, 0},
  };
  for (const Case& c : cases)
    EXPECT_EQ(FgdScore(c.before, c.after), c.want) << c.before << " -> " << c.after;
}

TEST(FgdScoreTest, CountsThresholdsExactlyAtAndAroundEachOne) {
  // The count of thresholds ln(k / (100 - k)) at or below x, by a plain scan: on each
  // threshold and its neighbouring doubles, and at the extremes.
  std::vector<double> thresholds;
  for (int k = 1; k < 100; ++k)
    thresholds.push_back(std::log(static_cast<double>(k) / (100.0 - k)));
  auto count = [&](double x) {
    int64_t n = 0;
    for (double t : thresholds) n += t <= x ? 1 : 0;
    return n;
  };
  for (double t : thresholds) {
    for (double x : {std::nextafter(t, -1e9), t, std::nextafter(t, 1e9)}) {
      ASSERT_EQ(FgdScore(x * 1000.0, 0.0), count(x * 1000.0 / 1000.0)) << "x = " << x;
    }
  }
  EXPECT_EQ(FgdScore(-1e300, 1e300), 0);
  EXPECT_EQ(FgdScore(1e300, -1e300), 100);
}

TEST(FgdScoreTest, EqualsTruncatedSigmoidAndIsMonotone) {
  // Every fragmentation drop a node of up to 10 GPUs can see, in steps of 0.5 milli.
  int64_t last = -1;
  for (int step = -20000; step <= 20000; ++step) {
    const double x = step * 0.0005;
    const int64_t got = FgdScore(x * 1000.0, 0.0);
    ASSERT_EQ(got, Reference(x)) << "x = " << x;
    ASSERT_GE(got, last) << "x = " << x;
    last = got;
  }
  EXPECT_EQ(FgdScore(0, 10000), 0);
  EXPECT_EQ(FgdScore(10000, 0), 99);
}

}  // namespace
}  // namespace gantry
