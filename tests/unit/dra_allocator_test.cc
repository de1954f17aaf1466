// The DRA structured allocator (src/engine/dra/). Cases named "upstream:" are ports of
// k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting (v0.37.2) with
// its expected results (and, where it counts them, its allocateOne calls); the others are
// written by hand, each built so that an allocator ignoring the feature answers otherwise.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/dra/allocator.h"

namespace gantry::dra {
namespace {

constexpr const char* kNode1 = "node-1";
constexpr const char* kDriverA = "driver-a";
constexpr const char* kClassA = "class-a";
constexpr const char* kClassSelector = R"(device.driver == "driver-a")";
constexpr Milli kGi = 1024LL * 1024 * 1024 * 1000;

// Verdicts from a table: (expression, "driver/pool/device") first, then (expression,
// "driver/*"), then (expression, "*"). A missing verdict, or one set to an error, is a
// CEL runtime error.
class TableVerdicts : public SelectorVerdicts {
 public:
  void Set(const std::string& expression, const std::string& device, bool verdict) {
    table_[{expression, device}] = verdict;
  }
  void SetError(const std::string& expression, const std::string& device) {
    errors_.insert({expression, device});
  }
  Result<bool> Matches(std::string_view expression, const DeviceRef& device) const override {
    ++calls;
    const std::string key = DeviceKey(device.driver, device.pool, device.device.name);
    const std::string driver_wide = std::string(device.driver) + "/*";
    for (const std::string& which : {key, driver_wide, std::string("*")}) {
      std::pair<std::string, std::string> entry{std::string(expression), which};
      if (errors_.count(entry) > 0) return Status::Failed("no such key: memory");
      if (auto it = table_.find(entry); it != table_.end()) return it->second;
    }
    return Status::Failed("no verdict for " + std::string(expression) + " on " + key);
  }
  mutable int calls = 0;

 private:
  std::map<std::pair<std::string, std::string>, bool> table_;
  std::set<std::pair<std::string, std::string>> errors_;
};

Device MakeDevice(const std::string& name,
                  std::map<QualifiedName, AttributeValue> attributes = {}) {
  Device device;
  device.name = name;
  device.attributes = std::move(attributes);
  return device;
}

ResourceSlice MakeSlice(const std::string& name, const std::string& node, const std::string& pool,
                        std::vector<Device> devices, int64_t generation = 1, int64_t count = 1) {
  ResourceSlice slice;
  slice.name = name;
  slice.driver = kDriverA;
  slice.pool = {pool, generation, count};
  slice.node_selection = NodeSelection{};
  slice.node_selection->node_name = node;
  slice.devices = std::move(devices);
  return slice;
}

DeviceClass MakeClass(const std::string& name = kClassA) {
  return DeviceClass{name, {kClassSelector}, {}, {}};
}

DeviceRequest Exactly(const std::string& name, int64_t count = 1,
                      std::vector<std::string> selectors = {}) {
  DeviceRequest request;
  request.name = name;
  request.exactly = DeviceRequestSpec{};
  request.exactly->device_class_name = kClassA;
  request.exactly->count = count;
  request.exactly->selectors = std::move(selectors);
  return request;
}

DeviceRequest AllOf(const std::string& name) {
  DeviceRequest request = Exactly(name);
  request.exactly->allocation_mode = AllocationMode::kAll;
  request.exactly->count = 0;
  return request;
}

ResourceClaim MakeClaim(const std::string& name, std::vector<DeviceRequest> requests,
                        std::vector<DeviceConstraint> constraints = {}) {
  ResourceClaim claim;
  claim.name_space = "default";
  claim.name = name;
  claim.uid = "uid-" + name;
  claim.spec.requests = std::move(requests);
  claim.spec.constraints = std::move(constraints);
  return claim;
}

AllocationResult ResultFor(const std::string& request, const std::string& pool,
                           const std::string& device) {
  AllocationResult result;
  result.request = request;
  result.driver = kDriverA;
  result.pool = pool;
  result.device = device;
  return result;
}

// "request driver/pool/device" for each result of each allocation, one line per claim.
std::vector<std::string> Picked(const std::vector<Allocation>& allocations) {
  std::vector<std::string> lines;
  for (const Allocation& allocation : allocations) {
    std::string line;
    for (const AllocationResult& result : allocation.results) {
      if (!line.empty()) line += ", ";
      line += result.request + " " + result.driver + "/" + result.pool + "/" + result.device;
    }
    lines.push_back(line);
  }
  return lines;
}

class DraAllocatorTest : public ::testing::Test {
 protected:
  DraAllocatorTest() {
    verdicts_.Set(kClassSelector, std::string(kDriverA) + "/*", true);
    classes_.push_back(MakeClass());
  }

