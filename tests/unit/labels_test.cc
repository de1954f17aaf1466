#include "model/labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gantry {
namespace {

using Op = SelectorRequirement::Op;
using TolOp = Toleration::Op;
using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(LabelsTest, SortedByKeyAndLastValueWins) {
  Labels labels(Pairs{{"zone", "a"}, {"gpu", "a100"}, {"rack", "r1"}, {"gpu", "h100"}});
  std::vector<std::pair<std::string, std::string>> want = {
      {"gpu", "h100"}, {"rack", "r1"}, {"zone", "a"}};
  EXPECT_EQ(labels.pairs(), want);
  ASSERT_NE(labels.Find("gpu"), nullptr);
  EXPECT_EQ(*labels.Find("gpu"), "h100");
  EXPECT_EQ(*labels.Find("zone"), "a");
  EXPECT_EQ(labels.Find("missing"), nullptr);
  EXPECT_EQ(labels.Find(""), nullptr);
  EXPECT_EQ(labels.Find("gp"), nullptr);  // a prefix is not a key
}

TEST(LabelsTest, SetOverwritesAndEqualityIgnoresInsertionOrder) {
  Labels a;
  EXPECT_TRUE(a.empty());
  a.Set("b", "2");
  a.Set("a", "1");
  a.Set("b", "3");
  Labels b({{"a", "1"}, {"b", "3"}});
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.pairs().size(), 2u);
  b.Set("b", "4");
  EXPECT_NE(a, b);
  // An empty value is a value: the key is present.
  a.Set("c", "");
  ASSERT_NE(a.Find("c"), nullptr);
  EXPECT_EQ(*a.Find("c"), "");
}

TEST(TaintTest, EffectNamesRoundTrip) {
  for (TaintEffect effect :
       {TaintEffect::kNoSchedule, TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute}) {
    TaintEffect parsed = TaintEffect::kNoSchedule;
    ASSERT_TRUE(ParseTaintEffect(TaintEffectName(effect), &parsed)) << TaintEffectName(effect);
    EXPECT_EQ(parsed, effect);
  }
  EXPECT_EQ(TaintEffectName(TaintEffect::kNoSchedule), "NoSchedule");
  EXPECT_EQ(TaintEffectName(TaintEffect::kPreferNoSchedule), "PreferNoSchedule");
  EXPECT_EQ(TaintEffectName(TaintEffect::kNoExecute), "NoExecute");
  TaintEffect out = TaintEffect::kNoExecute;
  for (const char* bad : {"", "noschedule", "NoSchedule ", "Prefer", "NoExecution"}) {
    EXPECT_FALSE(ParseTaintEffect(bad, &out)) << bad;
  }
  EXPECT_EQ(out, TaintEffect::kNoExecute);  // untouched on failure
}

TEST(TaintTest, ToString) {
  EXPECT_EQ((Taint{"dedicated", "infer", TaintEffect::kNoSchedule}).ToString(),
            "dedicated=infer:NoSchedule");
  EXPECT_EQ((Taint{"nvidia.com/gpu", "", TaintEffect::kNoExecute}).ToString(),
            "nvidia.com/gpu:NoExecute");
  EXPECT_EQ((Taint{"spot", "true", TaintEffect::kPreferNoSchedule}).ToString(),
            "spot=true:PreferNoSchedule");
}

Toleration Tol(std::string key, TolOp op, std::string value) {
  Toleration t;
  t.key = std::move(key);
  t.op = op;
  t.value = std::move(value);
  return t;  // any effect
}

Toleration Tol(std::string key, TolOp op, std::string value, TaintEffect effect) {
  Toleration t = Tol(std::move(key), op, std::move(value));
  t.any_effect = false;
  t.effect = effect;
  return t;
}

