// The daemon's configuration file (deploy/gantry-config.yaml) and Go-style durations.
#include "daemon/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "daemon/scheduler.h"
#include "k8s/yaml_json.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

std::vector<std::string> PluginNames(const SchedulerConfig& c) {
  std::vector<std::string> names;
  for (const PluginConfig& p : c.plugins) names.push_back(p.name);
  return names;
}

// The error a configuration is rejected with; fails the test when it is accepted.
std::string Error(const std::string& yaml) {
  DaemonConfig c;
  Status st = ParseDaemonConfig(yaml, "cfg.yaml", &c);
  EXPECT_FALSE(st.ok()) << yaml;
  return st.message();
}

DaemonConfig Parse(const std::string& yaml) {
  DaemonConfig c;
  Status st = ParseDaemonConfig(yaml, "cfg.yaml", &c);
  EXPECT_TRUE(st.ok()) << st.message();
  return c;
}

// ---------------------------------------------------------------------------------------
// Durations

TEST(ParseDurationSeconds, GoDurations) {
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("1s")), 1.0);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("500ms")), 0.5);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("2m")), 120.0);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("1h30m")), 5400.0);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("1.5s")), 1.5);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("2h45m30s")), 2 * 3600 + 45 * 60 + 30.0);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("1m30.5s")), 90.5);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds(".5s")), 0.5);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("0s")), 0.0);
}

TEST(ParseDurationSeconds, SmallUnits) {
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("300ms")), 0.3);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("250us")), 250e-6);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("10ns")), 10e-9);
  // Go also accepts the micro sign (U+00B5) and the Greek mu (U+03BC).
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("7\u00b5s")), 7e-6);
  EXPECT_DOUBLE_EQ(Must(ParseDurationSeconds("7\u03bcs")), 7e-6);
}

TEST(ParseDurationSeconds, BadUnit) {
  auto r = ParseDurationSeconds("5d");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "\"5d\""));
  EXPECT_TRUE(Contains(r.status().message(), "\"d\""));
  EXPECT_TRUE(Contains(r.status().message(), "ns, us, ms, s, m, h"));
  EXPECT_FALSE(ParseDurationSeconds("10sec").ok());
  EXPECT_FALSE(ParseDurationSeconds("1S").ok());
}

TEST(ParseDurationSeconds, MissingUnitOrNumber) {
  // Go: "missing unit in duration" for a bare number.
  EXPECT_FALSE(ParseDurationSeconds("5").ok());
  EXPECT_FALSE(ParseDurationSeconds("1h30").ok());
  EXPECT_FALSE(ParseDurationSeconds("s").ok());
  EXPECT_FALSE(ParseDurationSeconds("-1s").ok());
  EXPECT_FALSE(ParseDurationSeconds(" 1s").ok());
  EXPECT_FALSE(ParseDurationSeconds("1s ").ok());
}

TEST(ParseDurationSeconds, Empty) {
  auto r = ParseDurationSeconds("");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "empty"));
}

TEST(ParseDurationSeconds, MalformedNumbersAreErrorsNotCrashes) {
  // A lone dot or two dots are not numbers (std::stod throws on ".", and reads "1.2" of
  // "1.2.3" quietly).
  const std::vector<std::string> bad_ones = {".s", "1..5s", "1.2.3s", "..s",
                                             std::string(400, '9') + "s"};
  for (const std::string& bad : bad_ones) {
    EXPECT_FALSE(ParseDurationSeconds(bad).ok()) << bad;
  }
}

// ---------------------------------------------------------------------------------------
// The configuration file