  Result<std::optional<std::vector<Allocation>>> Run(const std::vector<ResourceClaim>& claims) {
    Inventory inventory(slices_, classes_, taint_rules_);
    const AllocatedState state = AllocatedState::FromClaims(allocated_);
    report_ = {};
    return Allocate(inventory, NodeRef{node_name_, labels_}, claims, state, verdicts_, options_,
                    &report_);
  }
  // The devices picked, one line per claim; "no allocation" or "error: ..." otherwise.
  std::vector<std::string> Pick(const std::vector<ResourceClaim>& claims) {
    auto result = Run(claims);
    if (!result.ok()) return {"error: " + result.status().message()};
    if (!result->has_value()) return {"no allocation"};
    return Picked(**result);
  }
  // A claim already allocated `device` of pool-1 (as some other scheduler wrote it).
  void TakeDevice(const std::string& device, const std::string& pool = "pool-1") {
    ResourceClaim claim = MakeClaim("taken-" + device, {Exactly("req-0")});
    claim.allocation = Allocation{};
    claim.allocation->results.push_back(ResultFor("req-0", pool, device));
    allocated_.push_back(std::move(claim));
  }

  std::string node_name_ = kNode1;
  Labels labels_{{{"region", "region-1"}}};
  std::vector<ResourceSlice> slices_;
  std::vector<DeviceClass> classes_;
  std::vector<DeviceTaintRule> taint_rules_;
  std::vector<ResourceClaim> allocated_;
  TableVerdicts verdicts_;
  AllocateOptions options_;
  AllocateReport report_;
};

using Lines = std::vector<std::string>;

// ---- (1) pools, generations, node selection, counts, selectors, constraints, backtracking.

TEST_F(DraAllocatorTest, UpstreamSimple) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  auto result = Run({MakeClaim("claim-0", {Exactly("req-0")})});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_TRUE(result->has_value());
  const Allocation& allocation = (**result)[0];
  ASSERT_EQ(allocation.results.size(), 1u);
  EXPECT_EQ(allocation.results[0], ResultFor("req-0", "pool-1", "device-1"));
  // The device is local to the node: the allocation is pinned to it.
  const std::vector<std::vector<SelectorRequirement>> pinned{
      {{std::string(kNodeNameField), SelectorRequirement::Op::kIn, {kNode1}}}};
  EXPECT_EQ(allocation.node_selector, pinned);
}

TEST_F(DraAllocatorTest, SlicesOfOtherNodesAreNotSeen) {
  slices_.push_back(MakeSlice("slice-1", "node-2", "pool-1", {MakeDevice("device-1")}));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
  node_name_ = "node-2";
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, NoSlicesNoAllocation) {
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
}

TEST_F(DraAllocatorTest, NoClaimsIsAnEmptySuccess) {
  auto result = Run({});
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->has_value());
  EXPECT_TRUE((*result)->empty());
}

// upstream: small-and-large-backtrack-requests.
TEST_F(DraAllocatorTest, UpstreamSmallAndLargeBacktrackRequests) {
  const std::string one_gi =
      R"(device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0)";
  const std::string two_gi =
      R"(device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0)";
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-2"), MakeDevice("device-1")}));
  verdicts_.Set(one_gi, "driver-a/*", true);
  verdicts_.Set(two_gi, "driver-a/pool-1/device-2", true);
  verdicts_.Set(two_gi, "driver-a/pool-1/device-1", false);
  EXPECT_EQ(
      Pick({MakeClaim("claim-0", {Exactly("req-0", 1, {one_gi}), Exactly("req-1", 1, {two_gi})})}),
      Lines{"req-0 driver-a/pool-1/device-1, req-1 driver-a/pool-1/device-2"});
  // upstream: small-and-large-backtrack-claims: the same across two claims.
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 1, {one_gi})}),
                  MakeClaim("claim-1", {Exactly("req-1", 1, {two_gi})})}),
            (Lines{"req-0 driver-a/pool-1/device-1", "req-1 driver-a/pool-1/device-2"}));
}

// upstream: check-combinations-with-backtracking (12 allocateOne calls in incubating).
TEST_F(DraAllocatorTest, UpstreamCombinationsWithBacktracking) {
  const std::string type_x = R"(device.attributes["driver-a"].type == "X")";
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1",
                {MakeDevice("device-1"), MakeDevice("device-2"), MakeDevice("device-3")}));
  verdicts_.Set(type_x, "driver-a/*", false);
  verdicts_.Set(type_x, "driver-a/pool-1/device-1", true);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-1", 2), Exactly("req-2", 1, {type_x})})}),
            Lines{"req-1 driver-a/pool-1/device-2, req-1 driver-a/pool-1/device-3, "
                  "req-2 driver-a/pool-1/device-1"});
  EXPECT_EQ(report_.steps, 12);
}

// upstream: check-combinations-within-single-request-* (16 calls: combinations only).
TEST_F(DraAllocatorTest, UpstreamCombinationsNotPermutations) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  slices_.push_back(MakeSlice("slice-2", kNode1, "pool-1", {MakeDevice("device-2")}, 1, 2));
  slices_.push_back(
      MakeSlice("slice-3", kNode1, "pool-2", {MakeDevice("device-3"), MakeDevice("device-4")}));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 5)})}), Lines{"no allocation"});
  EXPECT_EQ(report_.steps, 16);
}

