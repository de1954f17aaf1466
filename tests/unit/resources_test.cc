#include "model/resources.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace gantry {
namespace {

using Entry = ResourceVector::Entry;

constexpr Milli kGi = 1024LL * 1024 * 1024 * kMilliPerUnit;  // one GiB of memory, in milli-bytes

TEST(ResourceNamesTest, WellKnownNamesHaveFixedIds) {
  EXPECT_EQ(InternResource("cpu"), kCpu);
  EXPECT_EQ(InternResource("memory"), kMemory);
  EXPECT_EQ(InternResource("nvidia.com/gpu"), kGpu);
  EXPECT_EQ(InternResource("pods"), kPods);
  EXPECT_EQ(kCpu, 0u);
  EXPECT_EQ(kMemory, 1u);
  EXPECT_EQ(kGpu, 2u);
  EXPECT_EQ(kPods, 3u);
  EXPECT_EQ(ResourceName(kCpu), "cpu");
  EXPECT_EQ(ResourceName(kMemory), "memory");
  EXPECT_EQ(ResourceName(kGpu), "nvidia.com/gpu");
  EXPECT_EQ(ResourceName(kPods), "pods");
  EXPECT_EQ(ResourceNames().Find("nvidia.com/gpu"), static_cast<int64_t>(kGpu));
}

TEST(ResourceNamesTest, ExtendedNamesGetStableNewIds) {
  ResourceId rdma = InternResource("rdma/hca_resources_test");
  ResourceId hugepages = InternResource("hugepages-2Mi_resources_test");
  EXPECT_GT(rdma, kPods);
  EXPECT_GT(hugepages, kPods);
  EXPECT_NE(rdma, hugepages);
  EXPECT_EQ(InternResource("rdma/hca_resources_test"), rdma);  // same name, same id
  EXPECT_EQ(ResourceName(rdma), "rdma/hca_resources_test");
  EXPECT_EQ(ResourceNames().Find("never-interned/resources_test"), -1);
}

TEST(ResourceVectorTest, GetOfAbsentIsZero) {
  ResourceVector v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.Get(kCpu), 0);
  EXPECT_EQ(v.Get(kGpu), 0);
  EXPECT_EQ(v.Get(12345), 0);
}

TEST(ResourceVectorTest, SetKeepsEntriesSortedAndWithoutZeros) {
  ResourceVector v;
  v.Set(kGpu, 8000);
  v.Set(kCpu, 2000);
  v.Set(kMemory, 5);
  EXPECT_EQ(v.entries(), (std::vector<Entry>{{kCpu, 2000}, {kMemory, 5}, {kGpu, 8000}}));
  EXPECT_EQ(v.Get(kCpu), 2000);
  EXPECT_EQ(v.Get(kMemory), 5);
  EXPECT_EQ(v.Get(kGpu), 8000);
  EXPECT_EQ(v.Get(kPods), 0);

  v.Set(kCpu, 3000);  // overwrite
  EXPECT_EQ(v.Get(kCpu), 3000);
  EXPECT_EQ(v.entries().size(), 3u);

  v.Set(kMemory, 0);  // zero removes
  EXPECT_EQ(v.entries(), (std::vector<Entry>{{kCpu, 3000}, {kGpu, 8000}}));
  v.Set(kPods, 0);  // zero of an absent entry adds nothing
  EXPECT_EQ(v.entries().size(), 2u);
  v.Set(kCpu, 0);
  v.Set(kGpu, 0);
  EXPECT_TRUE(v.empty());
}

TEST(ResourceVectorTest, InitializerListSortsDropsZerosAndLastWins) {
  ResourceVector v{{kGpu, 1000}, {kCpu, 500}, {kMemory, 0}, {kCpu, 700}};
  EXPECT_EQ(v.entries(), (std::vector<Entry>{{kCpu, 700}, {kGpu, 1000}}));
  // Equality does not depend on the order the entries were given in.
  EXPECT_EQ(v, (ResourceVector{{kCpu, 700}, {kGpu, 1000}}));
  EXPECT_NE(v, (ResourceVector{{kCpu, 700}}));
}

TEST(ResourceVectorTest, NegativeAmountsAreKept) {
  ResourceVector v{{kCpu, -5}};
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(v.Get(kCpu), -5);
}

struct ArithmeticCase {
  const char* name;
  ResourceVector a;
  ResourceVector b;
  ResourceVector sum;
  ResourceVector difference;  // a - b
};