TEST(ParseDaemonConfig, EmptyFileGivesTheDefaults) {
  for (const char* text : {"", "# nothing here\n", "{}", "~"}) {
    DaemonConfig c = Parse(text);
    EXPECT_EQ(c.scheduler_name, "gantry") << text;
    EXPECT_DOUBLE_EQ(c.schedule_period_s, 1.0);
    EXPECT_EQ(c.bind_workers, 16);
    EXPECT_EQ(c.listen_address, "0.0.0.0:10259");
    EXPECT_EQ(c.page_address, "127.0.0.1:10260");
    EXPECT_TRUE(c.leader_election.enabled);
    EXPECT_EQ(c.leader_election.namespace_, "gantry-system");
    EXPECT_EQ(c.leader_election.name, "gantry");
    EXPECT_DOUBLE_EQ(c.leader_election.lease_duration_s, 15.0);
    EXPECT_DOUBLE_EQ(c.leader_election.renew_deadline_s, 10.0);
    EXPECT_DOUBLE_EQ(c.leader_election.retry_period_s, 2.0);
    EXPECT_EQ(c.engine.actions, (std::vector<std::string>{"enqueue", "allocate", "backfill"}));
    EXPECT_EQ(PluginNames(c.engine),
              (std::vector<std::string>{"priority", "gang", "drf", "proportion", "disruptionbudget",
                                        "predicates", "nodeports", "nodevolumelimits", "numa",
                                        "interpodaffinity", "podtopologyspread", "binpack",
                                        "nodeaffinity", "tainttoleration", "datalocality"}));
    EXPECT_EQ(c.engine.nodes_to_score, 100);
  }
}

TEST(ParseDaemonConfig, EveryField) {
  DaemonConfig c = Parse(R"(schedulerName: ai-scheduler
schedulePeriod: 250ms
bindWorkers: 64
listenAddress: 127.0.0.1:9090
pageAddress: "[::1]:8080"
leaderElection:
  enabled: false
  namespace: kube-system
  name: ai-scheduler-lock
  leaseDuration: 1m
  renewDeadline: 45s
  retryPeriod: 5s
engine:
  actions: [allocate, backfill]
  plugins: [gang, predicates, {name: binpack, arguments: {weight: 2}}]
  nodesToScore: 0
)");
  EXPECT_EQ(c.scheduler_name, "ai-scheduler");
  EXPECT_DOUBLE_EQ(c.schedule_period_s, 0.25);
  EXPECT_EQ(c.bind_workers, 64);
  EXPECT_EQ(c.listen_address, "127.0.0.1:9090");
  EXPECT_EQ(c.page_address, "[::1]:8080");
  EXPECT_FALSE(c.leader_election.enabled);
  EXPECT_EQ(c.leader_election.namespace_, "kube-system");
  EXPECT_EQ(c.leader_election.name, "ai-scheduler-lock");
  EXPECT_DOUBLE_EQ(c.leader_election.lease_duration_s, 60.0);
  EXPECT_DOUBLE_EQ(c.leader_election.renew_deadline_s, 45.0);
  EXPECT_DOUBLE_EQ(c.leader_election.retry_period_s, 5.0);
  EXPECT_EQ(c.engine.actions, (std::vector<std::string>{"allocate", "backfill"}));
  EXPECT_EQ(PluginNames(c.engine), (std::vector<std::string>{"gang", "predicates", "binpack"}));
  ASSERT_EQ(c.engine.plugins.size(), 3u);
  EXPECT_EQ(c.engine.plugins[2].arguments.at("weight").scalar(), "2");
  EXPECT_EQ(c.engine.nodes_to_score, 0);
}

TEST(ParseDaemonConfig, PartialFilesKeepTheOtherDefaults) {
  DaemonConfig c = Parse("bindWorkers: 4\nleaderElection:\n  name: other\n");
  EXPECT_EQ(c.bind_workers, 4);
  EXPECT_EQ(c.leader_election.name, "other");
  EXPECT_EQ(c.leader_election.namespace_, "gantry-system");
  EXPECT_DOUBLE_EQ(c.leader_election.lease_duration_s, 15.0);
  EXPECT_EQ(c.scheduler_name, "gantry");
  EXPECT_EQ(c.engine.nodes_to_score, 100);
}