TEST_F(DraAllocatorTest, StepLimitIsAnError) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1",
                              {MakeDevice("device-1"), MakeDevice("device-2"),
                               MakeDevice("device-3"), MakeDevice("device-4")}));
  options_.max_steps = 10;
  Lines picked = Pick({MakeClaim("claim-0", {Exactly("req-0", 5)})});
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_NE(picked[0].find("error: device allocation stopped after 10 search steps"),
            std::string::npos);
}

// upstream: obsolete-slice: the newer generation has one slice of two: incomplete.
TEST_F(DraAllocatorTest, UpstreamNewestGenerationOnlyAndIncompletePool) {
  slices_.push_back(
      MakeSlice("slice-1-obsolete", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  slices_.push_back(
      MakeSlice("slice-1-obsolete", kNode1, "pool-1", {MakeDevice("device-2")}, 2, 2));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
  // Complete: the newer generation's device, never the older one's.
  slices_.back().pool.resource_slice_count = 1;
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-2"});
}

TEST_F(DraAllocatorTest, PoolCompletenessCountsSlicesOfOtherNodes) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  slices_.push_back(MakeSlice("slice-2", "node-2", "pool-1", {MakeDevice("device-2")}, 1, 2));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
  // A newer generation on another node makes the pool obsolete here.
  slices_[1].pool.generation = 2;
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
}

// upstream: duplicate-slice: two devices of one name make the pool invalid.
TEST_F(DraAllocatorTest, UpstreamInvalidPool) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  slices_.push_back(MakeSlice("slice-1-2", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
  EXPECT_EQ(report_.unschedulable_reason, "invalid resource pools were encountered");
  // upstream: invalid-pool-is-ok-if-devices-can-be-allocated-from-other.
  slices_.push_back(MakeSlice("slice-2", kNode1, "pool-2", {MakeDevice("device-1")}));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-2/device-1"});
}

TEST_F(DraAllocatorTest, PoolsInDriverAndPoolOrderSlicesByName) {
  slices_.push_back(MakeSlice("slice-b", kNode1, "pool-2", {MakeDevice("device-1")}));
  slices_.push_back(MakeSlice("slice-z", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  slices_.push_back(MakeSlice("slice-a", kNode1, "pool-1", {MakeDevice("device-2")}, 1, 2));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)})}),
            Lines{"req-0 driver-a/pool-1/device-2, req-0 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, UnknownClassIsAnError) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  DeviceRequest request = Exactly("req-0");
  request.exactly->device_class_name = "class-b";
  EXPECT_EQ(Pick({MakeClaim("claim-0", {request})}),
            Lines{"error: claim default/claim-0, request req-0: could not retrieve device class "
                  "class-b: deviceclass.resource.k8s.io \"class-b\" not found"});
}

TEST_F(DraAllocatorTest, DevicesInUseAreSkipped) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  TakeDevice("device-1");
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-2"});
  TakeDevice("device-2");
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
}

TEST_F(DraAllocatorTest, AllDevices) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {AllOf("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1, req-0 driver-a/pool-1/device-2"});
  // upstream: all-devices-some-allocated: one in use and "all" cannot be had.
  TakeDevice("device-2");
  EXPECT_EQ(Pick({MakeClaim("claim-0", {AllOf("req-0")})}), Lines{"no allocation"});
}

// upstream: all-devices-of-the-incomplete-pool.
TEST_F(DraAllocatorTest, UpstreamAllDevicesOfAnIncompletePoolIsAnError) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {AllOf("req-0")})}),
            Lines{"error: claim default/claim-0, request req-0: asks for all devices, but resource "
                  "pool driver-a/pool-1 is currently being updated"});
}

TEST_F(DraAllocatorTest, TooManyDevicesForOneClaimIsAnError) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  Lines picked = Pick({MakeClaim("claim-0", {Exactly("req-0", 33)})});
  EXPECT_EQ(picked, Lines{"error: claim default/claim-0, request req-0: adding 33 devices exceeds "
                          "the claim limit of 32, with 0 already accounted for"});
}

TEST_F(DraAllocatorTest, RequestSelectorsAndClassSelectors) {
  const std::string big = "big";
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1",
                {MakeDevice("device-1"), MakeDevice("device-2"), MakeDevice("device-3")}));
  verdicts_.Set(big, "driver-a/*", false);
  verdicts_.Set(big, "driver-a/pool-1/device-3", true);
  // The class refuses device-2 (the table's device entry wins over the driver's).
  verdicts_.Set(kClassSelector, "driver-a/pool-1/device-2", false);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 1, {big})})}),
            Lines{"req-0 driver-a/pool-1/device-3"});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)})}),
            Lines{"req-0 driver-a/pool-1/device-1, req-0 driver-a/pool-1/device-3"});
}

