// AllocatedState: which devices are taken, counted per allocation, and read through an
// overlay (a session's state over the cluster's) exactly as a state built whole.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "model/dra_inventory.h"

namespace gantry::dra {
namespace {

constexpr const char* kDriver = "gpu.example.com";
constexpr const char* kPool = "node-0";

AllocationResult Whole(const std::string& device) {
  AllocationResult result;
  result.request = "gpu";
  result.driver = kDriver;
  result.pool = kPool;
  result.device = device;
  return result;
}

AllocationResult Share(const std::string& device, const std::string& share_id, Milli memory) {
  AllocationResult result = Whole(device);
  result.share_id = share_id;
  if (memory > 0) result.consumed_capacity["memory"] = memory;
  return result;
}

Allocation Of(std::vector<AllocationResult> results) {
  Allocation allocation;
  allocation.results = std::move(results);
  return allocation;
}

std::string Key(const std::string& device) {
  return DeviceKey(kDriver, kPool, device);
}

TEST(AllocatedState, AnOverlayReadsItsBaseAndChangesOnlyItself) {
  AllocatedState base;
  const Allocation a = Of({Whole("gpu-0")});
  base.Add(a);

  AllocatedState session(&base);
  EXPECT_FALSE(session.empty());
  EXPECT_TRUE(session.Dedicated(Key("gpu-0")));
  EXPECT_FALSE(session.Allocated(Key("gpu-1")));

  session.Add(Of({Whole("gpu-1")}));
  session.Remove(a);
  EXPECT_FALSE(session.Allocated(Key("gpu-0")));  // freed in the session
  EXPECT_TRUE(session.Dedicated(Key("gpu-1")));
  EXPECT_TRUE(base.Dedicated(Key("gpu-0")));  // the base is as it was
  EXPECT_FALSE(base.Allocated(Key("gpu-1")));

  session.Add(a);  // taken again in the session
  EXPECT_TRUE(session.Dedicated(Key("gpu-0")));
}

TEST(AllocatedState, RemoveUndoesOneAllocationOfADeviceHeldTwice) {
  AllocatedState state;
  const Allocation first = Of({Whole("gpu-0")});
  const Allocation second = Of({Whole("gpu-0")});  // a second claim on it (a race)
  state.Add(first);
  state.Add(second);
  state.Remove(first);
  EXPECT_TRUE(state.Dedicated(Key("gpu-0")));
  state.Remove(second);
  EXPECT_FALSE(state.Allocated(Key("gpu-0")));
  EXPECT_TRUE(state.empty());
  state.Remove(second);  // nothing left to undo
  EXPECT_FALSE(state.Allocated(Key("gpu-0")));
}

TEST(AllocatedState, SharesAndTheirCapacityThroughAnOverlay) {
  AllocatedState base;
  const Allocation a = Of({Share("gpu-0", "s-a", 4'000)});
  base.Add(a);
  AllocatedState session(&base);
  session.Add(Of({Share("gpu-0", "s-b", 6'000)}));
  ASSERT_NE(session.ConsumedCapacity(Key("gpu-0")), nullptr);
  EXPECT_EQ(session.ConsumedCapacity(Key("gpu-0"))->at("memory"), 10'000);
  EXPECT_EQ(base.ConsumedCapacity(Key("gpu-0"))->at("memory"), 4'000);
  EXPECT_TRUE(session.HasShareId(Key("gpu-0"), "s-a"));
  EXPECT_TRUE(session.HasShareId(Key("gpu-0"), "s-b"));
  EXPECT_FALSE(base.HasShareId(Key("gpu-0"), "s-b"));

  session.Remove(a);
  EXPECT_FALSE(session.HasShareId(Key("gpu-0"), "s-a"));
  EXPECT_EQ(session.ConsumedCapacity(Key("gpu-0"))->at("memory"), 6'000);
  EXPECT_TRUE(session.Shared(Key("gpu-0")));
  EXPECT_FALSE(session.Dedicated(Key("gpu-0")));
}

// Random allocations: a base holding some, an overlay adding the rest and adding then
// removing others, against one state built from exactly what remains. Fixed seeds.
TEST(AllocatedState, AnOverlayAnswersAsAStateBuiltWhole) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 random(seed);
    auto pick = [&](int n) { return static_cast<int>(random() % static_cast<uint32_t>(n)); };
    std::vector<Allocation> allocations;
    for (int i = 0; i < 40; ++i) {
      std::vector<AllocationResult> results;
      for (int r = 0, n = 1 + pick(3); r < n; ++r) {
        const std::string device = "gpu-" + std::to_string(pick(24));
        results.push_back(pick(2) == 0
                              ? Whole(device)
                              : Share(device, "s-" + std::to_string(i) + "-" + std::to_string(r),
                                      1'000 * pick(3)));
      }
      allocations.push_back(Of(std::move(results)));
    }
    AllocatedState base;
    AllocatedState whole;
    for (int i = 0; i < 20; ++i) base.Add(allocations[i]);
    AllocatedState overlay(&base);
    for (int i = 20; i < 30; ++i) overlay.Add(allocations[i]);
    for (int i = 30; i < 40; ++i) overlay.Add(allocations[i]);
    for (int i = 35; i < 40; ++i) overlay.Remove(allocations[i]);  // undone in the session
    for (int i = 0; i < 5; ++i) overlay.Remove(allocations[i]);    // the base's, freed
    for (int i = 5; i < 35; ++i) whole.Add(allocations[i]);

    for (int d = 0; d < 24; ++d) {
      const std::string key = Key("gpu-" + std::to_string(d));
      SCOPED_TRACE(key);
      EXPECT_EQ(overlay.Dedicated(key), whole.Dedicated(key));
      EXPECT_EQ(overlay.Shared(key), whole.Shared(key));
      EXPECT_EQ(overlay.Allocated(key), whole.Allocated(key));
      const auto* got = overlay.ConsumedCapacity(key);
      const auto* want = whole.ConsumedCapacity(key);
      ASSERT_EQ(got == nullptr, want == nullptr);
      if (got != nullptr) {
        EXPECT_EQ(*got, *want);
      }
      for (int i = 0; i < 40; ++i) {
        for (int r = 0; r < 3; ++r) {
          const std::string id = "s-" + std::to_string(i) + "-" + std::to_string(r);
          EXPECT_EQ(overlay.HasShareId(key, id), whole.HasShareId(key, id)) << id;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gantry::dra
