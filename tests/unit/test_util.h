// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.h"
#include "engine/policy.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "model/cluster.h"
#include "model/status.h"
#include "yaml/scheduler_config_yaml.h"

namespace gantry {

inline constexpr int64_t kGiB = int64_t{1} << 30;

// A dataset of ClusterState's table, by its fields.
inline DatasetInfo Info(std::string name, int64_t bytes = 0, std::string uid = "",
                        int64_t warmup_s = -1) {
  DatasetInfo d;
  d.name = std::move(name);
  d.size_bytes = bytes;
  d.uid = std::move(uid);
  d.warmup_s = warmup_s;
  return d;
}

// Whether `text` holds `part`; on failure, says what the text was (the first 2,000 bytes).
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text.substr(0, 2000) << "\" does not contain \"" << part << "\"";
}

// A plugin's configuration with its arguments written as text, as a configuration file
// gives them: an argument the plugin reads as a list (IsStructuredArgument) is parsed from
// its text as the configuration readers parse it; the others are scalars.
inline Result<PluginConfig> PluginWithTextArguments(
    std::string name, const std::map<std::string, std::string>& arguments) {
  PluginConfig config{std::move(name), {}};
  for (const auto& [key, text] : arguments) {
    if (!IsStructuredArgument(config.name, key)) {
      config.arguments[key] = text;
      continue;
    }
    Result<PluginArgument> parsed =
        ParsePluginArgument(text, "plugin " + config.name + ": argument " + key);
    if (!parsed.ok()) return parsed.status();
    config.arguments[key] = std::move(parsed).value();
  }
  return config;
}

// A plugin's arguments as text: each scalar's, and each list's or mapping's in flow style
// (PluginArgument::Text), for comparing with what a test writes.
inline std::map<std::string, std::string> ArgumentTexts(const PluginConfig& config) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : config.arguments) out[key] = value.Text();
  return out;
}

// The value of a Result that the test needs to go on; fails the test loudly otherwise.
template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) {
    ADD_FAILURE() << r.status().message();
    std::abort();
  }
  return std::move(r).value();
}

// A configuration the test expects to be valid, compiled.
inline Policy MustCompile(const SchedulerConfig& config) {
  return Must(Policy::Compile(config));
}

// The default configuration without the plugin named `plugin`.
inline SchedulerConfig DefaultWithout(const std::string& plugin) {
  SchedulerConfig config = SchedulerConfig::Default();
  std::erase_if(config.plugins, [&](const PluginConfig& p) { return p.name == plugin; });
  return config;
}

// One session on `cluster` (with a node table kept between sessions when `cache` is given,
// as the daemon and the simulator run them) and its decisions.
inline Decisions RunSession(const ClusterState& cluster,
                            const SchedulerConfig& config = SchedulerConfig::Default(),
                            SessionOptions options = {}, NodeTableCache* cache = nullptr) {
  const Policy policy = MustCompile(config);
  const Snapshot snapshot = cache != nullptr ? Snapshot(cluster, cache) : Snapshot(cluster);
  return Session(snapshot, policy, options).Run();
}

// Task types for workload profiles: `count` tasks of `cpu` milli-CPU and a share of one
// GPU, whole GPUs, or none; `models` empty: any GPU model.
inline TaskType SharedGpuType(Milli cpu, int32_t milli, int64_t count,
                              std::vector<GpuModelId> models = {}) {
  TaskType t;
  t.requests.Set(kCpu, cpu);
  t.gpu.milli = milli;
  t.gpu.models = std::move(models);
  t.count = count;
  return t;
}

inline TaskType WholeGpuType(Milli cpu, int32_t gpus, int64_t count,
                             std::vector<GpuModelId> models = {}) {
  TaskType t = SharedGpuType(cpu, 0, count, std::move(models));
  t.gpu.count = gpus;
  return t;
}

inline TaskType CpuOnlyType(Milli cpu, int64_t count) {
  return SharedGpuType(cpu, 0, count);
}

// A workload of these task types (most frequent first, as ClusterState keeps them).
inline WorkloadProfile TypesProfile(std::vector<TaskType> types) {
  WorkloadProfile p;
  for (const TaskType& t : types) p.total += t.count;
  p.types = std::move(types);
  return p;
}

}  // namespace gantry