class ResourceArithmeticTest : public ::testing::TestWithParam<ArithmeticCase> {};

TEST_P(ResourceArithmeticTest, AddAndSubtractElementWise) {
  const ArithmeticCase& c = GetParam();
  ResourceVector sum = c.a;
  sum.Add(c.b);
  EXPECT_EQ(sum, c.sum) << c.name << ": " << sum.ToString();
  ResourceVector difference = c.a;
  difference.Subtract(c.b);
  EXPECT_EQ(difference, c.difference) << c.name << ": " << difference.ToString();
  // Checked addition agrees with Add when nothing overflows.
  ResourceVector checked = c.a;
  EXPECT_TRUE(checked.CheckedAddInPlace(c.b)) << c.name;
  EXPECT_EQ(checked, c.sum) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResourceArithmeticTest,
    ::testing::Values(
        ArithmeticCase{"disjoint", {{kCpu, 1000}}, {{kGpu, 2000}}, {{kCpu, 1000}, {kGpu, 2000}},
                       {{kCpu, 1000}, {kGpu, -2000}}},
        ArithmeticCase{"overlapping",
                       {{kCpu, 1000}, {kMemory, 5}},
                       {{kCpu, 500}, {kGpu, 2000}},
                       {{kCpu, 1500}, {kMemory, 5}, {kGpu, 2000}},
                       {{kCpu, 500}, {kMemory, 5}, {kGpu, -2000}}},
        ArithmeticCase{"to zero removes the entry",
                       {{kCpu, 1000}, {kGpu, 3000}},
                       {{kCpu, 1000}},
                       {{kCpu, 2000}, {kGpu, 3000}},
                       {{kGpu, 3000}}},
        ArithmeticCase{"opposite signs cancel in the sum",
                       {{kMemory, 7}},
                       {{kMemory, -7}},
                       {},
                       {{kMemory, 14}}},
        ArithmeticCase{"empty right", {{kPods, 3000}}, {}, {{kPods, 3000}}, {{kPods, 3000}}},
        ArithmeticCase{"empty left", {}, {{kPods, 3000}}, {{kPods, 3000}}, {{kPods, -3000}}},
        ArithmeticCase{"both empty", {}, {}, {}, {}}),
    [](const ::testing::TestParamInfo<ArithmeticCase>& info) {
      std::string name = info.param.name;
      for (char& ch : name) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

TEST(ResourceVectorTest, CheckedAddRefusesOverflowAndLeavesThisUnchanged) {
  // The first resource (cpu) would fit, the second (gpu) overflows: nothing changes.
  ResourceVector v{{kCpu, 1000}, {kGpu, INT64_MAX - 10}};
  const ResourceVector before = v;
  EXPECT_FALSE(v.CheckedAddInPlace(ResourceVector{{kCpu, 1}, {kGpu, 11}}));
  EXPECT_EQ(v, before);

  // Exactly up to the limit is fine.
  EXPECT_TRUE(v.CheckedAddInPlace(ResourceVector{{kCpu, 1}, {kGpu, 10}}));
  EXPECT_EQ(v, (ResourceVector{{kCpu, 1001}, {kGpu, INT64_MAX}}));

  // Overflow downwards too.
  ResourceVector low{{kMemory, INT64_MIN + 1}};
  EXPECT_FALSE(low.CheckedAddInPlace(ResourceVector{{kMemory, -2}}));
  EXPECT_EQ(low.Get(kMemory), INT64_MIN + 1);

  // A resource absent from *this starts at zero.
  ResourceVector empty;
  EXPECT_TRUE(empty.CheckedAddInPlace(ResourceVector{{kPods, INT64_MAX}}));
  EXPECT_EQ(empty.Get(kPods), INT64_MAX);
}

struct FitCase {
  const char* name;
  ResourceVector request;
  ResourceVector limit;
  bool fits;          // FitsIn: a resource missing from the limit counts as zero
  bool fits_named;    // FitsInNamed: a resource missing from the limit is unlimited
  int64_t first;      // FirstExceeding(limit, named_only=false)
  int64_t first_named;  // FirstExceeding(limit, named_only=true)
};

class ResourceFitTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(ResourceFitTest, ComparesPerResource) {
  const FitCase& c = GetParam();
  EXPECT_EQ(c.request.FitsIn(c.limit), c.fits) << c.name;
  EXPECT_EQ(c.request.FitsInNamed(c.limit), c.fits_named) << c.name;
  EXPECT_EQ(c.request.FirstExceeding(c.limit, /*named_only=*/false), c.first) << c.name;
  EXPECT_EQ(c.request.FirstExceeding(c.limit, /*named_only=*/true), c.first_named) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResourceFitTest,
    ::testing::Values(
        FitCase{"equal fits", {{kCpu, 2000}}, {{kCpu, 2000}}, true, true, -1, -1},
        FitCase{"one milli over", {{kCpu, 2001}}, {{kCpu, 2000}}, false, false, kCpu, kCpu},
        FitCase{"empty request fits anything", {}, {{kCpu, 1}}, true, true, -1, -1},
        FitCase{"empty request fits empty limit", {}, {}, true, true, -1, -1},
        FitCase{"unnamed resource: zero for FitsIn, unlimited for FitsInNamed",
                {{kGpu, 1000}},
                {{kCpu, 5000}},
                false,
                true,
                kGpu,
                -1},
        FitCase{"first exceeding in id order",
                {{kCpu, 3000}, {kMemory, 10}, {kGpu, 1000}},
                {{kCpu, 2000}, {kMemory, 5}},
                false,
                false,
                kCpu,
                kCpu},
        FitCase{"cpu fits, memory is the first over",
                {{kCpu, 3000}, {kMemory, 10}, {kGpu, 1000}},
                {{kCpu, 5000}, {kMemory, 5}},
                false,
                false,
                kMemory,
                kMemory},
        FitCase{"only an unnamed resource exceeds",
                {{kCpu, 3000}, {kMemory, 10}, {kGpu, 1000}},
                {{kCpu, 5000}, {kMemory, 10}},
                false,
                true,
                kGpu,
                -1},
        FitCase{"named resource after an unnamed one",
                {{kCpu, 1000}, {kPods, 2000}},
                {{kPods, 1000}},
                false,
                false,
                kCpu,
                kPods},
        FitCase{"limit has extra resources", {{kMemory, 10}}, {{kCpu, 1}, {kMemory, 10}, {kGpu, 1}},
                true, true, -1, -1},
        FitCase{"negative amount fits a missing limit", {{kCpu, -1}}, {}, true, true, -1, -1}),
    [](const ::testing::TestParamInfo<FitCase>& info) { return "case" + std::to_string(info.index); });

TEST(ResourceVectorTest, ToStringInIdOrderWithBinaryMemory) {
  EXPECT_EQ(ResourceVector().ToString(), "none");
  EXPECT_EQ((ResourceVector{{kGpu, 8000}, {kMemory, 64 * kGi}, {kCpu, 2000}}).ToString(),
            "cpu=2, memory=64Gi, nvidia.com/gpu=8");
  EXPECT_EQ((ResourceVector{{kCpu, 500}}).ToString(), "cpu=500m");
  EXPECT_EQ((ResourceVector{{kCpu, 1500}, {kGpu, 250}}).ToString(), "cpu=1500m, nvidia.com/gpu=250m");
  // Only memory is written in binary units: 1024 cpus stay "1024".
  EXPECT_EQ((ResourceVector{{kCpu, 1024 * kMilliPerUnit}}).ToString(), "cpu=1024");
  EXPECT_EQ((ResourceVector{{kMemory, 1000 * kMilliPerUnit}}).ToString(), "memory=1000");
  ResourceId foo = InternResource("example.com/foo_resources_test");
  EXPECT_EQ((ResourceVector{{foo, 3000}, {kPods, 110000}}).ToString(),
            "pods=110, example.com/foo_resources_test=3");
}

TEST(ResourceVectorTest, MinAndMaxTreatMissingAsZero) {
  ResourceVector a{{kCpu, 2000}, {kMemory, 5}};
  ResourceVector b{{kCpu, 3000}, {kGpu, 1000}};
  EXPECT_EQ(Min(a, b), (ResourceVector{{kCpu, 2000}}));
  EXPECT_EQ(Min(b, a), (ResourceVector{{kCpu, 2000}}));
  EXPECT_EQ(Max(a, b), (ResourceVector{{kCpu, 3000}, {kMemory, 5}, {kGpu, 1000}}));
  EXPECT_EQ(Max(b, a), (ResourceVector{{kCpu, 3000}, {kMemory, 5}, {kGpu, 1000}}));
  EXPECT_EQ(Min(a, ResourceVector()), ResourceVector());
  EXPECT_EQ(Max(a, ResourceVector()), a);
}

}  // namespace
}  // namespace gantry