TEST_F(DraAllocatorTest, CelErrorsAbortButOnlyWhereEvaluated) {
  const std::string broken = "device.capacity['driver-a'].memory > 1";
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  verdicts_.SetError(broken, "driver-a/pool-1/device-1");
  verdicts_.Set(broken, "driver-a/pool-1/device-2", true);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 1, {broken})})}),
            Lines{"error: claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: "
                  "CEL runtime error: no such key: memory"});
  // A device in use is never asked about (upstream checks "in use" first).
  TakeDevice("device-1");
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 1, {broken})})}),
            Lines{"req-0 driver-a/pool-1/device-2"});
}

// upstream: with-constraint-for-request-retry.
TEST_F(DraAllocatorTest, UpstreamMatchAttributeRetry) {
  auto device = [](const char* name, const char* version, const char* text) {
    return MakeDevice(name, {{"driver-a/driverVersion", SemanticVersion{version}},
                             {"driver-a/stringAttribute", std::string(text)}});
  };
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1",
                              {device("device-1", "1.0.0", "a"), device("device-2", "2.0.0", "b"),
                               device("device-3", "3.0.0", "b")}));
  DeviceConstraint by_version{{"req-0"}, "driver-a/driverVersion", std::nullopt};
  DeviceConstraint by_string{{}, "driver-a/stringAttribute", std::nullopt};
  const ResourceClaim claim =
      MakeClaim("claim-0", {Exactly("req-0"), Exactly("req-1")}, {by_version, by_string});
  EXPECT_EQ(Pick({claim}), Lines{"req-0 driver-a/pool-1/device-2, req-1 driver-a/pool-1/device-3"});
}

TEST_F(DraAllocatorTest, MatchAttributeMissingOrOfAnotherType) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1",
                {MakeDevice("device-1", {{"driver-a/numa", int64_t{0}}}),
                 MakeDevice("device-2", {{"driver-a/numa", std::string("0")}}),
                 MakeDevice("device-3"), MakeDevice("device-4", {{"driver-a/numa", int64_t{0}}})}));
  DeviceConstraint same_numa{{}, "driver-a/numa", std::nullopt};
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)}, {same_numa})}),
            Lines{"req-0 driver-a/pool-1/device-1, req-0 driver-a/pool-1/device-4"});
}

// upstream: distinct-constraint-single-request-count-3-all-distinct (in spirit).
TEST_F(DraAllocatorTest, DistinctAttribute) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1",
                              {MakeDevice("device-1", {{"driver-a/nic", std::string("a")}}),
                               MakeDevice("device-2", {{"driver-a/nic", std::string("a")}}),
                               MakeDevice("device-3", {{"driver-a/nic", std::string("b")}})}));
  DeviceConstraint distinct{{}, std::nullopt, "driver-a/nic"};
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)}, {distinct})}),
            Lines{"req-0 driver-a/pool-1/device-1, req-0 driver-a/pool-1/device-3"});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 3)}, {distinct})}),
            Lines{"no allocation"});
}

TEST_F(DraAllocatorTest, AllDevicesThatBreakAConstraintIsAnError) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1",
                              {MakeDevice("device-1", {{"driver-a/numa", int64_t{0}}}),
                               MakeDevice("device-2", {{"driver-a/numa", int64_t{1}}})}));
  DeviceConstraint same_numa{{}, "driver-a/numa", std::nullopt};
  EXPECT_EQ(Pick({MakeClaim("claim-0", {AllOf("req-0")}, {same_numa})}),
            Lines{"error: claim default/claim-0, request req-0: cannot add device "
                  "driver-a/pool-1/device-2 because a claim constraint would not be satisfied"});
}

// ---- (2) firstAvailable.

DeviceRequest FirstAvailable(const std::string& name, std::vector<DeviceSubRequest> subs) {
  DeviceRequest request;
  request.name = name;
  request.first_available = std::move(subs);
  return request;
}

DeviceSubRequest Sub(const std::string& name, int64_t count,
                     std::vector<std::string> selectors = {}) {
  DeviceSubRequest sub;
  sub.name = name;
  sub.spec.device_class_name = kClassA;
  sub.spec.count = count;
  sub.spec.selectors = std::move(selectors);
  return sub;
}

