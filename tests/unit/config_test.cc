#include "engine/config.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "engine/plugins/plugins.h"
#include "engine/registry.h"
#include "tests/unit/test_util.h"
#include "yaml/scheduler_config_yaml.h"

namespace gantry {
namespace {

Status Parse(const std::string& yaml, SchedulerConfig* out) {
  return ParseSchedulerConfig(YAML::Load(yaml), "sched.yaml", out);
}

std::vector<std::string> PluginNames(const SchedulerConfig& c) {
  std::vector<std::string> names;
  for (const PluginConfig& p : c.plugins) names.push_back(p.name);
  return names;
}

const std::vector<std::string> kDefaultActions = {"enqueue", "allocate", "backfill"};
const std::vector<std::string> kDefaultPlugins = {"priority",
                                                  "gang",
                                                  "drf",
                                                  "proportion",
                                                  "disruptionbudget",
                                                  "predicates",
                                                  "nodeports",
                                                  "nodevolumelimits",
                                                  "numa",
                                                  "interpodaffinity",
                                                  "podtopologyspread",
                                                  "binpack",
                                                  "nodeaffinity",
                                                  "tainttoleration",
                                                  "datalocality"};

TEST(SchedulerConfigTest, DefaultIsValid) {
  SchedulerConfig c = SchedulerConfig::Default();
  EXPECT_EQ(c.actions, kDefaultActions);
  EXPECT_EQ(PluginNames(c), kDefaultPlugins);
  // kube-scheduler's default profile: TaintToleration 3, NodeAffinity, InterPodAffinity
  // and PodTopologySpread 2, NodeResourcesFit (binpack here) 1.
  for (const PluginConfig& p : c.plugins) {
    std::map<std::string, std::string> want;
    if (p.name == "nodeaffinity" || p.name == "interpodaffinity" || p.name == "podtopologyspread") {
      want = {{"weight", "2"}};
    }
    if (p.name == "tainttoleration") want = {{"weight", "3"}};
    for (const auto& [key, value] : p.arguments) EXPECT_TRUE(value.is_scalar()) << p.name;
    EXPECT_EQ(ArgumentTexts(p), want) << p.name;
  }
  EXPECT_EQ(c.nodes_to_score, 100);
  EXPECT_TRUE(ValidateSchedulerConfig(c).ok());
}

TEST(SchedulerConfigTest, KnownNames) {
  EXPECT_EQ(JoinNames(KnownActions()),
            "enqueue, allocate, backfill, preempt, reclaim, reserve, defragment");
  // The core plugins come first, in table order; more may follow.
  const std::vector<std::string_view> core = {"gang",       "priority", "drf",   "proportion",
                                              "predicates", "binpack",  "spread"};
  ASSERT_GE(KnownPlugins().size(), core.size());
  EXPECT_EQ(
      std::vector<std::string_view>(KnownPlugins().begin(), KnownPlugins().begin() + core.size()),
      core);
  EXPECT_EQ(JoinNames({"a", "b"}), "a, b");
  EXPECT_EQ(JoinNames({}), "");
}

TEST(SchedulerConfigTest, EmptyDocumentsGiveTheDefaults) {
  for (const char* yaml : {"", "~", "null", "{}"}) {
    SchedulerConfig c;
    c.nodes_to_score = 7;
    Status st = Parse(yaml, &c);
    ASSERT_TRUE(st.ok()) << "'" << yaml << "': " << st.message();
    EXPECT_EQ(c.actions, kDefaultActions) << yaml;
    EXPECT_EQ(PluginNames(c), kDefaultPlugins) << yaml;
    EXPECT_EQ(c.nodes_to_score, 100) << yaml;
  }
}

TEST(SchedulerConfigTest, MissingKeysKeepTheirDefaults) {
  SchedulerConfig c;
  ASSERT_TRUE(Parse("nodesToScore: 0", &c).ok());
  EXPECT_EQ(c.nodes_to_score, 0);
  EXPECT_EQ(c.actions, kDefaultActions);
  EXPECT_EQ(PluginNames(c), kDefaultPlugins);

  ASSERT_TRUE(Parse("actions: [allocate]", &c).ok());
  EXPECT_EQ(c.actions, (std::vector<std::string>{"allocate"}));
  EXPECT_EQ(PluginNames(c), kDefaultPlugins);
  EXPECT_EQ(c.nodes_to_score, 100);

  ASSERT_TRUE(Parse("actions: []", &c).ok());
  EXPECT_TRUE(c.actions.empty());
}

TEST(SchedulerConfigTest, FullConfigWithArguments) {
  const char* yaml = R"(
actions: [enqueue, allocate]
plugins:
  - gang
  - predicates
  - {name: binpack, arguments: {weight: 2, nvidia.com/gpu: 4, cpu: 0}}
  - name: proportion
nodesToScore: 50
)";
  SchedulerConfig c;
  Status st = Parse(yaml, &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.actions, (std::vector<std::string>{"enqueue", "allocate"}));
  EXPECT_EQ(PluginNames(c),
            (std::vector<std::string>{"gang", "predicates", "binpack", "proportion"}));
  EXPECT_TRUE(c.plugins[0].arguments.empty());
  EXPECT_EQ(
      ArgumentTexts(c.plugins[2]),
      (std::map<std::string, std::string>{{"weight", "2"}, {"nvidia.com/gpu", "4"}, {"cpu", "0"}}));
  EXPECT_TRUE(c.plugins[3].arguments.empty());
  EXPECT_EQ(c.nodes_to_score, 50);
}

TEST(SchedulerConfigTest, UnknownActionListsKnownNamesWithItsLine) {
  const char* yaml =
      "nodesToScore: 5\n"
      "actions:\n"
      "  - enqueue\n"
      "  - evict\n";
  SchedulerConfig c;
  Status st = Parse(yaml, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(
      st.message(),
      "sched.yaml:4:5: config.actions[1]: unknown action \"evict\" (known: enqueue, allocate, "
      "backfill, preempt, reclaim, reserve, defragment)");
}

TEST(SchedulerConfigTest, UnknownPluginListsKnownNamesWithItsLine) {
  const char* yaml =
      "plugins:\n"
      "  - gang\n"
      "  - predicates\n"
      "  - topology\n";
  SchedulerConfig c;
  Status st = Parse(yaml, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:4:5: config.plugins[2]"));
  EXPECT_TRUE(Contains(st.message(), "unknown plugin \"topology\""));
  EXPECT_TRUE(Contains(st.message(), "(known: " + JoinNames(KnownPlugins()) + ")"));
  EXPECT_TRUE(Contains(st.message(),
                       "(known: gang, priority, drf, proportion, predicates, binpack, spread"));

  // The same in the mapping form.
  st = Parse("plugins:\n  - predicates\n  - {name: bin-pack}\n", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:3:5: config.plugins[1]"));
  EXPECT_TRUE(Contains(st.message(), "unknown plugin \"bin-pack\""));
}

struct BadArgCase {
  const char* yaml;
  const char* message;  // a part of the expected error
};

class PluginArgumentErrorTest : public ::testing::TestWithParam<BadArgCase> {};

TEST_P(PluginArgumentErrorTest, Rejected) {
  SchedulerConfig c;
  Status st = Parse(GetParam().yaml, &c);
  ASSERT_FALSE(st.ok()) << GetParam().yaml;
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(st.message(), GetParam().message));
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PluginArgumentErrorTest,
    ::testing::Values(
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: {weight: -1}}]",
                   "plugin binpack: argument weight must be a non-negative integer, got \"-1\""},
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: {weight: heavy}}]",
                   "argument weight must be a non-negative integer, got \"heavy\""},
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: {weight: 1.5}}]",
                   "argument weight must be a non-negative integer, got \"1.5\""},
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: {cpu: 2x}}]",
                   "argument cpu must be a non-negative integer, got \"2x\""},
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: {colour: 3}}]",
                   "plugin binpack: unknown argument \"colour\""},
        BadArgCase{"plugins: [predicates, {name: spread, arguments: {nvidia.com/gpu: -2}}]",
                   "plugin spread: argument nvidia.com/gpu must be a non-negative integer"},
        BadArgCase{"plugins: [predicates, {name: gang, arguments: {minMember: 2}}]",
                   "plugin gang: unknown argument \"minMember\" (it takes none)"},
        BadArgCase{"plugins: [predicates, {name: interpodaffinity, arguments: "
                   "{hardPodAffinityWeight: 101}}]",
                   "plugin interpodaffinity: hardPodAffinityWeight must be in 0..100 (as "
                   "kube-scheduler's), got 101"},
        BadArgCase{"plugins: [predicates, {name: interpodaffinity, arguments: {hard: 1}}]",
                   "plugin interpodaffinity: unknown argument \"hard\""},
        BadArgCase{"plugins: [{name: predicates, arguments: {strict: 1}}]",
                   "plugin predicates: unknown argument \"strict\" (it takes none)"},
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: [weight]}]",
                   "config.plugins[1].arguments: expected a mapping"},
        BadArgCase{"plugins: [predicates, {name: binpack, arguments: {cpu: [1, 2]}}]",
                   "plugin binpack: argument cpu must be a non-negative integer, got \"[1, 2]\""},
        BadArgCase{
            "plugins: [predicates, {name: podtopologyspread, arguments: {defaultConstraints: "
            "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}}]",
            "defaultConstraints[0].maxSkew"},
        BadArgCase{"plugins: [predicates, {name: binpack, args: {cpu: 1}}]",
                   "config.plugins[1].args: unknown field (known: name, arguments)"},
        BadArgCase{"plugins: [predicates, [binpack]]",
                   "config.plugins[1]: expected a name or {name, arguments}"}),
    [](const ::testing::TestParamInfo<BadArgCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(SchedulerConfigTest, BinpackAcceptsResourceNameArguments) {
  SchedulerConfig c;
  const char* yaml =
      "plugins: [predicates, {name: binpack, arguments: {weight: 3, cpu: 1, memory: 0, pods: 1, "
      "ephemeral-storage: 1, hugepages-2Mi: 1, example.com/fpga: 5}}]";
  Status st = Parse(yaml, &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.plugins[1].arguments.size(), 7u);
  EXPECT_EQ(c.plugins[1].arguments.at("example.com/fpga").scalar(), "5");
}

// kube-scheduler's PodTopologySpreadArgs write defaultConstraints as a YAML list; the
// plugin takes it so, block or flow, as well as quoted.
TEST(SchedulerConfigTest, DefaultConstraintsMayBeAYamlList) {
  const char* yaml =
      "plugins:\n"
      "- predicates\n"
      "- name: podtopologyspread\n"
      "  arguments:\n"
      "    defaultingType: List\n"
      "    defaultConstraints:\n"
      "    - maxSkew: 2\n"
      "      topologyKey: topology.kubernetes.io/zone\n"
      "      whenUnsatisfiable: ScheduleAnyway\n";
  SchedulerConfig c;
  Status st = Parse(yaml, &c);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(c.plugins.size(), 2u);
  EXPECT_TRUE(PodTopologySpreadHasDefaults(c.plugins[1]));
  const std::string text = c.plugins[1].arguments.at("defaultConstraints").Text();
  EXPECT_TRUE(Contains(text, "maxSkew: 2")) << text;
  EXPECT_TRUE(Contains(text, "topology.kubernetes.io/zone")) << text;

  SchedulerConfig quoted;
  st = Parse(
      "plugins: [predicates, {name: podtopologyspread, arguments: {defaultConstraints: "
      "'[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]'}}]",
      &quoted);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(PodTopologySpreadHasDefaults(quoted.plugins[1]));
}

// Plugin arguments are parsed once, as the configuration is read, into a tree that knows
// where each value was written: a plugin's error about a value in a list names the
// configuration file's line and column of that value. (Before, the list was turned back
// into text and parsed again, and the message named a place in that text.)
TEST(SchedulerConfigTest, ArgumentErrorsNameTheConfigurationsLineAndColumn) {
  const char* yaml =
      "plugins:\n"
      "- predicates\n"
      "- name: podtopologyspread\n"
      "  arguments:\n"
      "    defaultConstraints:\n"
      "    - maxSkew: 1\n"
      "      topologyKey: zone\n"
      "      whenUnsatisfiable: DoNotSchedule\n"
      "    - maxSkew: 0\n"
      "      topologyKey: rack\n"
      "      whenUnsatisfiable: DoNotSchedule\n";
  SchedulerConfig c;
  Status st = Parse(yaml, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:9:16: defaultConstraints[1].maxSkew: must be "
                                     "between 1 and"));
  // A key the plugin does not know is named where the key is.
  st = Parse(
      "plugins:\n"
      "- predicates\n"
      "- name: podtopologyspread\n"
      "  arguments:\n"
      "    defaultConstraints: [{maxSkew: 1, colour: red}]\n",
      &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:5:39: defaultConstraints[0].colour: unknown"));
}

TEST(SchedulerConfigTest, DuplicatePluginIsAnError) {
  SchedulerConfig c;
  Status st = Parse("plugins: [predicates, binpack, gang, binpack]", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "plugin binpack is listed twice"));
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:1"));

  // Validate alone says the same.
  SchedulerConfig direct = SchedulerConfig::Default();
  direct.plugins.push_back(PluginConfig{"gang", {}});
  st = ValidateSchedulerConfig(direct);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "plugin gang is listed twice");
}

