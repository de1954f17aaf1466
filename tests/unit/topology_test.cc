// Topology domains (engine/topology_domains.h) and gangs that stay inside one
// (Job::topology, actions/job_allocation.cc). The scenarios topology_*.yaml cover the
// choice of domain; these check the index and what the scenario format cannot say.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/topology_domains.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

NodeId AddNodeIn(ClusterState& c, const std::string& name, const std::string& spine,
                 const std::string& leaf, int gpus = 4) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 512 * kGi}};
  if (!spine.empty()) node.labels.Set("spine", spine);
  if (!leaf.empty()) node.labels.Set("leaf", leaf);
  for (int i = 0; i < gpus; ++i) node.gpus.push_back(GpuDevice{A100(), 81920, 0, 0, 0, 0});
  return Must(c.AddNode(std::move(node)));
}

std::vector<std::string> Names(const std::vector<TopologyDomain>& domains) {
  std::vector<std::string> out;
  for (const TopologyDomain& d : domains) out.push_back(d.name);
  return out;
}

TEST(TopologyDomainsTest, DomainsNestUnderTheLevelsAboveAndLeaveOutUnlabelledNodes) {
  ClusterState c;
  c.SetTopologyKeys({"spine", "leaf"});
  const NodeId a = AddNodeIn(c, "a", "s1", "l1");
  const NodeId b = AddNodeIn(c, "b", "s2", "l1");  // the same leaf name under another spine
  const NodeId d = AddNodeIn(c, "d", "s1", "l1");
  const NodeId bare = AddNodeIn(c, "bare", "", "");
  const NodeId leafless = AddNodeIn(c, "leafless", "s2", "");
  TopologyDomains topology(c);
  EXPECT_EQ(topology.LevelOf("leaf"), 1);
  EXPECT_EQ(topology.LevelOf("rack"), -1);
  EXPECT_EQ(Names(topology.At(0)), (std::vector<std::string>{"s1", "s2"}));
  EXPECT_EQ(Names(topology.At(1)), (std::vector<std::string>{"s1/l1", "s2/l1"}));
  EXPECT_EQ(topology.At(1)[0].nodes, (std::vector<NodeId>{a, d}));
  EXPECT_EQ(topology.At(0)[1].nodes, (std::vector<NodeId>{b, leafless}));
  EXPECT_EQ(topology.DomainOf(1, b), 1);
  EXPECT_EQ(topology.DomainOf(1, leafless), -1);
  EXPECT_EQ(topology.DomainOf(0, bare), -1);
  EXPECT_EQ(TopologyDomainName(c.node(leafless), 0), "s2");
  EXPECT_EQ(TopologyDomainName(c.node(leafless), 1), "");
}

TEST(TopologyDomainsTest, ARemovedNodeIsInNoDomain) {
  ClusterState c;
  c.SetTopologyKeys({"leaf"});
  AddNodeIn(c, "a", "", "l1");
  const NodeId gone = AddNodeIn(c, "b", "", "l1");
  c.RemoveNode(gone);
  TopologyDomains topology(c);
  ASSERT_EQ(topology.At(0).size(), 1u);
  EXPECT_EQ(topology.At(0)[0].nodes, (std::vector<NodeId>{0}));
}

// A key that is none of the cluster's levels (a native PodGroup's topology constraint may
// name any node label): a domain per value of the label, nested in nothing. Spine s1 (the
// level is "leaf", so spine is no level) has one node of 4 GPUs, s2 two: a required gang of
// two 4-GPU tasks goes to s2; preferred, too. A key no node has keeps a required gang
// waiting, saying so; a preferred one is placed anywhere.
TEST(TopologyGangTest, ALabelThatIsNoLevelIsADomainPerValue) {
  for (bool required : {true, false}) {
    ClusterState c;
    c.SetTopologyKeys({"leaf"});
    AddNodeIn(c, "a", "s1", "l1");
    const NodeId b = AddNodeIn(c, "b", "s2", "l1");
    const NodeId d = AddNodeIn(c, "d", "s2", "l2");
    const QueueId q = AddQueue(c, "q");
    const JobId job = AddJob(c, "train", q, GpuSpec(4), 2, 2);
    c.SetJobTopology(job, TopologyRequest{"spine", required});
    const Decisions placed = RunSession(c, SchedulerConfig::Default());
    ASSERT_EQ(placed.binds.size(), 2u) << required;
    EXPECT_EQ(placed.binds[0].node + placed.binds[1].node, b + d) << required;
    TopologyDomains topology(c);
    ASSERT_EQ(topology.LevelOf("spine"), 1);
    EXPECT_TRUE(topology.Standalone(1));
    EXPECT_EQ(Names(topology.At(1)), (std::vector<std::string>{"s1", "s2"}));
  }
  for (bool required : {true, false}) {
    ClusterState c;
    c.SetTopologyKeys({"leaf"});
    AddNodeIn(c, "a", "", "l1");
    const QueueId q = AddQueue(c, "q");
    const JobId job = AddJob(c, "train", q, GpuSpec(1), 2, 2);
    c.SetJobTopology(job, TopologyRequest{"rack", required});
    const Decisions d = RunSession(c, SchedulerConfig::Default());
    if (required) {
      ASSERT_EQ(d.pending.size(), 1u);
      EXPECT_NE(d.pending[0].reason.find("topology: no node has the label rack"),
                std::string::npos)
          << d.pending[0].reason;
      EXPECT_TRUE(d.binds.empty());
    } else {
      EXPECT_EQ(d.binds.size(), 2u);
    }
  }
}

// The closest domain is named when none fits, with how many of the gang's tasks it took.
TEST(TopologyGangTest, TheReasonNamesTheClosestDomain) {
  ClusterState c;
  c.SetTopologyKeys({"spine", "leaf"});
  // l1 has the 12 GPUs the gang needs in total, but only two nodes it fits on; l2 is too
  // small to be tried.
  AddNodeIn(c, "a0", "s1", "l1");
  AddNodeIn(c, "a1", "s1", "l1");
  AddNodeIn(c, "a2", "s1", "l1", 2);
  AddNodeIn(c, "a3", "s1", "l1", 2);
  AddNodeIn(c, "b0", "s1", "l2");
  const QueueId q = AddQueue(c, "q");
  const JobId job = AddJob(c, "train", q, GpuSpec(4), 3, 3);
  c.SetJobTopology(job, TopologyRequest{"leaf", true});
  const Decisions d = RunSession(c, SchedulerConfig::Default());
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_NE(d.pending[0].reason.find("(the closest, s1/l1, took 2 of its tasks)"),
            std::string::npos)
      << d.pending[0].reason;
}

}  // namespace
}  // namespace gantry
