#include "engine/gpu_placement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gantry {
namespace {

GpuModelId Model(const char* name) {
  return GpuModels().Intern(name);
}

// One node's devices and their free state, owned here so that NodeGpus can view them.
struct FakeNode {
  std::vector<GpuDevice> devices;
  std::vector<int32_t> free_milli;
  std::vector<int64_t> free_memory;

  // `domains[i]` is device i's NVLink domain; all free, 80000 MiB, model A100.
  static FakeNode WithDomains(std::vector<int32_t> domains, int64_t memory_mib = 80000) {
    FakeNode n;
    for (int32_t d : domains) {
      GpuDevice g;
      g.model = Model("A100-80GB");
      g.memory_mib = memory_mib;
      g.nvlink_domain = d;
      n.devices.push_back(g);
      n.free_milli.push_back(kGpuMilliWhole);
      n.free_memory.push_back(memory_mib);
    }
    return n;
  }

  FakeNode& Use(int32_t device, int32_t milli, int64_t memory_mib = 0) {
    free_milli[device] -= milli;
    free_memory[device] -= memory_mib;
    return *this;
  }

  NodeGpus view() const { return NodeGpus{devices, free_milli, free_memory}; }
};

GpuRequest Whole(int32_t count, std::vector<GpuModelId> models = {}) {
  GpuRequest r;
  r.count = count;
  r.models = std::move(models);
  return r;
}

GpuRequest Shared(int32_t milli, int64_t memory_mib = 0, std::vector<GpuModelId> models = {}) {
  GpuRequest r;
  r.milli = milli;
  r.memory_mib = memory_mib;
  r.models = std::move(models);
  return r;
}

const char* PackingName(GpuPacking p) {
  switch (p) {
    case GpuPacking::kNone:
      return "none";
    case GpuPacking::kTight:
      return "tight";
    case GpuPacking::kLoose:
      return "loose";
  }
  return "?";
}

TEST(ChooseGpusTest, NoGpuWantedChoosesNothingAndClearsTheChoice) {
  FakeNode node = FakeNode::WithDomains({0, 0});
  GpuChoice choice;
  choice.devices = {1};
  choice.milli_each = 500;
  choice.memory_each = 7;
  EXPECT_TRUE(ChooseGpus(GpuRequest{}, node.view(), GpuPacking::kTight, &choice));
  EXPECT_TRUE(choice.devices.empty());
  EXPECT_EQ(choice.milli_each, 0);
  EXPECT_EQ(choice.memory_each, 0);
  // Also on a node without GPUs.
  FakeNode none;
  EXPECT_TRUE(ChooseGpus(GpuRequest{}, none.view(), GpuPacking::kLoose, &choice));
  EXPECT_TRUE(choice.devices.empty());
}

// ---------------------------------------------------------------- whole GPUs

struct WholeCase {
  const char* name;
  std::vector<int32_t> domains;
  std::vector<int32_t> used;  // devices fully used
  int32_t count;
  GpuPacking packing;
  bool fits;
  std::vector<int32_t> devices;
};

class ChooseWholeTest : public ::testing::TestWithParam<WholeCase> {};

TEST_P(ChooseWholeTest, Chooses) {
  const WholeCase& c = GetParam();
  FakeNode node = FakeNode::WithDomains(c.domains);
  for (int32_t d : c.used) node.Use(d, kGpuMilliWhole);
  GpuChoice choice;
  bool fits = ChooseGpus(Whole(c.count), node.view(), c.packing, &choice);
  ASSERT_EQ(fits, c.fits) << c.name << " (" << PackingName(c.packing) << ")";
  if (!fits) return;
  EXPECT_EQ(choice.devices, c.devices) << c.name << " (" << PackingName(c.packing) << ")";
  EXPECT_EQ(choice.milli_each, kGpuMilliWhole);
  EXPECT_EQ(choice.memory_each, 0);
}

const std::vector<int32_t> kTwoDomains = {0, 0, 0, 0, 1, 1, 1, 1};

INSTANTIATE_TEST_SUITE_P(
    Cases, ChooseWholeTest,
    ::testing::Values(
        // Domain 0 has 2 free (2, 3), domain 1 has 4 free (4..7).
        WholeCase{"tight takes the domain with fewest that suffice",
                  kTwoDomains,
                  {0, 1},
                  2,
                  GpuPacking::kTight,
                  true,
                  {2, 3}},
        WholeCase{"loose takes the domain with most free",
                  kTwoDomains,
                  {0, 1},
                  2,
                  GpuPacking::kLoose,
                  true,
                  {4, 5}},
        WholeCase{"tight skips a domain that is too small",
                  kTwoDomains,
                  {0, 1},
                  3,
                  GpuPacking::kTight,
                  true,
                  {4, 5, 6}},
        WholeCase{"a whole domain", kTwoDomains, {0, 1}, 4, GpuPacking::kTight, true, {4, 5, 6, 7}},
        WholeCase{"no domain has room: lowest indexes",
                  kTwoDomains,
                  {0, 1},
                  5,
                  GpuPacking::kTight,
                  true,
                  {2, 3, 4, 5, 6}},
        WholeCase{"no domain has room, loose: lowest indexes too",
                  kTwoDomains,
                  {0, 1},
                  5,
                  GpuPacking::kLoose,
                  true,
                  {2, 3, 4, 5, 6}},
        WholeCase{"not enough free devices", kTwoDomains, {0, 1}, 7, GpuPacking::kTight, false, {}},
        WholeCase{"all free, tie between domains: the first",
                  kTwoDomains,
                  {},
                  2,
                  GpuPacking::kTight,
                  true,
                  {0, 1}},
        WholeCase{"all free, tie between domains, loose: the first",
                  kTwoDomains,
                  {},
                  2,
                  GpuPacking::kLoose,
                  true,
                  {0, 1}},
        WholeCase{
            "all eight", kTwoDomains, {}, 8, GpuPacking::kTight, true, {0, 1, 2, 3, 4, 5, 6, 7}},
        // Interleaved domains: 0 = {0, 2, 4}, 1 = {1, 3, 5}; device 0 used.
        WholeCase{
            "interleaved, tight", {0, 1, 0, 1, 0, 1}, {0}, 2, GpuPacking::kTight, true, {2, 4}},
        WholeCase{
            "interleaved, loose", {0, 1, 0, 1, 0, 1}, {0}, 2, GpuPacking::kLoose, true, {1, 3}},
        WholeCase{"interleaved, one device tight",
                  {0, 1, 0, 1, 0, 1},
                  {0},
                  1,
                  GpuPacking::kTight,
                  true,
                  {2}},
        WholeCase{"interleaved, one device loose",
                  {0, 1, 0, 1, 0, 1},
                  {0},
                  1,
                  GpuPacking::kLoose,
                  true,
                  {1}},
        // Three domains with 1, 3 and 2 free: tight wants 2 -> domain 2, loose -> domain 1.
        WholeCase{"three domains tight",
                  {0, 0, 0, 1, 1, 1, 2, 2, 2},
                  {0, 1, 6},
                  2,
                  GpuPacking::kTight,
                  true,
                  {7, 8}},
        WholeCase{"three domains loose",
                  {0, 0, 0, 1, 1, 1, 2, 2, 2},
                  {0, 1, 6},
                  2,
                  GpuPacking::kLoose,
                  true,
                  {3, 4}},
        WholeCase{"kNone packs like tight",
                  {0, 0, 0, 1, 1, 1, 2, 2, 2},
                  {0, 1, 6},
                  2,
                  GpuPacking::kNone,
                  true,
                  {7, 8}},
        WholeCase{"no devices", {}, {}, 1, GpuPacking::kTight, false, {}}),
    [](const ::testing::TestParamInfo<WholeCase>& info) {
      return "case" + std::to_string(info.index);
    });

// gpu_placement.h: "all within one NVLink domain when one has room". Domain numbers are
// labels, not small indexes: a node whose two domains are numbered 16 and 17 must be
// treated like one numbered 0 and 1.
TEST(ChooseGpusTest, WholeKeepsToOneDomainWhateverItsNumber) {
  for (int32_t base : {0, 16, 1000}) {
    FakeNode node = FakeNode::WithDomains({base, base, base + 1, base + 1});
    node.Use(0, kGpuMilliWhole);  // domain `base` has 1 free, domain `base + 1` has 2
    GpuChoice choice;
    ASSERT_TRUE(ChooseGpus(Whole(2), node.view(), GpuPacking::kTight, &choice)) << base;
    EXPECT_EQ(choice.devices, (std::vector<int32_t>{2, 3}))
        << "domains " << base << ", " << base + 1;
  }
}

// A node whose devices share one NVLink domain takes a shortcut (no per-domain count): it
// must choose exactly what the general path chooses, for every free pattern and count.
TEST(ChooseGpusTest, OneDomainShortcutChoosesAsTheGeneralPath) {
  const GpuModelId other = Model("H100-80GB");
  for (uint32_t pattern = 0; pattern < (1u << 8); ++pattern) {
    FakeNode node = FakeNode::WithDomains({3, 3, 3, 3, 3, 3, 3, 3});
    for (int32_t d = 0; d < 8; ++d) {
      if (pattern & (1u << d)) node.Use(d, d % 2 == 0 ? kGpuMilliWhole : 300);
    }
    node.devices[5].model = other;
    for (int32_t count = 1; count <= 8; ++count) {
      for (const GpuRequest& request : {Whole(count), Whole(count, {Model("A100-80GB")})}) {
        for (GpuPacking packing : {GpuPacking::kTight, GpuPacking::kLoose}) {
          NodeGpus general = node.view();
          NodeGpus shortcut = node.view();
          shortcut.one_nvlink_domain = true;
          GpuChoice a, b;
          const bool fits = ChooseGpus(request, general, packing, &a);
          EXPECT_EQ(ChooseGpus(request, shortcut, packing, &b), fits)
              << "pattern " << pattern << " count " << count;
          EXPECT_EQ(a.devices, b.devices) << "pattern " << pattern << " count " << count;
          EXPECT_EQ(a.milli_each, b.milli_each);
          EXPECT_EQ(a.memory_each, b.memory_each);
        }
      }
    }
  }
}

TEST(ChooseGpusTest, WholeSkipsPartlyUsedDevices) {
  // Device 0 has 999 free: not a whole GPU. Domain 0 then has only device 1.
  FakeNode node = FakeNode::WithDomains({0, 0, 1, 1});
  node.Use(0, 1);
  GpuChoice choice;
  ASSERT_TRUE(ChooseGpus(Whole(1), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{1}));
  ASSERT_TRUE(ChooseGpus(Whole(2), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{2, 3}));
  ASSERT_TRUE(ChooseGpus(Whole(3), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_FALSE(ChooseGpus(Whole(4), node.view(), GpuPacking::kTight, &choice));
}

TEST(ChooseGpusTest, WholeHonoursTheModelFilter) {
  // Devices alternate A100, H100; domains of 4: domain 0 = {0..3}, domain 1 = {4..7}.
  FakeNode node = FakeNode::WithDomains(kTwoDomains);
  const GpuModelId a100 = Model("A100-80GB");
  const GpuModelId h100 = Model("H100-80GB");
  for (size_t i = 0; i < node.devices.size(); ++i) node.devices[i].model = i % 2 ? h100 : a100;
  GpuChoice choice;
  ASSERT_TRUE(ChooseGpus(Whole(2, {h100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{1, 3}));
  ASSERT_TRUE(ChooseGpus(Whole(2, {a100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{0, 2}));
  // Three H100s: no domain has three, so the lowest three H100 indexes.
  ASSERT_TRUE(ChooseGpus(Whole(3, {h100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{1, 3, 5}));
  // Used H100 3: domain 0 has one H100 free, domain 1 two. Tight for 1 takes domain 0.
  node.Use(3, kGpuMilliWhole);
  ASSERT_TRUE(ChooseGpus(Whole(1, {h100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{1}));
  ASSERT_TRUE(ChooseGpus(Whole(2, {h100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{5, 7}));
  EXPECT_FALSE(ChooseGpus(Whole(4, {h100}), node.view(), GpuPacking::kTight, &choice));
  // Either model: the list allows both.
  ASSERT_TRUE(ChooseGpus(Whole(4, {a100, h100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{4, 5, 6, 7}));
  // A model the node lacks.
  EXPECT_FALSE(
      ChooseGpus(Whole(1, {Model("V100-32GB")}), node.view(), GpuPacking::kTight, &choice));
}

// ---------------------------------------------------------------- shared GPUs

struct SharedCase {
  const char* name;
  std::vector<int32_t> free_milli;
  std::vector<int64_t> free_memory;  // empty: all 80000
  GpuRequest request;
  GpuPacking packing;
  int32_t device;  // -1: does not fit
  int32_t milli_each;
};

class ChooseSharedTest : public ::testing::TestWithParam<SharedCase> {};

TEST_P(ChooseSharedTest, Chooses) {
  const SharedCase& c = GetParam();
  FakeNode node = FakeNode::WithDomains(std::vector<int32_t>(c.free_milli.size(), 0));
  node.free_milli = c.free_milli;
  if (!c.free_memory.empty()) node.free_memory = c.free_memory;
  GpuChoice choice;
  bool fits = ChooseGpus(c.request, node.view(), c.packing, &choice);
  ASSERT_EQ(fits, c.device >= 0) << c.name;
  if (!fits) return;
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{c.device})) << c.name;
  EXPECT_EQ(choice.milli_each, c.milli_each) << c.name;
  EXPECT_EQ(choice.memory_each, c.request.memory_mib) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ChooseSharedTest,
    ::testing::Values(
        // Free 1000, 400, 700, 100: a 300 share fits 0, 1 and 2.
        SharedCase{"tight: least room left",
                   {1000, 400, 700, 100},
                   {},
                   Shared(300),
                   GpuPacking::kTight,
                   1,
                   300},
        SharedCase{
            "loose: most room", {1000, 400, 700, 100}, {}, Shared(300), GpuPacking::kLoose, 0, 300},
        SharedCase{
            "kNone: like tight", {1000, 400, 700, 100}, {}, Shared(300), GpuPacking::kNone, 1, 300},
        SharedCase{"exact fit is tightest",
                   {1000, 400, 700, 300},
                   {},
                   Shared(300),
                   GpuPacking::kTight,
                   3,
                   300},
        SharedCase{"tie: lowest index (tight)",
                   {300, 600, 600},
                   {},
                   Shared(500),
                   GpuPacking::kTight,
                   1,
                   500},
        SharedCase{"tie: lowest index (loose)",
                   {1000, 600, 1000},
                   {},
                   Shared(500),
                   GpuPacking::kLoose,
                   0,
                   500},
        SharedCase{"nothing has room", {400, 0, 499}, {}, Shared(500), GpuPacking::kTight, -1, 0},
        // 20000 MiB of an 80000 MiB device is a 250 share, more than the 100 asked.
        SharedCase{"memory raises the share",
                   {1000, 200, 260},
                   {},
                   Shared(100, 20000),
                   GpuPacking::kTight,
                   2,
                   250},
        // Device 0 has the share but not the memory.
        SharedCase{"memory limit (tight)",
                   {900, 600, 1000},
                   {10000, 40000, 80000},
                   Shared(100, 20000),
                   GpuPacking::kTight,
                   1,
                   250},
        SharedCase{"memory limit (loose)",
                   {900, 600, 1000},
                   {10000, 40000, 80000},
                   Shared(100, 20000),
                   GpuPacking::kLoose,
                   2,
                   250},
        SharedCase{"memory exactly free",
                   {900, 900},
                   {19999, 20000},
                   Shared(100, 20000),
                   GpuPacking::kTight,
                   1,
                   250},
        SharedCase{"no device has the memory",
                   {1000, 1000},
                   {10000, 19999},
                   Shared(0, 20000),
                   GpuPacking::kTight,
                   -1,
                   0}),
    [](const ::testing::TestParamInfo<SharedCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(ChooseGpusTest, SharedHonoursTheModelFilter) {
  FakeNode node = FakeNode::WithDomains({0, 0, 0});
  const GpuModelId h100 = Model("H100-80GB");
  node.devices[2].model = h100;
  node.Use(0, 800);  // device 0 would be the tightest for anyone
  GpuChoice choice;
  ASSERT_TRUE(ChooseGpus(Shared(100, 0, {h100}), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{2}));
  ASSERT_TRUE(ChooseGpus(Shared(100), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{0}));
  EXPECT_FALSE(
      ChooseGpus(Shared(100, 0, {Model("V100-32GB")}), node.view(), GpuPacking::kTight, &choice));
}

TEST(ChooseGpusTest, MemoryRequestOnDeviceOfUnknownMemoryNeedsAFreeDevice) {
  // Unknown device memory: a memory request cannot be sized and takes a whole device.
  FakeNode node = FakeNode::WithDomains({0, 0}, /*memory_mib=*/0);
  node.Use(0, 500);
  GpuChoice choice;
  ASSERT_TRUE(ChooseGpus(Shared(200, 1000000), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{1}));
  EXPECT_EQ(choice.milli_each, 1000);
  EXPECT_EQ(choice.memory_each, 1000000);
  // Without a memory request the milli share counts: device 0 is the tighter.
  ASSERT_TRUE(ChooseGpus(Shared(200), node.view(), GpuPacking::kTight, &choice));
  EXPECT_EQ(choice.devices, (std::vector<int32_t>{0}));
  EXPECT_EQ(choice.milli_each, 200);
  node.Use(1, 1);
  EXPECT_FALSE(ChooseGpus(Shared(200, 1), node.view(), GpuPacking::kTight, &choice));
}

}  // namespace
}  // namespace gantry
