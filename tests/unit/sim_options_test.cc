#include "sim/sim_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

SimOptions Protocol() {
  SimOptions o;
  o.cluster = "nodes.csv";
  o.workload = "pods.csv";
  o.protocol = "fgd-atc23";
  return o;
}

SimOptions Replay() {
  SimOptions o;
  o.cluster = "nodes.csv";
  o.workload = "jobs.csv";
  return o;
}

TEST(SimOptionsTest, DefaultsWhenNothingIsGiven) {
  SimSettings p = Must(ParseSimOptions(Protocol()));
  EXPECT_TRUE(p.protocol);
  EXPECT_DOUBLE_EQ(p.arrival_scale, 1.3);
  EXPECT_EQ(p.policies, (std::vector<std::string>{"gantry"}));
  EXPECT_EQ(p.seeds, (std::vector<uint64_t>{42}));
  EXPECT_EQ(p.jobs, 2);
  EXPECT_FALSE(p.generator.has_value());
  SimSettings r = Must(ParseSimOptions(Replay()));
  EXPECT_FALSE(r.protocol);
  EXPECT_EQ(r.period_s, 10);
  EXPECT_EQ(r.nodes_to_score, 100);
}

TEST(SimOptionsTest, ParsesEachNumber) {
  SimOptions o = Protocol();
  o.arrival_scale = "2.5";
  o.jobs = "8";
  o.seeds = "1,5-7";
  o.policies = "fgd,gantry";
  SimSettings p = Must(ParseSimOptions(o));
  EXPECT_DOUBLE_EQ(p.arrival_scale, 2.5);
  EXPECT_EQ(p.jobs, 8);
  EXPECT_EQ(p.seeds, (std::vector<uint64_t>{1, 5, 6, 7}));
  EXPECT_EQ(p.policies, (std::vector<std::string>{"fgd", "gantry"}));
  SimOptions r = Replay();
  r.period = "60";
  r.nodes_to_score = "0";
  SimSettings q = Must(ParseSimOptions(r));
  EXPECT_EQ(q.period_s, 60);
  EXPECT_EQ(q.nodes_to_score, 0);
}

struct BadOption {
  const char* what;
  SimOptions options;
  std::vector<std::string> parts;  // each in the message
};

void PrintTo(const BadOption& c, std::ostream* os) {
  *os << c.what;
}

class SimOptionsErrorTest : public ::testing::TestWithParam<BadOption> {};

TEST_P(SimOptionsErrorTest, NamesTheOptionTheValueAndTheRange) {
  auto r = ParseSimOptions(GetParam().options);
  ASSERT_FALSE(r.ok()) << GetParam().what;
  for (const std::string& part : GetParam().parts)
    EXPECT_TRUE(Contains(r.status().message(), part)) << GetParam().what;
}

BadOption Scale(const char* value, std::vector<std::string> parts) {
  SimOptions o = Protocol();
  o.arrival_scale = value;
  return {value, o, std::move(parts)};
}

template <typename F>
BadOption With(const char* what, SimOptions o, F change, std::vector<std::string> parts) {
  change(o);
  return {what, o, std::move(parts)};
}

BadOption Generate(const char* text, std::vector<std::string> parts) {
  SimOptions o;
  o.generate = text;
  return {text, o, std::move(parts)};
}

INSTANTIATE_TEST_SUITE_P(
    ArrivalScale, SimOptionsErrorTest,
    ::testing::Values(Scale("-1", {"--arrival-scale", "\"-1\"", "[0.01, 100]"}),
                      Scale("nan", {"--arrival-scale", "\"nan\"", "[0.01, 100]"}),
                      Scale("inf", {"--arrival-scale", "\"inf\"", "[0.01, 100]"}),
                      Scale("-inf", {"--arrival-scale", "\"-inf\""}),
                      Scale("0", {"--arrival-scale", "\"0\"", "[0.01, 100]"}),
                      Scale("0.001", {"--arrival-scale", "\"0.001\"", "[0.01, 100]"}),
                      Scale("1e12", {"--arrival-scale", "\"1e12\"", "100"}),
                      Scale("1e999", {"--arrival-scale", "\"1e999\""}),
                      Scale("abc", {"--arrival-scale", "expected a number", "\"abc\""}),
                      Scale("1.3x", {"--arrival-scale", "\"1.3x\""}),
                      Scale(" 1.3", {"--arrival-scale", "\" 1.3\""}),
                      Scale("0x1p0", {"--arrival-scale", "\"0x1p0\""})));