// upstream: prioritized-list-with-backtracking.
TEST_F(DraAllocatorTest, UpstreamPrioritizedListWithBacktracking) {
  const std::string eight = R"(device.capacity["driver-a"].memory.compareTo(quantity("8Gi")) >= 0)";
  const std::string four = R"(device.capacity["driver-a"].memory.compareTo(quantity("4Gi")) >= 0)";
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  slices_.push_back(MakeSlice("slice-2", kNode1, "pool-2", {MakeDevice("device-2")}));
  verdicts_.Set(eight, "driver-a/pool-1/device-1", true);
  verdicts_.Set(eight, "driver-a/pool-2/device-2", false);
  verdicts_.Set(four, "driver-a/*", true);
  const ResourceClaim claim =
      MakeClaim("claim-0",
                {FirstAvailable("req-0", {Sub("subReq-0", 1, {eight}), Sub("subReq-1", 1, {four})}),
                 Exactly("req-1", 1, {eight})});
  EXPECT_EQ(Pick({claim}),
            Lines{"req-0/subReq-1 driver-a/pool-2/device-2, req-1 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, FirstAvailableTakesTheFirstThatFits) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  const ResourceClaim claim =
      MakeClaim("claim-0", {FirstAvailable("req-0", {Sub("subReq-0", 3), Sub("subReq-1", 2)})});
  EXPECT_EQ(
      Pick({claim}),
      Lines{"req-0/subReq-1 driver-a/pool-1/device-1, req-0/subReq-1 driver-a/pool-1/device-2"});
  // A constraint naming the subrequest applies to it.
  slices_[0].devices[0].attributes["driver-a/numa"] = int64_t{0};
  slices_[0].devices[1].attributes["driver-a/numa"] = int64_t{1};
  ResourceClaim constrained = claim;
  constrained.spec.constraints.push_back({{"req-0/subReq-1"}, "driver-a/numa", std::nullopt});
  EXPECT_EQ(Pick({constrained}), Lines{"no allocation"});
}

// upstream: prioritized-list-class-config and claim-config-covering-all-requests-is-cleared
// (in spirit): the class's config once for the requests that used it, the claim's for the
// requests allocated, and a list naming every request becomes "all".
TEST_F(DraAllocatorTest, ConfigsOfClassAndClaim) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  classes_[0].config.push_back({kDriverA, R"({"class":1})"});
  ResourceClaim claim = MakeClaim(
      "claim-0",
      {Exactly("req-0"), FirstAvailable("req-1", {Sub("subReq-0", 3), Sub("subReq-1", 1)})});
  claim.spec.config = {{{"req-1/subReq-1"}, kDriverA, R"({"sub":1})"},
                       {{"req-0"}, kDriverA, R"({"req":0})"},
                       {{}, kDriverA, R"({"all":1})"}};
  auto result = Run({claim});
  ASSERT_TRUE(result.ok() && result->has_value());
  const std::vector<AllocationConfig> expected{
      {true, {}, kDriverA, R"({"class":1})"},
      {false, {"req-1/subReq-1"}, kDriverA, R"({"sub":1})"},
      {false, {"req-0"}, kDriverA, R"({"req":0})"},
      {false, {}, kDriverA, R"({"all":1})"}};
  EXPECT_EQ((**result)[0].config, expected);
  // With the first subrequest chosen, the config for the second one does not apply.
  claim.spec.requests[1].first_available[0].spec.count = 1;
  result = Run({claim});
  ASSERT_TRUE(result.ok() && result->has_value());
  const std::vector<AllocationConfig> first_chosen{{true, {}, kDriverA, R"({"class":1})"},
                                                   {false, {"req-0"}, kDriverA, R"({"req":0})"},
                                                   {false, {}, kDriverA, R"({"all":1})"}};
  EXPECT_EQ((**result)[0].config, first_chosen);
}

// upstream: prioritized-list-too-many-in-first-subrequest.
TEST_F(DraAllocatorTest, UpstreamTooManyInFirstSubrequest) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  classes_.push_back(MakeClass("class-b"));
  DeviceSubRequest many = Sub("subReq-0", 500);
  many.spec.device_class_name = "class-b";
  EXPECT_EQ(Pick({MakeClaim("claim-0", {FirstAvailable("req-0", {many, Sub("subReq-1", 1)})})}),
            Lines{"req-0/subReq-1 driver-a/pool-1/device-1"});
}

// upstream: prioritized-list-overflowing-first-subrequest-is-pruned (8 allocateOne calls).
TEST_F(DraAllocatorTest, UpstreamOverflowingFirstSubrequestIsPruned) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  const ResourceClaim claim = MakeClaim(
      "claim-0", {Exactly("req-0"),
                  FirstAvailable("req-1", {Sub("subReq-0", INT64_MAX), Sub("subReq-1", 1)})});
  EXPECT_EQ(Pick({claim}),
            Lines{"req-0 driver-a/pool-1/device-1, req-1/subReq-1 driver-a/pool-1/device-2"});
  EXPECT_EQ(report_.steps, 8);
}

// upstream: multi-host-resource-pool-incomplete-update-from-node-1-to-node-2 and
// -from-node-2-to-node-1: a pool complete from the node's view is used (a newer
// generation elsewhere is not looked for); one that is not is checked against all.
TEST_F(DraAllocatorTest, UpstreamMultiHostPoolUpdates) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}, 1, 2));
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-2")}, 1, 2));
  slices_.push_back(MakeSlice("slice-2", "node-2", "pool-1", {MakeDevice("device-1")}, 2, 2));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
  slices_[0].node_selection->node_name = "node-2";
  slices_[1].node_selection->node_name = "node-2";
  slices_[2].node_selection->node_name = kNode1;
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
}

// ---- (3) taints, taint rules, admin access.