TEST(ParseDaemonConfig, ParsingResetsTheOutput) {
  DaemonConfig c;
  c.bind_workers = 3;
  c.scheduler_name = "stale";
  ASSERT_TRUE(ParseDaemonConfig("schedulePeriod: 2s\n", "cfg.yaml", &c).ok());
  EXPECT_EQ(c.bind_workers, 16);
  EXPECT_EQ(c.scheduler_name, "gantry");
  EXPECT_DOUBLE_EQ(c.schedule_period_s, 2.0);
}

// kube-scheduler's VolumeBinding bindTimeoutSeconds: 600 unless configured.
TEST(ParseDaemonConfig, VolumeBindTimeout) {
  DaemonConfig c;
  ASSERT_TRUE(ParseDaemonConfig("schedulerName: gantry\n", "cfg.yaml", &c).ok());
  EXPECT_DOUBLE_EQ(c.volume_bind_timeout_s, 600.0);
  ASSERT_TRUE(ParseDaemonConfig("volumeBindTimeout: 90s\n", "cfg.yaml", &c).ok());
  EXPECT_DOUBLE_EQ(c.volume_bind_timeout_s, 90.0);
  EXPECT_TRUE(Contains(Error("volumeBindTimeout: soon\n"), "cfg.yaml:1:"))
      << Error("volumeBindTimeout: soon\n");
}

// DynamicResources' bindingTimeout: 600 s unless configured.
TEST(ParseDaemonConfig, DeviceBindingTimeout) {
  DaemonConfig c;
  ASSERT_TRUE(ParseDaemonConfig("schedulerName: gantry\n", "cfg.yaml", &c).ok());
  EXPECT_DOUBLE_EQ(c.device_binding_timeout_s, 600.0);
  ASSERT_TRUE(ParseDaemonConfig("deviceBindingTimeout: 2m\n", "cfg.yaml", &c).ok());
  EXPECT_DOUBLE_EQ(c.device_binding_timeout_s, 120.0);
  EXPECT_TRUE(Contains(Error("deviceBindingTimeout: later\n"), "cfg.yaml:1:"))
      << Error("deviceBindingTimeout: later\n");
}

TEST(ParseDaemonConfig, UnknownFieldNamesFileLineAndKnownFields) {
  std::string e = Error("schedulerName: gantry\nbindWorker: 4\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:1: bindWorker: unknown field")) << e;
  EXPECT_TRUE(Contains(e,
                       "schedulerName, schedulePeriod, bindWorkers, volumeBindTimeout, "
                       "listenAddress, pageAddress, leaderElection, autoscaler, topologyKeys, "
                       "workloadProfileHalfLife, engine"))
      << e;
}

TEST(ParseDaemonConfig, UnknownLeaderElectionField) {
  std::string e = Error("leaderElection:\n  enabled: true\n  leaseDuraton: 20s\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:3: leaderElection.leaseDuraton: unknown field")) << e;
  EXPECT_TRUE(Contains(e, "enabled, namespace, name, leaseDuration, renewDeadline, retryPeriod"))
      << e;
}

TEST(ParseDaemonConfig, RenewDeadlineMustBeShorterThanLeaseDuration) {
  // The error points at renewDeadline's line.
  std::string e = Error("leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 12s\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:18: leaderElection.renewDeadline")) << e;
  EXPECT_TRUE(Contains(e, "shorter than leaseDuration")) << e;
  // Equal is not shorter.
  e = Error("leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n");
  EXPECT_TRUE(Contains(e, "leaderElection.renewDeadline")) << e;
  // A lease shorter than the default renewDeadline (10s) needs a renewDeadline too; the
  // error points at the leaseDuration that was given.
  e = Error("leaderElection:\n  enabled: true\n  leaseDuration: 8s\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:18: leaderElection.renewDeadline")) << e;
  EXPECT_EQ(Parse("leaderElection:\n  leaseDuration: 8s\n  renewDeadline: 6s\n")
                .leader_election.renew_deadline_s,
            6.0);
}