INSTANTIATE_TEST_SUITE_P(
    Integers, SimOptionsErrorTest,
    ::testing::Values(
        With("period 0", Replay(), [](SimOptions& o) { o.period = "0"; },
             {"--period", "\"0\"", "[1, 31536000]"}),
        With("period -3", Replay(), [](SimOptions& o) { o.period = "-3"; }, {"--period", "\"-3\""}),
        With("period 1.5", Replay(), [](SimOptions& o) { o.period = "1.5"; },
             {"--period", "expected an integer", "\"1.5\""}),
        With("period hex", Replay(), [](SimOptions& o) { o.period = "0x10"; },
             {"--period", "\"0x10\""}),
        With("period huge", Replay(), [](SimOptions& o) { o.period = "99999999999999999999"; },
             {"--period", "out of range"}),
        With("nodes-to-score -1", Replay(), [](SimOptions& o) { o.nodes_to_score = "-1"; },
             {"--nodes-to-score", "\"-1\"", "[0, 100000]"}),
        With("nodes-to-score huge", Replay(),
             [](SimOptions& o) { o.nodes_to_score = "3000000000"; },
             {"--nodes-to-score", "\"3000000000\""}),
        With("jobs 0", Replay(), [](SimOptions& o) { o.jobs = "0"; },
             {"--jobs", "\"0\"", "[1, 256]"}),
        With("jobs -5", Replay(), [](SimOptions& o) { o.jobs = "-5"; }, {"--jobs", "\"-5\""}),
        With("jobs 1e3", Replay(), [](SimOptions& o) { o.jobs = "1e3"; }, {"--jobs", "\"1e3\""})));

INSTANTIATE_TEST_SUITE_P(
    SeedsAndPolicies, SimOptionsErrorTest,
    ::testing::Values(
        With("seed -1", Replay(), [](SimOptions& o) { o.seeds = "-1"; }, {"--seeds", "\"-1\""}),
        With("seed twice", Replay(), [](SimOptions& o) { o.seeds = "42,40-45"; },
             {"--seeds", "42", "twice"}),
        With("reversed range", Replay(), [](SimOptions& o) { o.seeds = "51-42"; },
             {"--seeds", "\"51-42\""}),
        With("huge range", Replay(), [](SimOptions& o) { o.seeds = "0-18446744073709551615"; },
             {"--seeds", "10000"}),
        With("many ranges", Replay(), [](SimOptions& o) { o.seeds = "0-5999,6000-11999"; },
             {"--seeds", "10000"}),
        With("empty seed", Replay(), [](SimOptions& o) { o.seeds = "1,,2"; }, {"--seeds", "\"\""}),
        With("seed with a space", Replay(), [](SimOptions& o) { o.seeds = " 42"; },
             {"--seeds", "\" 42\""}),
        With("policy twice", Replay(), [](SimOptions& o) { o.policies = "fgd,fgd"; },
             {"--policy", "\"fgd\"", "twice"}),
        With("empty policy", Replay(), [](SimOptions& o) { o.policies = "fgd,"; },
             {"--policy", "empty"})));