TEST_F(DraAllocatorTest, TaintsAndTolerations) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  slices_[0].devices[0].taints.push_back({"broken", "yes", DeviceTaintEffect::kNoSchedule, {}});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-2"});
  // Tolerated: the first device again, and the toleration is in the result.
  DeviceRequest tolerant = Exactly("req-0");
  tolerant.exactly->tolerations.push_back(
      {"broken", DeviceToleration::Op::kEqual, "yes", DeviceTaintEffect::kNoSchedule, {}});
  auto result = Run({MakeClaim("claim-0", {tolerant})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ((**result)[0].results[0].device, "device-1");
  EXPECT_EQ((**result)[0].results[0].tolerations, tolerant.exactly->tolerations);
  // upstream: tainted-no-effect: effect None does not keep a device.
  slices_[0].devices[0].taints[0].effect = DeviceTaintEffect::kNone;
  slices_[0].devices[1].taints.push_back({"gone", "", DeviceTaintEffect::kNoExecute, {}});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)})}), Lines{"no allocation"});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 1)})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, TaintRulesTaintTheDevicesTheyPick) {
  slices_.push_back(
      MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")}));
  DeviceTaintRule rule;
  rule.name = "maintenance";
  rule.driver = kDriverA;
  rule.device = "device-1";
  rule.taint = {"maintenance", "", DeviceTaintEffect::kNoExecute, {}};
  taint_rules_.push_back(rule);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-2"});
  // A rule for another pool taints nothing here.
  taint_rules_[0].pool = "pool-9";
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, AdminAccessSharesDevicesInUse) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  TakeDevice("device-1");
  DeviceRequest admin = Exactly("req-0");
  admin.exactly->admin_access = true;
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
  auto result = Run({MakeClaim("claim-0", {admin})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ((**result)[0].results[0].device, "device-1");
  EXPECT_TRUE((**result)[0].results[0].admin_access);
  // An admin-access allocation takes nothing from others.
  allocated_.clear();
  ResourceClaim admin_claim = MakeClaim("admin", {admin});
  admin_claim.allocation = (**result)[0];
  allocated_.push_back(admin_claim);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
  // Without the namespace's permission it is an error.
  options_.admin_access_allowed = false;
  Lines picked = Pick({MakeClaim("claim-0", {admin})});
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_NE(picked[0].find("admin access to devices requires"), std::string::npos);
}

// ---- (4) partitionable devices.

Device Partition(const std::string& name, Milli memory) {
  Device device = MakeDevice(name);
  device.consumes_counters.push_back({"counter-set-1", {{"memory", memory}}});
  return device;
}

ResourceSlice CounterSlice(const std::string& name, Milli memory, int64_t count = 2) {
  ResourceSlice slice = MakeSlice(name, kNode1, "pool-1", {}, 1, count);
  slice.shared_counters.push_back({"counter-set-1", {{"memory", memory}}});
  return slice;
}

// upstream: partitionable-devices-multiple-devices.
TEST_F(DraAllocatorTest, UpstreamPartitionableDevices) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1",
                              {Partition("device-1", 4 * kGi), Partition("device-2", 6 * kGi),
                               Partition("device-3", 4 * kGi)},
                              1, 2));
  slices_.push_back(CounterSlice("slice-2", 8 * kGi));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0"), Exactly("req-1")})}),
            Lines{"req-0 driver-a/pool-1/device-1, req-1 driver-a/pool-1/device-3"});
  // An allocated partition consumes its counters.
  TakeDevice("device-3");
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0"), Exactly("req-1")})}),
            Lines{"no allocation"});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, CounterReferenceToAMissingSetMakesThePoolInvalid) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {Partition("device-1", kGi)}, 1, 2));
  slices_.push_back(CounterSlice("slice-2", 8 * kGi));
  slices_[1].shared_counters[0].name = "counter-set-9";
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}), Lines{"no allocation"});
  EXPECT_EQ(report_.unschedulable_reason, "invalid resource pools were encountered");
}

// ---- (5) consumable capacity, binding conditions, node selectors.

Device Shareable(const std::string& name, Milli capacity) {
  Device device = MakeDevice(name);
  device.allow_multiple_allocations = true;
  CapacityRequestPolicy policy;
  policy.default_value = 2000;
  policy.valid_range = CapacityRequestPolicy::Range{2000, 4000, 2000};
  device.capacity["driver-a/capacity-0"] = {capacity, policy};
  return device;
}

DeviceRequest WithCapacity(DeviceRequest request, Milli amount) {
  request.exactly->capacity_requests["driver-a/capacity-0"] = amount;
  return request;
}