TEST(ParseDaemonConfig, RetryPeriodMustBeShorterThanRenewDeadline) {
  std::string e = Error("leaderElection:\n  renewDeadline: 2s\n  retryPeriod: 2s\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:16: leaderElection.retryPeriod")) << e;
  EXPECT_TRUE(Contains(e, "shorter than renewDeadline")) << e;
}

TEST(ParseDaemonConfig, BadLeaderElectionValues) {
  std::string e = Error("leaderElection:\n  enabled: maybe\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:12: leaderElection.enabled")) << e;
  EXPECT_TRUE(Contains(e, "\"maybe\"")) << e;
  e = Error("leaderElection:\n  retryPeriod: 0s\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2:16: leaderElection.retryPeriod: must be positive")) << e;
  e = Error("leaderElection: true\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:1:17: leaderElection: expected a mapping")) << e;
}

TEST(ParseDaemonConfig, AutoscalerProtectsGangsByDefault) {
  const DaemonConfig defaults = Parse("");
  EXPECT_TRUE(defaults.autoscaler.protect_gangs);
  using Annotations = std::map<std::string, std::string>;
  EXPECT_EQ(GangBindingAnnotations(defaults.autoscaler),
            (Annotations{{"karpenter.sh/do-not-disrupt", "true"},
                         {"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}}));
  // For a while only: Karpenter's duration form (Cluster Autoscaler's has none).
  const DaemonConfig day = Parse("autoscaler:\n  protectGangsFor: 24h\n");
  EXPECT_EQ(GangBindingAnnotations(day.autoscaler),
            (Annotations{{"karpenter.sh/do-not-disrupt", "86400s"},
                         {"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}}));
  const DaemonConfig off = Parse("autoscaler:\n  protectGangs: false\n");
  EXPECT_TRUE(GangBindingAnnotations(off.autoscaler).empty());
}

TEST(ParseDaemonConfig, BadAutoscalerFields) {
  EXPECT_EQ(Error("autoscaler:\n  protectGangsFor: 100ms\n"),
            "cfg.yaml:2:20: autoscaler.protectGangsFor: must be 0 (as long as the gang runs) or "
            "1s to 720h, got \"100ms\"");
  EXPECT_EQ(Error("autoscaler:\n  protectGangsFor: 721h\n"),
            "cfg.yaml:2:20: autoscaler.protectGangsFor: must be 0 (as long as the gang runs) or "
            "1s to 720h, got \"721h\"");
  EXPECT_EQ(Error("autoscaler:\n  protectGangs: maybe\n"),
            Error("leaderElection:\n  enabled: maybe\n")
                .replace(0, std::string("cfg.yaml:2:12: leaderElection.enabled").size(),
                         "cfg.yaml:2:17: autoscaler.protectGangs"));
  EXPECT_EQ(Error("autoscaler:\n  spot: yes\n"),
            "cfg.yaml:2:3: autoscaler.spot: unknown field (protectGangs, protectGangsFor)");
  EXPECT_EQ(Error("autoscaler: on\n"), "cfg.yaml:1:13: autoscaler: expected a mapping");
}

TEST(ParseDaemonConfig, BindWorkersRange) {
  EXPECT_EQ(Parse("bindWorkers: 1\n").bind_workers, 1);
  EXPECT_EQ(Parse("bindWorkers: 1024\n").bind_workers, 1024);
  for (const char* bad : {"0", "1025", "-3", "99999999999999999999"}) {
    std::string e = Error(std::string("\nbindWorkers: ") + bad + "\n");
    EXPECT_TRUE(Contains(e, "cfg.yaml:2:14: bindWorkers: must be between 1 and 1024, got ")) << e;
  }
  // strtol skipped leading spaces and took the quoted " 4"; the schema wants an integer.
  for (const char* bad : {"many", "2.5", "''", "' 4'", "\"4\""}) {
    std::string e = Error(std::string("\nbindWorkers: ") + bad + "\n");
    EXPECT_TRUE(Contains(e, "cfg.yaml:2:14: bindWorkers: expected an integer, got ")) << e;
  }
}

TEST(ParseDaemonConfig, BadScalars) {
  std::string e = Error("schedulePeriod: 1 second\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:1:17: schedulePeriod")) << e;
  e = Error("schedulePeriod: 0s\n");
  EXPECT_TRUE(Contains(e, "schedulePeriod: must be positive")) << e;
  e = Error("schedulerName: ''\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:1:16: schedulerName: must not be empty")) << e;
  e = Error("schedulerName: [a, b]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:1:16: schedulerName: expected a value")) << e;
  e = Error("listenAddress: localhost\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:1:16: listenAddress: expected host:port")) << e;
  e = Error("- a\n- b\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:1:1: configuration: expected a mapping")) << e;
}

TEST(ParseDaemonConfig, PageAddressIsAListenAddressOrEmpty) {
  DaemonConfig c = Parse("pageAddress: ''\n");
  EXPECT_EQ(c.page_address, "");  // the page is off
  c = Parse("pageAddress: 0.0.0.0:8080\n");
  EXPECT_EQ(c.page_address, "0.0.0.0:8080");
  std::string e = Error("schedulerName: gantry\npageAddress: localhost\n");
  EXPECT_EQ(e, "cfg.yaml:2:14: pageAddress: expected host:port, got \"localhost\"");
  e = Error("pageAddress: 127.0.0.1:99999\n");
  EXPECT_EQ(e,
            "cfg.yaml:1:14: pageAddress: port must be a number from 0 to 65535, got "
            "\"127.0.0.1:99999\"");
  e = Error("pageAddress: [a]\n");
  EXPECT_EQ(e, "cfg.yaml:1:14: pageAddress: expected a value");
  // listenAddress is checked the same way now.
  e = Error("listenAddress: 127.0.0.1:http\n");
  EXPECT_EQ(e,
            "cfg.yaml:1:16: listenAddress: port must be a number from 0 to 65535, got "
            "\"127.0.0.1:http\"");
}

TEST(ParseDaemonConfig, BadPluginInEngineListsKnownNames) {
  std::string e = Error("schedulerName: gantry\nengine:\n  plugins: [gang, predicates, binpak]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3")) << e;
  EXPECT_TRUE(Contains(e, "unknown plugin \"binpak\"")) << e;
  EXPECT_TRUE(Contains(e, "gang, priority, drf, proportion, predicates, binpack")) << e;
}

TEST(ParseDaemonConfig, BadActionInEngine) {
  std::string e = Error("engine:\n  actions: [enqueue, shuffle]\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:2")) << e;
  EXPECT_TRUE(Contains(e, "unknown action \"shuffle\"")) << e;
  EXPECT_TRUE(Contains(e, "enqueue, allocate, backfill")) << e;
}

TEST(ParseDaemonConfig, DuplicateKeysAndSecondDocumentsAreErrors) {
  // yaml-cpp's lookups took the first of two keys; the loop here took the last.
  EXPECT_EQ(Error("bindWorkers: 4\nbindWorkers: 8\n"),
            "cfg.yaml:2:1: duplicate key \"bindWorkers\" (first at line 1)");
  EXPECT_EQ(Error("engine:\n  nodesToScore: 5\n  nodesToScore: 6\n"),
            "cfg.yaml:3:3: duplicate key \"nodesToScore\" (first at line 2)");
  EXPECT_TRUE(Contains(Error("bindWorkers: 4\n---\nbindWorkers: 8\n"),
                       "cfg.yaml:3:1: a second YAML document"));
}

TEST(ParseDaemonConfig, BooleansArePlain) {
  std::string e = Error("leaderElection:\n  enabled: \"false\"\n");
  EXPECT_TRUE(Contains(e,
                       "cfg.yaml:2:12: leaderElection.enabled: expected true or false, got the "
                       "string \"false\""))
      << e;
}

TEST(ParseDaemonConfig, DurationsAreBounded) {
  EXPECT_TRUE(Contains(Error("schedulePeriod: 25h\n"),
                       "cfg.yaml:1:17: schedulePeriod: must be at most 24h"));
  EXPECT_TRUE(Contains(Error("schedulePeriod: " + std::string(400, '9') + "h\n"), "too long"));
  EXPECT_DOUBLE_EQ(Parse("schedulePeriod: 24h\n").schedule_period_s, 86400.0);
}

TEST(ParseDaemonConfig, YamlSyntaxError) {
  std::string e = Error("schedulerName: gantry\nengine: {actions: [allocate}\n");
  EXPECT_EQ(e.rfind("cfg.yaml:2:", 0), 0u) << e;
}

// ---------------------------------------------------------------------------------------
// The shipped files

#ifndef GANTRY_SOURCE_DIR
#error "GANTRY_SOURCE_DIR must be defined (CMakeLists.txt)"
#endif

TEST(ShippedConfig, GantryConfigLoads) {
  DaemonConfig c;
  Status st = LoadDaemonConfig(std::string(GANTRY_SOURCE_DIR) + "/deploy/gantry-config.yaml", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.scheduler_name, "gantry");
  EXPECT_DOUBLE_EQ(c.schedule_period_s, 1.0);
  EXPECT_EQ(c.bind_workers, 16);
  EXPECT_EQ(c.listen_address, "0.0.0.0:10259");
  EXPECT_TRUE(c.leader_election.enabled);
  EXPECT_EQ(c.leader_election.namespace_, "gantry-system");
  EXPECT_EQ(c.leader_election.name, "gantry");  // the Lease rbac.yaml lets it write
  EXPECT_DOUBLE_EQ(c.leader_election.lease_duration_s, 15.0);
  EXPECT_DOUBLE_EQ(c.leader_election.renew_deadline_s, 10.0);
  EXPECT_DOUBLE_EQ(c.leader_election.retry_period_s, 2.0);
  EXPECT_EQ(c.engine.actions,
            (std::vector<std::string>{"enqueue", "allocate", "preempt", "backfill"}));
  EXPECT_EQ(PluginNames(c.engine),
            (std::vector<std::string>{"gang", "priority", "drf", "proportion", "disruptionbudget",
                                      "predicates", "nodeports", "nodevolumelimits", "numa",
                                      "interpodaffinity", "podtopologyspread", "binpack",
                                      "nodeaffinity", "tainttoleration", "datalocality"}));
  EXPECT_EQ(c.engine.nodes_to_score, 100);
}

TEST(ShippedConfig, ConfigMapMatchesThePlainFile) {
  // deploy/config.yaml says: "Same content as deploy/gantry-config.yaml; keep the two in step."
  auto docs = Must(k8s::LoadYamlDocuments(std::string(GANTRY_SOURCE_DIR) + "/deploy/config.yaml"));
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_EQ(docs[0].object["kind"], "ConfigMap");
  std::string text = docs[0].object["data"]["config.yaml"].get<std::string>();
  DaemonConfig from_map, from_file;
  ASSERT_TRUE(ParseDaemonConfig(text, "config.yaml", &from_map).ok());
  ASSERT_TRUE(
      LoadDaemonConfig(std::string(GANTRY_SOURCE_DIR) + "/deploy/gantry-config.yaml", &from_file)
          .ok());
  EXPECT_EQ(from_map.scheduler_name, from_file.scheduler_name);
  EXPECT_EQ(from_map.schedule_period_s, from_file.schedule_period_s);
  EXPECT_EQ(from_map.bind_workers, from_file.bind_workers);
  EXPECT_EQ(from_map.volume_bind_timeout_s, from_file.volume_bind_timeout_s);
  EXPECT_EQ(from_map.listen_address, from_file.listen_address);
  EXPECT_EQ(from_map.leader_election.enabled, from_file.leader_election.enabled);
  EXPECT_EQ(from_map.leader_election.namespace_, from_file.leader_election.namespace_);
  EXPECT_EQ(from_map.leader_election.name, from_file.leader_election.name);
  EXPECT_EQ(from_map.leader_election.lease_duration_s, from_file.leader_election.lease_duration_s);
  EXPECT_EQ(from_map.leader_election.renew_deadline_s, from_file.leader_election.renew_deadline_s);
  EXPECT_EQ(from_map.leader_election.retry_period_s, from_file.leader_election.retry_period_s);
  EXPECT_EQ(from_map.autoscaler.protect_gangs, from_file.autoscaler.protect_gangs);
  EXPECT_EQ(from_map.autoscaler.protect_gangs_for_s, from_file.autoscaler.protect_gangs_for_s);
  EXPECT_EQ(from_map.engine.actions, from_file.engine.actions);
  EXPECT_EQ(PluginNames(from_map.engine), PluginNames(from_file.engine));
  EXPECT_EQ(from_map.engine.nodes_to_score, from_file.engine.nodes_to_score);
  EXPECT_EQ(from_map.device_alignment_attributes, from_file.device_alignment_attributes);
}

TEST(ShippedConfig, MissingFile) {
  DaemonConfig c;
  Status st = LoadDaemonConfig("/nonexistent/gantry.yaml", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(st.message(), "/nonexistent/gantry.yaml"));
}

// Every collection the informers list and watch is one deploy/rbac.yaml's ClusterRole lets
// gantry list and watch: an informer without its rule fails only in a real cluster.
TEST(ShippedRbac, CoversEveryWatchedCollection) {
  auto docs = Must(k8s::LoadYamlDocuments(std::string(GANTRY_SOURCE_DIR) + "/deploy/rbac.yaml"));
  const nlohmann::json* role = nullptr;
  for (const auto& doc : docs) {
    if (doc.object.value("kind", "") == "ClusterRole") role = &doc.object;
  }
  ASSERT_NE(role, nullptr) << "deploy/rbac.yaml has no ClusterRole";
  auto allows = [&](const std::string& group, const std::string& resource, const char* verb) {
    for (const auto& rule : (*role)["rules"]) {
      auto has = [&](const char* key, const std::string& value) {
        for (const auto& v : rule.value(key, nlohmann::json::array())) {
          if (v == value) return true;
        }
        return false;
      };
      if (has("apiGroups", group) && has("resources", resource) && has("verbs", verb)) {
        return true;
      }
    }
    return false;
  };
  const std::vector<std::string> collections = Scheduler::WatchedCollections();
  ASSERT_GE(collections.size(), 10u);
  for (const std::string& path : collections) {
    // "/api/v1/R" (the core group) or "/apis/GROUP/VERSION/R".
    std::vector<std::string> parts;
    for (size_t at = 1; at <= path.size();) {
      size_t slash = path.find('/', at);
      if (slash == std::string::npos) slash = path.size();
      parts.push_back(path.substr(at, slash - at));
      at = slash + 1;
    }
    const bool core = parts[0] == "api";
    ASSERT_EQ(parts.size(), core ? 3u : 4u) << path;
    const std::string group = core ? "" : parts[1];
    const std::string resource = parts.back();
    EXPECT_TRUE(allows(group, resource, "list")) << path << ": no rule to list " << resource;
    EXPECT_TRUE(allows(group, resource, "watch")) << path << ": no rule to watch " << resource;
  }
  // Preempt and reclaim evict through the Eviction API.
  EXPECT_TRUE(allows("", "pods/eviction", "create")) << "no rule to create pods/eviction";
}

}  // namespace
}  // namespace gantry