INSTANTIATE_TEST_SUITE_P(
    Generate, SimOptionsErrorTest,
    ::testing::Values(Generate("nodes=2000000000",
                               {"--generate nodes", "\"2000000000\"", "[1, 100000]"}),
                      Generate("nodes=0", {"--generate nodes", "\"0\""}),
                      Generate("pods=3000000", {"--generate pods", "\"3000000\"", "[1, 2000000]"}),
                      Generate("pods=-1", {"--generate pods", "\"-1\""}),
                      Generate("rate=nan", {"--generate rate", "\"nan\"", "[1e-06, 1e+06]"}),
                      Generate("rate=inf", {"--generate rate", "\"inf\""}),
                      Generate("rate=0", {"--generate rate", "\"0\""}),
                      Generate("rate=-2", {"--generate rate", "\"-2\""}),
                      Generate("duration=-1", {"--generate duration", "\"-1\"", "[1, 1000000000]"}),
                      Generate("duration=0", {"--generate duration", "\"0\""}),
                      Generate("duration=1.5", {"--generate duration", "\"1.5\""}),
                      Generate("seed=-1", {"--generate seed", "\"-1\""}),
                      Generate("mix=60/25/5/10x", {"--generate mix", "\"60/25/5/10x\"", "100"}),
                      Generate("mix=60/25/5", {"--generate mix", "\"60/25/5\""}),
                      Generate("mix=50/50/0/1", {"--generate mix", "\"50/50/0/1\""}),
                      Generate("mix=110/-10/0/0", {"--generate mix", "\"110/-10/0/0\""}),
                      Generate("nodes=1,nodes=2", {"--generate", "nodes", "twice"}),
                      Generate("nodes", {"--generate", "key=value", "\"nodes\""}),
                      Generate("nodes=1,", {"--generate", "key=value", "\"\""}),
                      Generate("gpus=8", {"--generate", "unknown key", "\"gpus\""})));

INSTANTIATE_TEST_SUITE_P(
    IgnoredOptions, SimOptionsErrorTest,
    ::testing::Values(
        With("arrival scale in a replay", Replay(), [](SimOptions& o) { o.arrival_scale = "1.3"; },
             {"--arrival-scale", "--protocol"}),
        With("period in the protocol", Protocol(), [](SimOptions& o) { o.period = "10"; },
             {"--period", "--protocol"}),
        With("nodes-to-score in the protocol", Protocol(),
             [](SimOptions& o) { o.nodes_to_score = "5"; }, {"--nodes-to-score", "--protocol"}),
        With("generated nodes with a cluster", Replay(),
             [](SimOptions& o) {
               o.generate = "nodes=5";
               o.workload.clear();
             },
             {"--generate nodes", "--cluster"}),
        With("generated pods with a workload", Replay(),
             [](SimOptions& o) {
               o.generate = "pods=5";
               o.cluster.clear();
             },
             {"--generate pods", "--workload"}),
        With("generate with both files", Replay(), [](SimOptions& o) { o.generate = "seed=5"; },
             {"--generate"}),
        With("unknown protocol", Protocol(), [](SimOptions& o) { o.protocol = "x"; },
             {"--protocol", "\"x\""}),
        With("protocol without a workload", Protocol(),
             [](SimOptions& o) {
               o.workload.clear();
               o.generate = "pods=5";
             },
             {"--protocol", "--workload"}),
        With("no cluster", Replay(), [](SimOptions& o) { o.cluster.clear(); }, {"--cluster"}),
        With("no workload", Replay(), [](SimOptions& o) { o.workload.clear(); }, {"--workload"})));

