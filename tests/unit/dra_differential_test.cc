// Gantry's DRA allocator against upstream's (issue 29's differential test).
//
// The oracle (tests/dra/oracle/, built by scripts/dra/build-oracle.sh) draws random cases
// (nodes, slices, classes, claims already allocated, the claims of one pod) from fixed
// seeds and answers each (case, node) with k8s.io/dynamic-resource-allocation/structured
// v0.37.2 as kube-scheduler 1.37 runs it. This test reads the same API objects with
// Gantry's decoders (src/k8s/dra_objects.h), evaluates selectors with upstream's CEL
// (src/dra/), runs Gantry's allocator (src/engine/dra/) and requires the same answer:
// allocatable or not, the same kind of error, and, since both search in upstream's order,
// the same devices for the same requests. A disagreement prints its seed, case and node
// (`dra-oracle generate --seed S --cases C+1` reproduces it; the last line is the case).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "dra/selector_cache.h"
#include "engine/dra/allocator.h"
#include "k8s/dra_objects.h"
#include "k8s/objects.h"

#ifndef GANTRY_DRA_ORACLE_PATH
#error "GANTRY_DRA_ORACLE_PATH must name the dra-oracle binary (see CMakeLists.txt)"
#endif

namespace gantry::dra {
namespace {

// Runs the oracle; its output, one case and node per line.
std::vector<nlohmann::json> Generate(int seed, int cases) {
  std::filesystem::path out =
      std::filesystem::path(testing::TempDir()) / ("dra-oracle-" + std::to_string(seed) + ".jsonl");
  std::string command = std::string(GANTRY_DRA_ORACLE_PATH) + " generate --seed " +
                        std::to_string(seed) + " --cases " + std::to_string(cases) + " --out " +
                        out.string() + " 2>/dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(out);
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  std::filesystem::remove(out);
  return lines;
}

template <typename T, typename Decode>
std::vector<T> DecodeAll(const nlohmann::json& list, Decode decode, std::string* problem) {
  std::vector<T> out;
  for (const nlohmann::json& object : list) {
    Result<T> decoded = decode(object);
    if (!decoded.ok()) {
      *problem = decoded.status().message();
      return {};
    }
    out.push_back(std::move(*decoded));
  }
  return out;
}

// One allocation result as both sides write it, for comparing.
std::string Describe(const std::string& claim, const AllocationResult& result) {
  std::ostringstream text;
  text << claim << ": " << result.request << " -> " << result.driver << "/" << result.pool << "/"
       << result.device << (result.admin_access ? " admin" : "");
  for (const auto& [name, amount] : result.consumed_capacity) {
    text << " " << name << "=" << FormatQuantity(amount);
  }
  return text.str();
}

std::string DescribeUpstream(const nlohmann::json& entry) {
  std::ostringstream text;
  const std::string claim = entry.at("claim").get<std::string>();
  const nlohmann::json& devices = entry.at("allocation").at("devices");
  const nlohmann::json no_results = nlohmann::json::array();
  const nlohmann::json& results = devices.contains("results") ? devices["results"] : no_results;
  for (const nlohmann::json& result : results) {
    AllocationResult ours;
    ours.request = result.at("request").get<std::string>();
    ours.driver = result.at("driver").get<std::string>();
    ours.pool = result.at("pool").get<std::string>();
    ours.device = result.at("device").get<std::string>();
    ours.admin_access = result.value("adminAccess", false);
    const nlohmann::json consumed = result.value("consumedCapacity", nlohmann::json::object());
    for (const auto& [name, quantity] : consumed.items()) {
      Result<Milli> amount = ParseQuantity(quantity.get<std::string>());
      EXPECT_TRUE(amount.ok()) << quantity;
      // Upstream keys consumedCapacity by the capacity's name as the device wrote it;
      // Gantry's are qualified with the driver.
      std::string qualified = name.find('/') == std::string::npos ? ours.driver + "/" + name : name;
      ours.consumed_capacity[qualified] = amount.ok() ? *amount : 0;
    }
    text << Describe(claim, ours) << "\n";
  }
  return text.str();
}

struct Tally {
  int lines = 0;
  int allocatable = 0;
  int unallocatable = 0;
  int node_errors = 0;
  int fatal_errors = 0;
  int same_devices = 0;
  int disagreements = 0;
};

void CompareOne(const nlohmann::json& line, Tally* tally) {
  const std::string where = "seed " + std::to_string(line.at("seed").get<int>()) + " case " +
                            std::to_string(line.at("case").get<int>()) + " node " +
                            line.at("node").get<std::string>();
  const nlohmann::json& objects = line.at("objects");
  std::string problem;
  auto nodes = DecodeAll<Node>(objects.at("nodes"), k8s::ParseNode, &problem);
  auto classes = DecodeAll<DeviceClass>(objects.value("deviceClasses", nlohmann::json::array()),
                                        k8s::DecodeDeviceClass, &problem);
  auto slices = DecodeAll<ResourceSlice>(objects.value("resourceSlices", nlohmann::json::array()),
                                         k8s::DecodeResourceSlice, &problem);
  auto allocated =
      DecodeAll<ResourceClaim>(objects.value("allocatedClaims", nlohmann::json::array()),
                               k8s::DecodeResourceClaim, &problem);
  auto claims = DecodeAll<ResourceClaim>(objects.value("claimsToAllocate", nlohmann::json::array()),
                                         k8s::DecodeResourceClaim, &problem);
  ASSERT_EQ(problem, "") << where << ": an object the API server accepted was refused";

  const Node* node = nullptr;
  for (const Node& candidate : nodes) {
    if (candidate.name == line.at("node").get<std::string>()) node = &candidate;
  }
  ASSERT_NE(node, nullptr) << where;

  Inventory inventory(std::move(slices), std::move(classes));
  AllocatedState in_use = AllocatedState::FromClaims(allocated);
  SelectorCache cache;
  CelVerdicts verdicts(cache);
  AllocateReport report;
  Result<std::optional<std::vector<Allocation>>> ours =
      Allocate(inventory, NodeRef{node->name, node->labels}, claims, in_use, verdicts, {}, &report);

  ++tally->lines;
  const std::string kind = line.value("errorKind", "");
  const std::string upstream_error = line.value("error", "");
  bool agree = true;
  if (kind == "fatal") {
    ++tally->fatal_errors;
    agree = !ours.ok();
    EXPECT_FALSE(ours.ok()) << where << ": upstream fails the attempt with \"" << upstream_error
                            << "\"; Gantry "
                            << (ours.ok() && ours->has_value() ? "allocates" : "does not");
  } else if (kind == "node") {
    ++tally->node_errors;
    agree = ours.ok() && !ours->has_value() && !report.unschedulable_reason.empty();
    EXPECT_TRUE(agree) << where << ": upstream: unschedulable here with \"" << upstream_error
                       << "\"; Gantry: "
                       << (ours.ok()
                               ? (ours->has_value() ? "allocates" : report.unschedulable_reason)
                               : ours.status().message());
  } else if (!line.at("allocatable").get<bool>()) {
    ++tally->unallocatable;
    agree = ours.ok() && !ours->has_value();
    EXPECT_TRUE(agree) << where << ": upstream cannot allocate; Gantry "
                       << (ours.ok() ? "allocates" : "fails: " + ours.status().message());
  } else {
    ++tally->allocatable;
    agree = ours.ok() && ours->has_value();
    EXPECT_TRUE(agree) << where << ": upstream allocates; Gantry "
                       << (ours.ok() ? "cannot" : "fails: " + ours.status().message());
    if (agree) {
      std::string upstream_devices;
      for (const nlohmann::json& entry : line.at("results")) {
        upstream_devices += DescribeUpstream(entry);
      }
      std::string our_devices;
      for (size_t i = 0; i < claims.size() && i < (*ours)->size(); ++i) {
        for (const AllocationResult& result : (**ours)[i].results) {
          our_devices += Describe(claims[i].name_space + "/" + claims[i].name, result) + "\n";
        }
      }
      EXPECT_EQ(our_devices, upstream_devices) << where;
      if (our_devices == upstream_devices) ++tally->same_devices;
      agree = our_devices == upstream_devices;
    }
  }
  if (!agree) ++tally->disagreements;
}

TEST(DraDifferentialTest, AgreesWithUpstreamsAllocatorOnRandomCases) {
  constexpr int kCasesPerSeed = 400;
  Tally tally;
  for (int seed : {1, 2, 3}) {
    std::vector<nlohmann::json> lines = Generate(seed, kCasesPerSeed);
    ASSERT_GT(lines.size(), static_cast<size_t>(kCasesPerSeed)) << "seed " << seed;
    for (const nlohmann::json& line : lines) {
      CompareOne(line, &tally);
      if (tally.disagreements >= 20) break;  // enough to read
    }
  }
  std::printf(
      "dra differential: %d (case, node) pairs: %d allocatable (%d with the same devices), "
      "%d not, %d unschedulable with a node error, %d fatal errors; %d disagreements\n",
      tally.lines, tally.allocatable, tally.same_devices, tally.unallocatable, tally.node_errors,
      tally.fatal_errors, tally.disagreements);
  EXPECT_EQ(tally.disagreements, 0);
  // The generator must keep producing every kind of answer, or the test proves little.
  EXPECT_GT(tally.allocatable, tally.lines / 5);
  EXPECT_GT(tally.unallocatable, tally.lines / 10);
  EXPECT_GT(tally.fatal_errors, 0);
  EXPECT_GT(tally.node_errors, 0);
}

}  // namespace
}  // namespace gantry::dra