TEST(SchedulerConfigTest, PredicatesAreRequired) {
  SchedulerConfig c;
  Status st = Parse("plugins: [gang, priority, binpack]", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "the predicates plugin is required"));
  st = Parse("plugins: []", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "the predicates plugin is required"));
  // Predicates alone are enough.
  st = Parse("plugins: [predicates]", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(PluginNames(c), (std::vector<std::string>{"predicates"}));
}

TEST(SchedulerConfigTest, NodesToScore) {
  struct {
    const char* yaml;
    bool ok;
    int32_t value;
    const char* message;
  } cases[] = {
      {"nodesToScore: 0", true, 0, ""},
      {"nodesToScore: 1", true, 1, ""},
      {"nodesToScore: +7", true, 7, ""},
      {"nodesToScore: 2147483647", true, 2147483647, ""},
      {"nodesToScore: -1", false, 0, "must be between 0 and 2147483647, got -1"},
      {"nodesToScore: 2147483648", false, 0, "must be between 0 and 2147483647, got 2147483648"},
      {"nodesToScore: 99999999999999999999", false, 0, "must be between 0 and 2147483647"},
      {"nodesToScore: many", false, 0, "expected an integer, got \"many\""},
      {"nodesToScore: 2.5", false, 0, "expected an integer, got \"2.5\""},
      {"nodesToScore: 0x10", false, 0, "expected an integer, got \"0x10\""},
      // yaml-cpp's as<int64_t> took these; the schema wants a plain integer.
      {"nodesToScore: '5'", false, 0, "expected an integer, got the string \"5\""},
      {"nodesToScore: \" 5\"", false, 0, "expected an integer, got the string \" 5\""},
      {"nodesToScore: [1]", false, 0, "expected an integer"},
      {"nodesToScore: {n: 1}", false, 0, "expected an integer"},
      {"nodesToScore:", false, 0, "expected an integer"},
  };
  for (const auto& c : cases) {
    SchedulerConfig config;
    Status st = Parse(c.yaml, &config);
    ASSERT_EQ(st.ok(), c.ok) << c.yaml << ": " << st.message();
    if (c.ok) {
      EXPECT_EQ(config.nodes_to_score, c.value) << c.yaml;
    } else {
      EXPECT_TRUE(Contains(st.message(), "sched.yaml:1:")) << c.yaml;
      EXPECT_TRUE(Contains(st.message(), std::string("config.nodesToScore: ") + c.message))
          << c.yaml;
    }
  }
  SchedulerConfig negative = SchedulerConfig::Default();
  negative.nodes_to_score = -1;
  Status st = ValidateSchedulerConfig(negative);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "nodesToScore must not be negative"));
}