INSTANTIATE_TEST_SUITE_P(
    Defragment, SimOptionsErrorTest,
    ::testing::Values(
        With("movable word", Replay(), [](SimOptions& o) { o.movable = "some"; },
             {"--movable", "all, shared or a percent", "\"some\""}),
        With("movable percent", Replay(), [](SimOptions& o) { o.movable = "101"; },
             {"--movable", "\"101\""}),
        With("movable negative", Replay(), [](SimOptions& o) { o.movable = "-5"; },
             {"--movable", "\"-5\""}),
        With("movable in the protocol", Protocol(), [](SimOptions& o) { o.movable = "all"; },
             {"--movable", "--protocol"}),
        With("budget negative", Replay(), [](SimOptions& o) { o.defragment_budget = "-1"; },
             {"--defragment-budget", "\"-1\"", "[0, 10000]"}),
        With("budget in the protocol", Protocol(), [](SimOptions& o) { o.defragment_budget = "5"; },
             {"--defragment-budget"}),
        With("generated movable with a workload", Replay(),
             [](SimOptions& o) {
               o.generate = "movable=10";
               o.cluster.clear();
             },
             {"--generate movable", "--workload"}),
        Generate("movable=150", {"--generate movable", "\"150\"", "[0, 100]"}),
        With("time scale 0", Replay(), [](SimOptions& o) { o.time_scale = "0"; },
             {"--time-scale", "\"0\"", "[1, 1000000]"}),
        With("time scale 2.5", Replay(), [](SimOptions& o) { o.time_scale = "2.5"; },
             {"--time-scale", "\"2.5\""}),
        With("time scale in the protocol", Protocol(), [](SimOptions& o) { o.time_scale = "10"; },
             {"--time-scale", "--protocol"})));

TEST(SimOptionsTest, MovableAndTheDefragmentBudget) {
  SimOptions o = Replay();
  SimSettings s = Must(ParseSimOptions(o));
  EXPECT_EQ(s.movable.kind, MovableSelection::Kind::kNone);
  EXPECT_FALSE(s.defragment_budget.has_value());
  o.movable = "shared";
  o.defragment_budget = "40";
  s = Must(ParseSimOptions(o));
  EXPECT_EQ(s.movable.kind, MovableSelection::Kind::kShared);
  EXPECT_EQ(s.defragment_budget, 40);
  o.movable = "all";
  EXPECT_EQ(Must(ParseSimOptions(o)).movable.kind, MovableSelection::Kind::kAll);
  o.movable = "25";
  s = Must(ParseSimOptions(o));
  EXPECT_EQ(s.movable.kind, MovableSelection::Kind::kPercent);
  EXPECT_EQ(s.movable.pct, 25);
  EXPECT_EQ(s.time_scale, 1);
  o.time_scale = "1000";
  EXPECT_EQ(Must(ParseSimOptions(o)).time_scale, 1000);
  SimOptions g;
  g.generate = "pods=10,movable=30";
  EXPECT_EQ(Must(ParseSimOptions(g)).generator->pct_movable, 30);
}

TEST(SimOptionsTest, GenerateMakesWhatTheFilesDoNot) {
  SimOptions o;
  o.generate = "nodes=10,pods=100,rate=2,duration=60,seed=7,mix=100/0/0/0";
  SimSettings both = Must(ParseSimOptions(o));
  ASSERT_TRUE(both.generator.has_value());
  EXPECT_TRUE(both.generate_cluster);
  EXPECT_TRUE(both.generate_workload);
  EXPECT_EQ(both.generator->nodes, 10);
  EXPECT_EQ(both.generator->pods, 100);
  EXPECT_DOUBLE_EQ(both.generator->arrivals_per_s, 2);
  EXPECT_EQ(both.generator->mean_duration_s, 60);
  EXPECT_EQ(both.generator->seed, 7u);
  EXPECT_EQ(both.generator->pct_single, 100);

  SimOptions cluster_only;
  cluster_only.generate = "nodes=10";
  cluster_only.workload = "jobs.csv";
  SimSettings c = Must(ParseSimOptions(cluster_only));
  EXPECT_TRUE(c.generate_cluster);
  EXPECT_FALSE(c.generate_workload);

  SimOptions workload_only;
  workload_only.generate = "pods=10";
  workload_only.cluster = "nodes.csv";
  SimSettings w = Must(ParseSimOptions(workload_only));
  EXPECT_FALSE(w.generate_cluster);
  EXPECT_TRUE(w.generate_workload);
}

TEST(SimOptionsTest, SeedRangesReachTheTopOfUint64) {
  auto seeds = Must(ParseSeeds("18446744073709551614-18446744073709551615"));
  EXPECT_EQ(seeds, (std::vector<uint64_t>{UINT64_MAX - 1, UINT64_MAX}));
}

}  // namespace
}  // namespace gantry