struct TolerationCase {
  const char* name;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

class TolerationTest : public ::testing::TestWithParam<TolerationCase> {};

TEST_P(TolerationTest, Tolerates) {
  const TolerationCase& c = GetParam();
  EXPECT_EQ(c.toleration.Tolerates(c.taint), c.tolerates) << c.name;
}

const Taint kDedicatedNoSchedule{"dedicated", "infer", TaintEffect::kNoSchedule};
const Taint kDedicatedNoExecute{"dedicated", "infer", TaintEffect::kNoExecute};
const Taint kGpuNoSchedule{"nvidia.com/gpu", "", TaintEffect::kNoSchedule};

INSTANTIATE_TEST_SUITE_P(
    Cases, TolerationTest,
    ::testing::Values(
        TolerationCase{"exists with empty key tolerates any key", Tol("", TolOp::kExists, ""),
                       kDedicatedNoSchedule, true},
        TolerationCase{"exists with empty key tolerates any effect", Tol("", TolOp::kExists, ""),
                       kDedicatedNoExecute, true},
        TolerationCase{"exists with empty key tolerates an empty-valued taint",
                       Tol("", TolOp::kExists, ""), kGpuNoSchedule, true},
        TolerationCase{"exists with empty key but one effect: that effect",
                       Tol("", TolOp::kExists, "", TaintEffect::kNoSchedule), kDedicatedNoSchedule,
                       true},
        TolerationCase{"exists with empty key but one effect: not another",
                       Tol("", TolOp::kExists, "", TaintEffect::kNoSchedule), kDedicatedNoExecute,
                       false},
        TolerationCase{"exists with key matches any value", Tol("dedicated", TolOp::kExists, ""),
                       kDedicatedNoSchedule, true},
        TolerationCase{"exists ignores its value", Tol("dedicated", TolOp::kExists, "train"),
                       kDedicatedNoSchedule, true},
        TolerationCase{"exists with another key", Tol("spot", TolOp::kExists, ""),
                       kDedicatedNoSchedule, false},
        TolerationCase{"equal: same key and value", Tol("dedicated", TolOp::kEqual, "infer"),
                       kDedicatedNoSchedule, true},
        TolerationCase{"equal: other value", Tol("dedicated", TolOp::kEqual, "train"),
                       kDedicatedNoSchedule, false},
        TolerationCase{"equal: other key", Tol("team", TolOp::kEqual, "infer"),
                       kDedicatedNoSchedule, false},
        TolerationCase{"equal: empty value matches empty-valued taint",
                       Tol("nvidia.com/gpu", TolOp::kEqual, ""), kGpuNoSchedule, true},
        TolerationCase{"equal: empty value does not match a valued taint",
                       Tol("dedicated", TolOp::kEqual, ""), kDedicatedNoSchedule, false},
        TolerationCase{"equal with matching effect",
                       Tol("dedicated", TolOp::kEqual, "infer", TaintEffect::kNoExecute),
                       kDedicatedNoExecute, true},
        TolerationCase{"equal with other effect",
                       Tol("dedicated", TolOp::kEqual, "infer", TaintEffect::kNoExecute),
                       kDedicatedNoSchedule, false},
        TolerationCase{"PreferNoSchedule effect does not tolerate NoSchedule",
                       Tol("dedicated", TolOp::kExists, "", TaintEffect::kPreferNoSchedule),
                       kDedicatedNoSchedule, false}),
    [](const ::testing::TestParamInfo<TolerationCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(ToleratesAllTest, NoTaintsNeedNoTolerations) {
  const Taint* blocking = nullptr;
  EXPECT_TRUE(ToleratesAll({}, {}, &blocking));
  EXPECT_EQ(blocking, nullptr);
}

TEST(ToleratesAllTest, PreferNoScheduleNeverBlocks) {
  std::vector<Taint> taints = {{"spot", "true", TaintEffect::kPreferNoSchedule},
                               {"busy", "", TaintEffect::kPreferNoSchedule}};
  const Taint* blocking = nullptr;
  EXPECT_TRUE(ToleratesAll({}, taints, &blocking));
  EXPECT_EQ(blocking, nullptr);
  // Even a toleration of some other taint does not change that.
  EXPECT_TRUE(ToleratesAll({Tol("other", TolOp::kExists, "")}, taints, nullptr));
}

TEST(ToleratesAllTest, ReportsTheFirstUntoleratedTaint) {
  std::vector<Taint> taints = {{"spot", "true", TaintEffect::kPreferNoSchedule},
                               {"dedicated", "infer", TaintEffect::kNoSchedule},
                               {"maintenance", "", TaintEffect::kNoExecute},
                               {"other", "x", TaintEffect::kNoSchedule}};
  std::vector<Toleration> tolerations = {Tol("dedicated", TolOp::kEqual, "infer")};
  const Taint* blocking = nullptr;
  EXPECT_FALSE(ToleratesAll(tolerations, taints, &blocking));
  EXPECT_EQ(blocking, &taints[2]);  // the PreferNoSchedule one is skipped, dedicated tolerated

  tolerations.push_back(Tol("maintenance", TolOp::kExists, "", TaintEffect::kNoExecute));
  blocking = nullptr;
  EXPECT_FALSE(ToleratesAll(tolerations, taints, &blocking));
  EXPECT_EQ(blocking, &taints[3]);

  tolerations.push_back(Tol("other", TolOp::kEqual, "x"));
  blocking = nullptr;
  EXPECT_TRUE(ToleratesAll(tolerations, taints, &blocking));
  EXPECT_EQ(blocking, nullptr);

  // The blocking pointer may be null.
  EXPECT_FALSE(ToleratesAll({}, taints, nullptr));
}

TEST(ToleratesAllTest, ExistsWithEmptyKeyToleratesEverything) {
  std::vector<Taint> taints = {{"a", "1", TaintEffect::kNoSchedule},
                               {"b", "", TaintEffect::kNoExecute},
                               {"c", "3", TaintEffect::kPreferNoSchedule}};
  EXPECT_TRUE(ToleratesAll({Tol("", TolOp::kExists, "")}, taints, nullptr));
  // Restricted to NoSchedule it leaves the NoExecute taint.
  const Taint* blocking = nullptr;
  EXPECT_FALSE(
      ToleratesAll({Tol("", TolOp::kExists, "", TaintEffect::kNoSchedule)}, taints, &blocking));
  EXPECT_EQ(blocking, &taints[1]);
}

TEST(SelectorOpTest, Parses) {
  struct {
    const char* text;
    Op op;
  } cases[] = {{"In", Op::kIn},
               {"NotIn", Op::kNotIn},
               {"Exists", Op::kExists},
               {"DoesNotExist", Op::kDoesNotExist}};
  for (const auto& c : cases) {
    Op out = Op::kExists;
    if (c.op == Op::kExists) out = Op::kIn;
    ASSERT_TRUE(ParseSelectorOp(c.text, &out)) << c.text;
    EXPECT_EQ(out, c.op) << c.text;
  }
  Op out = Op::kIn;
  for (const char* bad : {"in", "Gt", "Lt", "", "NotExists", "Exist"}) {
    EXPECT_FALSE(ParseSelectorOp(bad, &out)) << bad;
  }
}

struct SelectorCase {
  const char* name;
  SelectorRequirement requirement;
  bool matches;
};

class SelectorTest : public ::testing::TestWithParam<SelectorCase> {};

// The labels every case is matched against.
const Labels& NodeLabels() {
  static const Labels labels(Pairs{{"gpu", "a100"}, {"zone", "us-east-1a"}, {"empty", ""}});
  return labels;
}

TEST_P(SelectorTest, Matches) {
  const SelectorCase& c = GetParam();
  EXPECT_EQ(c.requirement.Matches(NodeLabels()), c.matches) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SelectorTest,
    ::testing::Values(
        SelectorCase{"In: value listed", {"gpu", Op::kIn, {"h100", "a100"}}, true},
        SelectorCase{"In: value not listed", {"gpu", Op::kIn, {"h100", "v100"}}, false},
        SelectorCase{"In: label missing", {"rack", Op::kIn, {"r1"}}, false},
        SelectorCase{"In: no values", {"gpu", Op::kIn, {}}, false},
        SelectorCase{"In: empty value listed", {"empty", Op::kIn, {""}}, true},
        SelectorCase{"NotIn: value listed", {"gpu", Op::kNotIn, {"a100"}}, false},
        SelectorCase{"NotIn: value not listed", {"gpu", Op::kNotIn, {"h100"}}, true},
        SelectorCase{"NotIn: label missing matches", {"rack", Op::kNotIn, {"r1"}}, true},
        SelectorCase{"Exists: present", {"zone", Op::kExists, {}}, true},
        SelectorCase{"Exists: present with empty value", {"empty", Op::kExists, {}}, true},
        SelectorCase{"Exists: missing", {"rack", Op::kExists, {}}, false},
        SelectorCase{"DoesNotExist: missing", {"rack", Op::kDoesNotExist, {}}, true},
        SelectorCase{"DoesNotExist: present", {"gpu", Op::kDoesNotExist, {}}, false},
        SelectorCase{"values are case-sensitive", {"gpu", Op::kIn, {"A100"}}, false}),
    [](const ::testing::TestParamInfo<SelectorCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(NodeAffinityTest, NoTermsMatchesEverything) {
  NodeAffinity affinity;
  EXPECT_TRUE(affinity.Matches(NodeLabels()));
  EXPECT_TRUE(affinity.Matches(Labels()));
}

TEST(NodeAffinityTest, OrOfAndTerms) {
  NodeAffinity affinity;
  // (gpu In [h100] AND zone Exists) OR (gpu In [a100] AND rack DoesNotExist)
  affinity.terms = {
      {{"gpu", Op::kIn, {"h100"}}, {"zone", Op::kExists, {}}},
      {{"gpu", Op::kIn, {"a100"}}, {"rack", Op::kDoesNotExist, {}}},
  };
  struct {
    Labels labels;
    bool matches;
  } cases[] = {
      {Labels(Pairs{{"gpu", "h100"}, {"zone", "a"}}), true},    // first term
      {Labels(Pairs{{"gpu", "h100"}}), false},                  // first term half, second not
      {Labels(Pairs{{"gpu", "a100"}}), true},                   // second term
      {Labels(Pairs{{"gpu", "a100"}, {"rack", "r1"}}), false},  // second term half
      {Labels(Pairs{{"gpu", "a100"}, {"zone", "a"}}), true},    // second term (zone irrelevant)
      {Labels(Pairs{{"gpu", "v100"}, {"zone", "a"}}), false},   // neither
      {Labels(), false},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(affinity.Matches(cases[i].labels), cases[i].matches) << "case " << i;
  }
}

TEST(NodeAffinityTest, EveryRequirementOfATermMustMatch) {
  NodeAffinity affinity;
  affinity.terms = {{{"a", Op::kExists, {}}, {"b", Op::kExists, {}}, {"c", Op::kNotIn, {"x"}}}};
  EXPECT_TRUE(affinity.Matches(Labels(Pairs{{"a", "1"}, {"b", "2"}})));
  EXPECT_TRUE(affinity.Matches(Labels(Pairs{{"a", "1"}, {"b", "2"}, {"c", "y"}})));
  EXPECT_FALSE(affinity.Matches(Labels(Pairs{{"a", "1"}, {"b", "2"}, {"c", "x"}})));
  EXPECT_FALSE(affinity.Matches(Labels(Pairs{{"a", "1"}})));
  EXPECT_FALSE(affinity.Matches(Labels(Pairs{{"b", "2"}})));
}

// Kubernetes (k8s.io/api core/v1 NodeSelectorTerm): "A null or empty node selector term
// matches no objects." labels.h promises Kubernetes' semantics, and the scenario reader
// accepts `matchExpressions: []`, so an empty term must not make every node match.
TEST(NodeAffinityTest, EmptyTermMatchesNoNode) {
  NodeAffinity only_empty;
  only_empty.terms = {{}};
  EXPECT_FALSE(only_empty.Matches(NodeLabels()));
  EXPECT_FALSE(only_empty.Matches(Labels()));

  // An empty term ORed with a real one: only the real one counts.
  NodeAffinity mixed;
  mixed.terms = {{}, {{"gpu", Op::kIn, {"h100"}}}};
  EXPECT_FALSE(mixed.Matches(NodeLabels()));
  EXPECT_TRUE(mixed.Matches(Labels(Pairs{{"gpu", "h100"}})));
}

TEST(NodeSelectorTest, EveryPairMustMatch) {
  const Labels& node = NodeLabels();
  EXPECT_TRUE(MatchesNodeSelector(Labels(), node));
  EXPECT_TRUE(MatchesNodeSelector(Labels(), Labels()));
  EXPECT_TRUE(MatchesNodeSelector(Labels(Pairs{{"gpu", "a100"}}), node));
  EXPECT_TRUE(MatchesNodeSelector(Labels(Pairs{{"gpu", "a100"}, {"zone", "us-east-1a"}}), node));
  EXPECT_TRUE(MatchesNodeSelector(Labels(Pairs{{"empty", ""}}), node));
  EXPECT_FALSE(MatchesNodeSelector(Labels(Pairs{{"gpu", "h100"}}), node));
  EXPECT_FALSE(MatchesNodeSelector(Labels(Pairs{{"gpu", "a100"}, {"zone", "eu"}}), node));
  EXPECT_FALSE(MatchesNodeSelector(Labels(Pairs{{"rack", "r1"}}), node));
  EXPECT_FALSE(MatchesNodeSelector(Labels(Pairs{{"rack", ""}}), node));  // absent is not ""
  EXPECT_FALSE(MatchesNodeSelector(Labels(Pairs{{"gpu", "a100"}}), Labels()));
}

TEST(SelectorOpTest, GtAndLtOnlyWhereNumericOperatorsAreAllowed) {
  Op out = Op::kIn;
  ASSERT_TRUE(ParseSelectorOp("Gt", &out, /*numeric=*/true));
  EXPECT_EQ(out, Op::kGt);
  ASSERT_TRUE(ParseSelectorOp("Lt", &out, /*numeric=*/true));
  EXPECT_EQ(out, Op::kLt);
  EXPECT_FALSE(ParseSelectorOp("gt", &out, /*numeric=*/true));
  EXPECT_EQ(SelectorOpName(Op::kGt), "Gt");
  EXPECT_EQ(SelectorOpName(Op::kDoesNotExist), "DoesNotExist");
}

// Kubernetes reads both sides of Gt/Lt as base-10 int64 (strconv.ParseInt); anything else,
// on either side, matches neither operator.
TEST(SelectorTest, GtAndLtCompareIntegers) {
  const Labels labels(Pairs{{"cores", "64"},
                            {"neg", "-5"},
                            {"text", "sixty"},
                            {"plus", "+7"},
                            {"huge", "9223372036854775808"},
                            {"float", "1.5"},
                            {"empty", ""}});
  struct {
    SelectorRequirement r;
    bool matches;
  } cases[] = {
      {{"cores", Op::kGt, {"32"}}, true},      {{"cores", Op::kGt, {"64"}}, false},
      {{"cores", Op::kLt, {"65"}}, true},      {{"cores", Op::kLt, {"64"}}, false},
      {{"neg", Op::kLt, {"0"}}, true},         {{"neg", Op::kGt, {"-6"}}, true},
      {{"plus", Op::kGt, {"6"}}, true},        {{"text", Op::kGt, {"0"}}, false},
      {{"text", Op::kLt, {"0"}}, false},       {{"huge", Op::kGt, {"0"}}, false},  // beyond int64
      {{"float", Op::kGt, {"1"}}, false},      {{"empty", Op::kLt, {"1"}}, false},
      {{"missing", Op::kGt, {"0"}}, false},    {{"missing", Op::kLt, {"0"}}, false},
      {{"cores", Op::kGt, {"x"}}, false},       // a bad operand
      {{"cores", Op::kGt, {"1", "2"}}, false},  // Kubernetes wants exactly one value
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(cases[i].r.Matches(labels), cases[i].matches) << "case " << i;
  }
}

TEST(SelectorTest, MatchFieldsCompareTheNodeName) {
  const SelectorRequirement in{std::string(kNodeNameField), Op::kIn, {"node-a"}};
  const SelectorRequirement not_in{std::string(kNodeNameField), Op::kNotIn, {"node-a"}};
  const Labels labels(Pairs{{"field:metadata.name", "node-a"}});  // not a real key: ignored
  EXPECT_TRUE(in.Matches(Labels(), "node-a"));
  EXPECT_FALSE(in.Matches(labels, "node-b"));
  EXPECT_FALSE(not_in.Matches(Labels(), "node-a"));
  EXPECT_TRUE(not_in.Matches(labels, "node-b"));
}

TEST(NodeAffinityTest, MatchFieldsAndExpressionsOfOneTermAllHold) {
  NodeAffinity affinity;
  affinity.terms = {{{"gpu", Op::kIn, {"a100"}}, {std::string(kNodeNameField), Op::kIn, {"n1"}}}};
  const Labels a100(Pairs{{"gpu", "a100"}});
  EXPECT_TRUE(affinity.Matches(a100, "n1"));
  EXPECT_FALSE(affinity.Matches(a100, "n2"));
  EXPECT_FALSE(affinity.Matches(Labels(), "n1"));
}

TEST(NodeAffinityTest, PreferredTermsAddTheWeightsOfThoseThatMatch) {
  NodeAffinity affinity;
  affinity.preferred = {{10, {{"zone", Op::kIn, {"a"}}}},
                        {5, {{"gpu", Op::kExists, {}}}},
                        {80, {}}};  // an empty term matches no node
  EXPECT_EQ(affinity.PreferredWeight(Labels(Pairs{{"zone", "a"}, {"gpu", "x"}})), 15);
  EXPECT_EQ(affinity.PreferredWeight(Labels(Pairs{{"zone", "b"}, {"gpu", "x"}})), 5);
  EXPECT_EQ(affinity.PreferredWeight(Labels()), 0);
  EXPECT_TRUE(affinity.Matches(Labels())) << "preferred terms never filter";
}

}  // namespace
}  // namespace gantry