TEST(SchedulerConfigTest, PreemptionGraceAndStarvationSeconds) {
  SchedulerConfig config;
  ASSERT_TRUE(Parse("preemptionGraceSeconds: 300\nstarvationSeconds: 3600", &config).ok());
  EXPECT_EQ(config.preemption_grace_s, 300);
  EXPECT_EQ(config.starvation_s, 3600);
  EXPECT_EQ(SchedulerConfig::Default().preemption_grace_s, 0);
  EXPECT_EQ(SchedulerConfig::Default().starvation_s, 0);
  Status st = Parse("starvationSeconds: -1", &config);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "sched.yaml:1:")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "config.starvationSeconds: must be between 0 and"))
      << st.message();
  st = Parse("preemptionGraceSeconds: 99999999999999", &config);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "config.preemptionGraceSeconds: must be between 0 and"))
      << st.message();
}

TEST(SchedulerConfigTest, DefragmentEvictionsPerHour) {
  SchedulerConfig config;
  ASSERT_TRUE(Parse("defragmentEvictionsPerHour: 25", &config).ok());
  EXPECT_EQ(config.defragment_evictions_per_hour, 25);
  EXPECT_EQ(SchedulerConfig::Default().defragment_evictions_per_hour, 10);
  ASSERT_TRUE(Parse("defragmentEvictionsPerHour: 0", &config).ok());
  EXPECT_EQ(config.defragment_evictions_per_hour, 0);
  for (const char* bad : {"defragmentEvictionsPerHour: -1", "defragmentEvictionsPerHour: 10001",
                          "defragmentEvictionsPerHour: ten"}) {
    Status st = Parse(bad, &config);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_TRUE(Contains(st.message(), "sched.yaml:1:")) << st.message();
    EXPECT_TRUE(Contains(st.message(), "config.defragmentEvictionsPerHour: ")) << st.message();
  }
  SchedulerConfig negative = SchedulerConfig::Default();
  negative.defragment_evictions_per_hour = -3;
  Status st = ValidateSchedulerConfig(negative);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "defragmentEvictionsPerHour -3 is out of range [0, 10000]"));
}