// upstream: consumable-capacity-with-multi-allocatable-device-backtrack.
TEST_F(DraAllocatorTest, UpstreamConsumableCapacityBacktrack) {
  Device first = Shareable("device-2", 2000);
  first.attributes["driver-a/stringAttribute"] = std::string("stringAttributeValue1");
  Device second = Shareable("device-1", 4000);
  second.attributes["driver-a/stringAttribute"] = std::string("stringAttributeValue2");
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {first, second}));
  DeviceConstraint same{{}, "driver-a/stringAttribute", std::nullopt};
  const std::vector<ResourceClaim> claims{
      MakeClaim("claim-0",
                {WithCapacity(Exactly("req-0"), 2000), WithCapacity(Exactly("req-1"), 2000)},
                {same}),
      MakeClaim("claim-1", {WithCapacity(Exactly("req-0"), 2000)})};
  auto result = Run(claims);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_TRUE(result->has_value());
  EXPECT_EQ(Picked(**result),
            (Lines{"req-0 driver-a/pool-1/device-1, req-1 driver-a/pool-1/device-1",
                   "req-0 driver-a/pool-1/device-2"}));
  const AllocationResult& share = (**result)[0].results[0];
  ASSERT_TRUE(share.share_id.has_value());
  EXPECT_EQ(share.share_id->size(), 36u);
  EXPECT_NE(share.share_id, (**result)[0].results[1].share_id);
  EXPECT_EQ(share.consumed_capacity,
            (std::map<QualifiedName, Milli>{{"driver-a/capacity-0", 2000}}));
  EXPECT_TRUE(share.consumed_bare.empty());  // the device wrote it qualified
}

// A capacity the slice named bare ("capacity-0") is consumed under that name, as upstream
// keys consumedCapacity by the device's name as written.
TEST_F(DraAllocatorTest, ConsumedCapacityRemembersABareName) {
  Device device = Shareable("device-1", 4000);
  device.capacity["driver-a/capacity-0"].bare_name = true;
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {device}));
  // The claim names it as the slice wrote it, bare.
  DeviceRequest request = Exactly("req-0");
  request.exactly->capacity_requests["capacity-0"] = 2000;
  auto result = Run({MakeClaim("claim-0", {request})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ((**result)[0].results[0].consumed_capacity,
            (std::map<QualifiedName, Milli>{{"driver-a/capacity-0", 2000}}));
  EXPECT_EQ((**result)[0].results[0].consumed_bare, std::set<QualifiedName>{"driver-a/capacity-0"});
}

TEST_F(DraAllocatorTest, CapacityRequestsRoundUpAndCountAllocatedShares) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1",
                              {Shareable("device-1", 4000), Shareable("device-2", 4000)}));
  // 3 rounds up to 4 (min 2, step 2): the whole of device-1.
  auto result = Run({MakeClaim("claim-0", {WithCapacity(Exactly("req-0"), 3000)})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ((**result)[0].results[0].consumed_capacity.at("driver-a/capacity-0"), 4000);
  // Allocated shares count: device-1 is full, the next request goes to device-2.
  ResourceClaim holder = MakeClaim("holder", {Exactly("req-0")});
  holder.allocation = (**result)[0];
  allocated_.push_back(holder);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {WithCapacity(Exactly("req-0"), 1000)})}),
            Lines{"req-0 driver-a/pool-1/device-2"});
  // No request: the default (2) is taken. One request never takes a device twice, two
  // requests share device-2, a third does not fit.
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)})}), Lines{"no allocation"});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0"), Exactly("req-1")})}),
            Lines{"req-0 driver-a/pool-1/device-2, req-1 driver-a/pool-1/device-2"});
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0"), Exactly("req-1"), Exactly("req-2")})}),
            Lines{"no allocation"});
  // A request over the range's maximum fits no device.
  EXPECT_EQ(Pick({MakeClaim("claim-0", {WithCapacity(Exactly("req-0"), 5000)})}),
            Lines{"no allocation"});
}

TEST_F(DraAllocatorTest, CapacityPolicyLimits) {
  Device wide = Shareable("device-1", 10000);  // range 2..4 step 2, on 10
  Device listed = MakeDevice("device-2");
  listed.allow_multiple_allocations = true;
  CapacityRequestPolicy values;
  values.valid_values = {2000, 8000};
  listed.capacity["driver-a/capacity-0"] = {10000, values};
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {wide, listed}));
  // 5 rounds up to 6 on device-1, past its maximum of 4: device-2 rounds it up to 8.
  auto result = Run({MakeClaim("claim-0", {WithCapacity(Exactly("req-0"), 5000)})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ(Picked(**result), Lines{"req-0 driver-a/pool-1/device-2"});
  EXPECT_EQ((**result)[0].results[0].consumed_capacity.at("driver-a/capacity-0"), 8000);
  // Over every valid value: kept as asked, which is not a valid value.
  EXPECT_EQ(Pick({MakeClaim("claim-0", {WithCapacity(Exactly("req-0"), 9000)})}),
            Lines{"no allocation"});
}

// upstream: consumable-capacity-dedicated-device-with-consumable-capacity-request.
TEST_F(DraAllocatorTest, CapacityRequestsOnADedicatedDevice) {
  Device gpu = MakeDevice("device-1");
  gpu.capacity["driver-a/memory"] = {80 * kGi, std::nullopt};
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {gpu}));
  DeviceRequest big = Exactly("req-0");
  big.exactly->capacity_requests["driver-a/memory"] = 100 * kGi;
  EXPECT_EQ(Pick({MakeClaim("claim-0", {big})}), Lines{"no allocation"});
  big.exactly->capacity_requests["driver-a/memory"] = 40 * kGi;
  auto result = Run({MakeClaim("claim-0", {big})});
  ASSERT_TRUE(result.ok() && result->has_value());
  // A dedicated device: no share, no consumed capacity, and it is taken whole.
  EXPECT_EQ((**result)[0].results[0], ResultFor("req-0", "pool-1", "device-1"));
  // A capacity the device does not have: no device fits.
  big.exactly->capacity_requests = {{"driver-a/bandwidth", 1000}};
  EXPECT_EQ(Pick({MakeClaim("claim-0", {big})}), Lines{"no allocation"});
}

