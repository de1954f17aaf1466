// Volcano HyperNodes: the tree, the labels each node gets, the levels, and what the tree
// refuses (cycles, tiers out of order, bad patterns, two parents); the object's parser.
#include "model/hypernodes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "k8s/topology_objects.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

HyperNodeMember NodeNamed(std::string name) {
  HyperNodeMember m;
  m.exact = std::move(name);
  return m;
}
HyperNodeMember NodesMatching(std::string pattern) {
  HyperNodeMember m;
  m.pattern = std::move(pattern);
  return m;
}
HyperNodeMember Child(std::string name) {
  HyperNodeMember m;
  m.hypernode = true;
  m.exact = std::move(name);
  return m;
}

Labels Rack(const std::string& rack) {
  Labels labels;
  labels.Set("rack", rack);
  return labels;
}

HyperNode Make(std::string name, int32_t tier, std::vector<HyperNodeMember> members) {
  return HyperNode{std::move(name), tier, std::move(members)};
}

// s0 (tier 3) > s1 (tier 2) > leaves l0 (nodes n0, n1 by name) and l1 (n2.. by pattern).
std::vector<HyperNode> ThreeTiers() {
  HyperNodeMember racks;
  racks.labels = LabelSelector{};
  racks.labels->match_labels.Set("rack", "r9");
  return {Make("s0", 3, {Child("s1")}), Make("s1", 2, {Child("l0"), Child("l1")}),
          Make("l0", 1, {NodeNamed("n0"), NodeNamed("n1")}),
          Make("l1", 1, {NodesMatching("^n[2-9]$")}), Make("l2", 1, {racks})};
}