TEST(SchedulerConfigTest, ShapeErrors) {
  struct {
    const char* yaml;
    const char* message;
  } cases[] = {
      {"[enqueue, allocate]", "sched.yaml:1:1: config: expected a mapping"},
      {"actions: allocate", "config.actions: expected a list"},
      {"actions: [allocate, [backfill]]", "config.actions[1]: expected a name"},
      {"plugins: predicates", "config.plugins: expected a list"},
      {"queues: []",
       "sched.yaml:1:1: config.queues: unknown field (known: actions, plugins, nodesToScore"},
      {"actions: [allocate]\nnodestoscore: 3",
       "sched.yaml:2:1: config.nodestoscore: unknown field"},
  };
  for (const auto& c : cases) {
    SchedulerConfig config;
    Status st = Parse(c.yaml, &config);
    ASSERT_FALSE(st.ok()) << c.yaml;
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.yaml;
    EXPECT_TRUE(Contains(st.message(), c.message)) << c.yaml;
  }
}

TEST(RegistryTest, MakesEveryKnownName) {
  for (std::string_view name : KnownActions()) {
    auto action = MakeAction(name);
    ASSERT_TRUE(action.ok()) << name;
    EXPECT_EQ((*action)->name(), name);
  }
  for (std::string_view name : KnownPlugins()) {
    auto plugin = MakePlugin(PluginConfig{std::string(name), {}});
    ASSERT_TRUE(plugin.ok()) << name;
    EXPECT_EQ((*plugin)->name(), name);
  }
  EXPECT_FALSE(MakeAction("Allocate").ok());
  EXPECT_FALSE(MakePlugin(PluginConfig{"", {}}).ok());
}

}  // namespace
}  // namespace gantry