// upstream: allow-multiple-allocations-with-partitionable-device (in spirit): a second
// share of a device does not consume its counters again.
TEST_F(DraAllocatorTest, SharesOfAPartitionConsumeItsCountersOnce) {
  Device shared = Partition("device-1", 6 * kGi);
  shared.allow_multiple_allocations = true;
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {shared}, 1, 2));
  slices_.push_back(CounterSlice("slice-2", 8 * kGi));
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0"), Exactly("req-1")})}),
            Lines{"req-0 driver-a/pool-1/device-1, req-1 driver-a/pool-1/device-1"});
}

TEST_F(DraAllocatorTest, BindingConditionPoolsComeLastAndAreCopied) {
  slices_.push_back(MakeSlice("slice-1", kNode1, "pool-1", {MakeDevice("device-1")}));
  slices_.push_back(MakeSlice("slice-2", kNode1, "pool-2", {MakeDevice("device-2")}));
  slices_[0].devices[0].binding_conditions = {"attached"};
  slices_[0].devices[0].binding_failure_conditions = {"failed"};
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0")})}),
            Lines{"req-0 driver-a/pool-2/device-2"});
  auto result = Run({MakeClaim("claim-0", {Exactly("req-0", 2)})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ(Picked(**result),
            Lines{"req-0 driver-a/pool-2/device-2, req-0 driver-a/pool-1/device-1"});
  EXPECT_EQ((**result)[0].results[1].binding_conditions, std::vector<std::string>{"attached"});
  EXPECT_EQ((**result)[0].results[1].binding_failure_conditions,
            std::vector<std::string>{"failed"});
}

TEST_F(DraAllocatorTest, NodeSelectorOfNetworkAttachedDevices) {
  ResourceSlice slice = MakeSlice("slice-1", "", "pool-1", {MakeDevice("device-1")});
  const SelectorRequirement region{"region", SelectorRequirement::Op::kIn, {"region-1"}};
  slice.node_selection = NodeSelection{};
  slice.node_selection->node_selector = std::vector<std::vector<SelectorRequirement>>{{region}};
  slices_.push_back(slice);
  ResourceSlice everywhere = MakeSlice("slice-2", "", "pool-2", {MakeDevice("device-2")});
  everywhere.node_selection = NodeSelection{};
  everywhere.node_selection->all_nodes = true;
  slices_.push_back(everywhere);
  auto result =
      Run({MakeClaim("claim-0", {Exactly("req-0")}), MakeClaim("claim-1", {Exactly("req-0")})});
  ASSERT_TRUE(result.ok() && result->has_value());
  const std::vector<std::vector<SelectorRequirement>> by_region{{region}};
  EXPECT_EQ((**result)[0].node_selector, by_region);
  EXPECT_EQ((**result)[1].node_selector, std::nullopt);  // any node
  // Another region does not see slice-1.
  labels_ = Labels{{{"region", "region-2"}}};
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)})}), Lines{"no allocation"});
}

TEST_F(DraAllocatorTest, PerDeviceNodeSelection) {
  ResourceSlice slice =
      MakeSlice("slice-1", "", "pool-1", {MakeDevice("device-1"), MakeDevice("device-2")});
  slice.node_selection.reset();
  slice.per_device_node_selection = true;
  slice.devices[0].node_selection = NodeSelection{};
  slice.devices[0].node_selection->node_name = "node-2";
  slice.devices[1].node_selection = NodeSelection{};
  slice.devices[1].node_selection->all_nodes = true;
  slices_.push_back(slice);
  auto result = Run({MakeClaim("claim-0", {Exactly("req-0")})});
  ASSERT_TRUE(result.ok() && result->has_value());
  EXPECT_EQ(Picked(**result), Lines{"req-0 driver-a/pool-1/device-2"});
  EXPECT_EQ((**result)[0].node_selector, std::nullopt);
  EXPECT_EQ(Pick({MakeClaim("claim-0", {Exactly("req-0", 2)})}), Lines{"no allocation"});
}

}  // namespace
}  // namespace gantry::dra
