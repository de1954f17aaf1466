#include "model/task_spec.h"

#include <gtest/gtest.h>

#include <functional>
#include <unordered_map>
#include <vector>

namespace gantry {
namespace {

TaskSpec Base() {
  TaskSpec s;
  s.role = "worker";
  s.requests = {{kCpu, 1000}, {kMemory, 2048}};
  s.gpu.milli = 500;
  s.gpu.models = {1, 2};
  s.priority = 3;
  s.node_selector.Set("zone", "a");
  s.tolerations.push_back(Toleration{"gpu", Toleration::Op::kExists, "", true, {}});
  s.affinity.terms = {{SelectorRequirement{"rack", SelectorRequirement::Op::kIn, {"r1"}}}};
  return s;
}

// Each way one field of a spec can differ from Base().
std::vector<std::function<void(TaskSpec&)>> OneFieldChanges() {
  return {
      [](TaskSpec& s) { s.role = "ps"; },
      [](TaskSpec& s) { s.requests.Set(kMemory, 4096); },
      [](TaskSpec& s) { s.gpu.count = 1, s.gpu.milli = 0; },
      [](TaskSpec& s) { s.gpu.milli = 250; },
      [](TaskSpec& s) { s.gpu.memory_mib = 1024; },
      [](TaskSpec& s) {
        s.gpu.models = {2, 1};
      },
      [](TaskSpec& s) { s.priority = 4; },
      [](TaskSpec& s) { s.node_selector.Set("zone", "b"); },
      [](TaskSpec& s) { s.node_selector.Set("kubernetes.io/hostname", "n1"); },
      [](TaskSpec& s) { s.tolerations.clear(); },
      [](TaskSpec& s) { s.tolerations[0].any_effect = false; },
      [](TaskSpec& s) { s.affinity.terms[0][0].op = SelectorRequirement::Op::kNotIn; },
      [](TaskSpec& s) { s.affinity.terms[0][0].values = {"r2"}; },
      [](TaskSpec& s) { s.affinity.terms.push_back({}); },
      [](TaskSpec& s) {
        s.volume_node_affinity.push_back(NodeAffinity{
            {{SelectorRequirement{"kubernetes.io/hostname", SelectorRequirement::Op::kIn, {"n1"}}}},
            {}});
      },
      [](TaskSpec& s) {
        s.volume_zones.push_back(VolumeTopology{std::string(kZoneLabel), {"a"}});
      },
      [](TaskSpec& s) { s.rwop_claims.push_back("data"); },
  };
}

TEST(TaskSpecTest, EqualSpecsHashAlike) {
  EXPECT_EQ(Base(), Base());
  EXPECT_EQ(TaskSpecHash()(Base()), TaskSpecHash()(Base()));
}

TEST(TaskSpecTest, EveryFieldTellsSpecsApart) {
  std::unordered_map<TaskSpec, int, TaskSpecHash> seen;
  seen.emplace(Base(), -1);
  const auto changes = OneFieldChanges();
  for (size_t i = 0; i < changes.size(); ++i) {
    TaskSpec s = Base();
    changes[i](s);
    EXPECT_FALSE(s == Base()) << "change " << i;
    // The hash spreads them too (a collision would be legal, but not on these).
    EXPECT_NE(TaskSpecHash()(s), TaskSpecHash()(Base())) << "change " << i;
    EXPECT_TRUE(seen.emplace(s, static_cast<int>(i)).second) << "change " << i;
  }
  EXPECT_EQ(seen.size(), changes.size() + 1);
}

// A spec reads the labels its volumes' node affinity names (matchFields on the name
// aside: volumes are checked against labels alone), and with any volume topology label
// all four topology keys, since a node without any of them passes VolumeZone.
TEST(TaskSpecTest, LabelKeysIncludeWhatTheVolumesRead) {
  TaskSpec s;
  s.volume_node_affinity.push_back(NodeAffinity{
      {{SelectorRequirement{"kubernetes.io/hostname", SelectorRequirement::Op::kIn, {"n1"}},
        SelectorRequirement{std::string(kNodeNameField), SelectorRequirement::Op::kIn, {"n1"}}}},
      {}});
  EXPECT_EQ(LabelKeysOf(s), std::vector<std::string>{"kubernetes.io/hostname"});
  s.volume_zones.push_back(VolumeTopology{std::string(kZoneLabel), {"us-east-1a"}});
  EXPECT_EQ(LabelKeysOf(s), (std::vector<std::string>{
                                "failure-domain.beta.kubernetes.io/region",
                                "failure-domain.beta.kubernetes.io/zone", "kubernetes.io/hostname",
                                "topology.kubernetes.io/region", "topology.kubernetes.io/zone"}));
}

TEST(TaskShapeTest, OnlyRequestsAndGpusMakeAShape) {
  const TaskShape base = TaskShape::Of(Base());
  // Where a task may run, its role and priority make no other shape.
  TaskSpec elsewhere = Base();
  elsewhere.role = "ps";
  elsewhere.priority = 9;
  elsewhere.node_selector = Labels();
  elsewhere.tolerations.clear();
  elsewhere.affinity = NodeAffinity();
  EXPECT_EQ(TaskShape::Of(elsewhere), base);
  EXPECT_EQ(TaskShapeHash()(TaskShape::Of(elsewhere)), TaskShapeHash()(base));
  // What it takes does.
  TaskSpec more = Base();
  more.gpu.memory_mib = 1024;
  EXPECT_FALSE(TaskShape::Of(more) == base);
  more = Base();
  more.requests.Set(kCpu, 2000);
  EXPECT_FALSE(TaskShape::Of(more) == base);
}

}  // namespace
}  // namespace gantry