TEST(HyperNodeTree, NodesGetTheHyperNodeOfEachTierThatHoldsThem) {
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree = HyperNodeTree::Build(ThreeTiers(), &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(tree.LevelKeys(), (std::vector<std::string>{HyperNodeLevelKey(3), HyperNodeLevelKey(2),
                                                        HyperNodeLevelKey(1)}));
  EXPECT_EQ(HyperNodeLevelKey(2), "topology.gantry.dev/hypernode-tier-2");
  EXPECT_EQ(tree.LabelsFor("n1", Labels()), (Pairs{{HyperNodeLevelKey(1), "l0"},
                                                   {HyperNodeLevelKey(2), "s1"},
                                                   {HyperNodeLevelKey(3), "s0"}}));
  EXPECT_EQ(tree.LabelsFor("n7", Labels())[0],
            (std::pair<std::string, std::string>{HyperNodeLevelKey(1), "l1"}));
  // A partial match, as Go's MatchString: "^n[2-9]$" does not take n10.
  EXPECT_TRUE(tree.LabelsFor("n10", Labels()).empty());
  // By labels, a root of its own.
  EXPECT_EQ(tree.LabelsFor("x", Rack("r9")), (Pairs{{HyperNodeLevelKey(1), "l2"}}));
}

TEST(HyperNodeTree, VolcanoTiersNameTheirLevels) {
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree = HyperNodeTree::Build(ThreeTiers(), &problems);
  EXPECT_EQ(tree.LevelForTier(1), HyperNodeLevelKey(1));
  EXPECT_EQ(tree.LevelForTier(2), HyperNodeLevelKey(2));
  EXPECT_EQ(tree.LevelForTier(4), "");  // above every tier: the whole cluster
  // Tiers 1 and 3 only: tier 2 allows no more than one tier-1 HyperNode.
  HyperNodeTree gap = HyperNodeTree::Build(
      {Make("top", 3, {Child("a")}), Make("a", 1, {NodeNamed("n0")})}, &problems);
  EXPECT_EQ(gap.LevelForTier(2), HyperNodeLevelKey(1));
  EXPECT_TRUE(problems.empty());
}

TEST(HyperNodeTree, ACycleIsLeftOutAndNamed) {
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree =
      HyperNodeTree::Build({Make("a", 2, {Child("b")}), Make("b", 2, {Child("a"), NodeNamed("n0")}),
                            Make("c", 1, {NodeNamed("n1")})},
                           &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].hypernode, "a");
  EXPECT_EQ(problems[0].message, "hypernodes a > b > a form a cycle; they are left out");
  EXPECT_TRUE(tree.LabelsFor("n0", Labels()).empty());
  EXPECT_EQ(tree.LabelsFor("n1", Labels()), (Pairs{{HyperNodeLevelKey(1), "c"}}));
  EXPECT_EQ(tree.LevelKeys(), std::vector<std::string>{HyperNodeLevelKey(1)});
  // A HyperNode that is its own member.
  problems.clear();
  HyperNodeTree::Build({Make("self", 1, {Child("self")})}, &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(Contains(problems[0].message, "self > self form a cycle"));
}

TEST(HyperNodeTree, TiersOutOfOrderTwoParentsAndBadPatternsAreSaid) {
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree =
      HyperNodeTree::Build({Make("low", 1, {Child("high")}), Make("high", 2, {NodeNamed("n0")}),
                            Make("p1", 3, {Child("leaf")}), Make("p2", 3, {Child("leaf")}),
                            Make("leaf", 1, {NodeNamed("n1"), NodesMatching("(")})},
                           &problems);
  ASSERT_EQ(problems.size(), 3u) << problems[0].message;
  EXPECT_TRUE(Contains(problems[0].message, "spec.members[1].selector.regexMatch.pattern"));
  EXPECT_TRUE(Contains(problems[1].message,
                       "hypernode low (tier 1) has member high of tier 2, not a lower one"));
  EXPECT_EQ(problems[2].message,
            "hypernode leaf is a member of both p1 and p2; it stays in the first");
  EXPECT_EQ(tree.LabelsFor("n1", Labels()),
            (Pairs{{HyperNodeLevelKey(1), "leaf"}, {HyperNodeLevelKey(3), "p1"}}));
  EXPECT_EQ(tree.LabelsFor("n0", Labels()), (Pairs{{HyperNodeLevelKey(2), "high"}}));
}

TEST(HyperNodeTree, ANodeTwoLeavesSelectIsInTheFirstByName) {
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree = HyperNodeTree::Build(
      {Make("b", 1, {NodeNamed("n0")}), Make("a", 1, {NodesMatching("n")})}, &problems);
  EXPECT_EQ(tree.LabelsFor("n0", Labels()), (Pairs{{HyperNodeLevelKey(1), "a"}}));
}

TEST(HyperNodeTree, WhatClientsWriteIsBounded) {
  std::vector<HyperNode> many;
  for (size_t i = 0; i <= kMaxHyperNodes; ++i) {
    many.push_back(Make("h" + std::to_string(100000 + i), 1, {NodesMatching("x")}));
  }
  std::vector<HyperNodeProblem> problems;
  HyperNodeTree tree = HyperNodeTree::Build(std::move(many), &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(Contains(problems[0].message, "past the first 4096 by name"));
  EXPECT_EQ(tree.LabelsFor("x", Labels()), (Pairs{{HyperNodeLevelKey(1), "h100000"}}));
}

TEST(ParseHyperNode, ReadsTierAndMembersAndNamesBadFields) {
  auto hn = k8s::ParseHyperNode(nlohmann::json::parse(R"({
    "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
    "metadata": {"name": "s0"},
    "spec": {"tier": 2, "members": [
      {"type": "HyperNode", "selector": {"exactMatch": {"name": "l0"}}},
      {"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-"}}},
      {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "r1"}}}}]}})"));
  ASSERT_TRUE(hn.ok()) << hn.status().message();
  EXPECT_EQ(hn->hypernode.name, "s0");
  EXPECT_EQ(hn->hypernode.tier, 2);
  ASSERT_EQ(hn->hypernode.members.size(), 3u);
  EXPECT_TRUE(hn->hypernode.members[0].hypernode);
  EXPECT_EQ(hn->hypernode.members[0].exact, "l0");
  EXPECT_EQ(hn->hypernode.members[1].pattern, "^gpu-");
  ASSERT_TRUE(hn->hypernode.members[2].labels.has_value());
  EXPECT_TRUE(hn->hypernode.members[2].labels->Matches(Rack("r1")));

  auto no_tier = k8s::ParseHyperNode(
      nlohmann::json::parse(R"({"metadata": {"name": "x"}, "spec": {"tier": 0}})"));
  ASSERT_FALSE(no_tier.ok());
  EXPECT_TRUE(Contains(no_tier.status().message(), "hypernode x: spec.tier: expected an integer"));
  auto two = k8s::ParseHyperNode(nlohmann::json::parse(R"({"metadata": {"name": "x"},
    "spec": {"tier": 1, "members": [{"type": "Node", "selector":
      {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "b"}}}]}})"));
  ASSERT_FALSE(two.ok());
  EXPECT_TRUE(Contains(two.status().message(),
                       "hypernode x: spec.members[0].selector: expected one of exactMatch"));
  auto type = k8s::ParseHyperNode(nlohmann::json::parse(R"({"metadata": {"name": "x"},
    "spec": {"tier": 1, "members": [{"type": "Rack", "selector": {"exactMatch": {"name": "a"}}}]}})"));
  ASSERT_FALSE(type.ok());
  EXPECT_TRUE(Contains(type.status().message(), "spec.members[0].type: \"Rack\" is not Node"));
}

}  // namespace
}  // namespace gantry
