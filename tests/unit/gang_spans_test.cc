// The simulator's topology figures: the domains each gang spans as it starts
// (sim/gang_spans.h), with and without a topology request, and the generator's
// gangtopology option.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/policies.h"
#include "sim/replay.h"
#include "sim/sim_options.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr const char* kRack = "topology.gantry.dev/rack";

// n0 in rack r0 with 2 GPUs, n1 and n2 in r1 with 4.
ClusterState ThreeNodesInTwoRacks() {
  ClusterState c;
  for (const auto& [name, rack] :
       std::vector<std::pair<std::string, std::string>>{{"n0", "r0"}, {"n1", "r1"}, {"n2", "r1"}}) {
    Node n;
    n.name = name;
    n.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 256 * kGi}};
    n.labels.Set(kRack, rack);
    for (int g = 0; g < (name == "n0" ? 2 : 4); ++g)
      n.gpus.push_back(GpuDevice{GpuModels().Intern("G1"), 0, 0, 0, 0, 0});
    EXPECT_TRUE(c.AddNode(std::move(n)).ok());
  }
  return c;
}

SimJob GpuJob(const std::string& name, int64_t submit, int32_t pods, int32_t gpus) {
  SimJob j;
  j.name = name;
  j.submit = submit;
  j.duration = 1000;
  j.pods = j.min_member = pods;
  j.spec.role = "pod";
  j.spec.requests.Set(kCpu, 1000);
  j.spec.gpu.count = gpus;
  return j;
}

// A gang of two 2-GPU pods. Packing alone puts its first pod on n0, which it fills, and
// its second in rack r1; with a required rack it goes to r1 whole.
ReplayResult ReplayGang(TopologyRequest topology) {
  // A single pod first, on its own node (n1 fits it as well as n2: a gang of one is no
  // gang and is not counted), then the gang once it has ended.
  std::vector<SimJob> jobs = {GpuJob("single", 0, 1, 4), GpuJob("gang", 100, 2, 2)};
  jobs[0].duration = 10;
  jobs[1].topology = std::move(topology);
  return Must(RunReplay(ThreeNodesInTwoRacks(), jobs, Must(ReplayPolicyConfig("bestfit", 0)), 1,
                        ReplayOptions{10, 2000}));
}

TEST(GangSpanTest, ARequiredRackKeepsTheGangInOneAndIsCounted) {
  const ReplayResult packed = ReplayGang({});
  ASSERT_EQ(packed.gang_spans.size(), 1u);  // only the rack level has labels
  EXPECT_EQ(packed.gang_spans[0].level, kRack);
  EXPECT_EQ(packed.gang_spans[0].gangs, 1);
  EXPECT_EQ(packed.gang_spans[0].max_domains, 2);
  EXPECT_DOUBLE_EQ(packed.gang_spans[0].pct_in_one, 0);

  const ReplayResult aware = ReplayGang(TopologyRequest{kRack, true});
  ASSERT_EQ(aware.gang_spans.size(), 1u);
  EXPECT_EQ(aware.gang_spans[0].gangs, 1);
  EXPECT_DOUBLE_EQ(aware.gang_spans[0].mean_domains, 1);
  EXPECT_DOUBLE_EQ(aware.gang_spans[0].pct_in_one, 100);
}

TEST(GangSpanTest, AJobNamingALevelTheClusterLacksIsRefused) {
  std::vector<SimJob> jobs = {GpuJob("gang", 0, 2, 1)};
  jobs[0].topology = TopologyRequest{"leaf", true};
  auto r = RunReplay(ThreeNodesInTwoRacks(), jobs, Must(ReplayPolicyConfig("bestfit", 0)), 1,
                     ReplayOptions{10, 2000});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job \"gang\": topology level \"leaf\" is not one of"),
            std::string::npos)
      << r.status().message();
}

TEST(GangSpanTest, TheGeneratorGivesEveryGangTheRequest) {
  std::vector<std::string> given;
  GeneratorOptions g =
      Must(ParseGenerate("pods=400,mix=0/0/100/0,gangtopology=required:rack", &given));
  EXPECT_EQ(g.gang_topology, (TopologyRequest{"rack", true}));
  for (const SimJob& j : Must(GenerateWorkload(g))) {
    EXPECT_EQ(j.topology, (TopologyRequest{"rack", true})) << j.name;
  }
  g = Must(ParseGenerate("gangtopology=preferred:spine", &given));
  EXPECT_EQ(g.gang_topology, (TopologyRequest{"spine", false}));
  for (const char* bad :
       {"gangtopology=rack", "gangtopology=strict:rack", "gangtopology=required:"}) {
    auto r = ParseGenerate(bad, &given);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--generate gangtopology: expected required:LEVEL"),
              std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace gantry