namespace gantry {
namespace {

TEST(ParseDaemonConfig, DeviceClassResources) {
  DaemonConfig defaults;
  ASSERT_EQ(defaults.device_class_resources.size(), 1u);
  EXPECT_EQ(defaults.device_class_resources[0].device_class, "gpu.nvidia.com");
  EXPECT_EQ(defaults.device_class_resources[0].resource, kGpu);
  DaemonConfig c;
  ASSERT_TRUE(ParseDaemonConfig("deviceClassResources:\n"
                                "- {deviceClass: gpu.nvidia.com, resource: nvidia.com/gpu}\n"
                                "- deviceClass: mig.nvidia.com\n"
                                "  resource: nvidia.com/gpu\n"
                                "  counterPrefix: memory-slice\n",
                                "cfg.yaml", &c)
                  .ok());
  ASSERT_EQ(c.device_class_resources.size(), 2u);
  EXPECT_EQ(c.device_class_resources[1].device_class, "mig.nvidia.com");
  EXPECT_EQ(c.device_class_resources[1].resource, kGpu);
  EXPECT_EQ(c.device_class_resources[1].counter_prefix, "memory-slice");
  // An empty list counts no device.
  ASSERT_TRUE(ParseDaemonConfig("deviceClassResources: []\n", "cfg.yaml", &c).ok());
  EXPECT_TRUE(c.device_class_resources.empty());
}

TEST(ParseDaemonConfig, DeviceClassResourcesErrorsNameTheEntry) {
  std::string e = Error(
      "deviceClassResources:\n- {deviceClass: a, resource: x/y}\n"
      "- {deviceClass: a, resource: x/z}\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:")) << e;
  EXPECT_TRUE(Contains(e, "deviceClassResources[1].deviceClass")) << e;
  EXPECT_TRUE(Contains(e, "mapped twice")) << e;
  e = Error("deviceClassResources:\n- {deviceClass: a}\n");
  EXPECT_TRUE(Contains(e, "deviceClassResources[0]: deviceClass and resource are required")) << e;
  e = Error("deviceClassResources:\n- {deviceClass: a, resource: x/y, count: 2}\n");
  EXPECT_TRUE(Contains(e, "deviceClassResources[0].count: unknown field")) << e;
  e = Error("deviceClassResources: gpu\n");
  EXPECT_TRUE(Contains(e, "expected a list")) << e;
}

TEST(ParseDaemonConfig, DeviceAlignmentAttributes) {
  DaemonConfig defaults;
  EXPECT_EQ(defaults.device_alignment_attributes,
            (std::vector<std::string>{"resource.kubernetes.io/numaNode",
                                      "resource.kubernetes.io/pcieRoot"}));
  DaemonConfig c;
  ASSERT_TRUE(ParseDaemonConfig("deviceAlignmentAttributes: [gpu.nvidia.com/nvlinkDomain]\n",
                                "cfg.yaml", &c)
                  .ok());
  EXPECT_EQ(c.device_alignment_attributes, std::vector<std::string>{"gpu.nvidia.com/nvlinkDomain"});
  // An empty list turns the preference off.
  ASSERT_TRUE(ParseDaemonConfig("deviceAlignmentAttributes: []\n", "cfg.yaml", &c).ok());
  EXPECT_TRUE(c.device_alignment_attributes.empty());
}

TEST(ParseDaemonConfig, DeviceAlignmentAttributesErrorsNameTheEntry) {
  std::string e = Error("deviceAlignmentAttributes:\n- a.io/x\n- numaNode\n");
  EXPECT_TRUE(Contains(e, "cfg.yaml:3:")) << e;
  EXPECT_TRUE(Contains(e, "deviceAlignmentAttributes[1]: expected a qualified attribute name"))
      << e;
  e = Error("deviceAlignmentAttributes: [a.io/x, a.io/x]\n");
  EXPECT_TRUE(Contains(e, "deviceAlignmentAttributes[1]: duplicate attribute")) << e;
  e = Error("deviceAlignmentAttributes: [a/b, c/d, e/f, g/h, i/j]\n");
  EXPECT_TRUE(Contains(e, "at most 4")) << e;
  e = Error("deviceAlignmentAttributes: [a/b/c]\n");
  EXPECT_TRUE(Contains(e, "domain/name")) << e;
}

}  // namespace
}  // namespace gantry
