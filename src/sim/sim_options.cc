#include "sim/sim_options.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>
#include <tuple>

#include "model/limits.h"
#include "sim/protocol.h"
#include "sim/replay.h"

namespace gantry {
namespace {

// The value as given, quoted and shortened for a message.
std::string Quoted(const std::string& value) {
  return "\"" + (value.size() > 64 ? value.substr(0, 64) + "..." : value) + "\"";
}

std::string Number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string IntRange(int64_t min, int64_t max) {
  return "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

// A whole decimal integer in [min, max] (no sign but '-', no spaces, no hex).
Result<int64_t> ParseInteger(const std::string& option, const std::string& text, int64_t min,
                             int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || end != text.data() + text.size() || ec == std::errc::invalid_argument) {
    return Status::Invalid(option + ": expected an integer in " + IntRange(min, max) + ", got " +
                           Quoted(text));
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    return Status::Invalid(option + ": " + Quoted(text) + " is out of range " + IntRange(min, max));
  }
  return v;
}

Result<uint64_t> ParseSeed(const std::string& option, const std::string& text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || end != text.data() + text.size() || ec != std::errc()) {
    return Status::Invalid(option + ": expected an integer in [0, " + std::to_string(UINT64_MAX) +
                           "], got " + Quoted(text));
  }
  return v;
}

// A finite decimal number in (min, max] (or [min, max] when `min_allowed`).
Result<double> ParseReal(const std::string& option, const std::string& text, double min,
                         bool min_allowed, double max) {
  const std::string range = (min_allowed ? "[" : "(") + Number(min) + ", " + Number(max) + "]";
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || end != text.data() + text.size() || ec == std::errc::invalid_argument) {
    return Status::Invalid(option + ": expected a number in " + range + ", got " + Quoted(text));
  }
  // Written to refuse NaN: every comparison with it is false. Infinities fail the range.
  const bool above_min = min_allowed ? v >= min : v > min;
  if (ec == std::errc::result_out_of_range || !(above_min && v <= max)) {
    return Status::Invalid(option + ": " + Quoted(text) + " is out of range " + range);
  }
  return v;
}

std::vector<std::string> SplitOn(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

}  // namespace

Result<MovableSelection> ParseMovable(const std::string& text) {
  MovableSelection m;
  if (text == "all") {
    m.kind = MovableSelection::Kind::kAll;
  } else if (text == "shared") {
    m.kind = MovableSelection::Kind::kShared;
  } else {
    auto pct = ParseInteger("--movable", text, 0, 100);
    if (!pct.ok()) {
      return Status::Invalid(
          "--movable: expected all, shared or a percent of jobs (0 to 100), got " + Quoted(text));
    }
    m.kind = MovableSelection::Kind::kPercent;
    m.pct = static_cast<int32_t>(*pct);
  }
  return m;
}

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> seeds;
  std::set<uint64_t> seen;
  auto add = [&](uint64_t seed) -> Status {
    if (!seen.insert(seed).second) {
      return Status::Invalid("--seeds: seed " + std::to_string(seed) + " is given twice");
    }
    if (static_cast<int64_t>(seeds.size()) >= kMaxSimSeeds) {
      return Status::Invalid("--seeds: more than " + std::to_string(kMaxSimSeeds) +
                             " seeds (the limit)");
    }
    seeds.push_back(seed);
    return Status::Ok();
  };
  for (const std::string& part : SplitOn(text, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      auto seed = ParseSeed("--seeds", part);
      if (!seed.ok())
        return Status::Invalid("--seeds: " + Quoted(part) + " is not a seed or a range like 42-51");
      GANTRY_RETURN_IF_ERROR(add(*seed));
      continue;
    }
    auto lo = ParseSeed("--seeds", part.substr(0, dash));
    auto hi = ParseSeed("--seeds", part.substr(dash + 1));
    if (!lo.ok() || !hi.ok() || *hi < *lo) {
      return Status::Invalid("--seeds: " + Quoted(part) + " is not a seed or a range like 42-51");
    }
    if (*hi - *lo >= static_cast<uint64_t>(kMaxSimSeeds)) {
      return Status::Invalid("--seeds: " + Quoted(part) + " has more than " +
                             std::to_string(kMaxSimSeeds) + " seeds (the limit)");
    }
    for (uint64_t s = *lo;; ++s) {
      GANTRY_RETURN_IF_ERROR(add(s));
      if (s == *hi) break;  // not s <= hi: hi may be UINT64_MAX
    }
  }
  return seeds;
}

Result<GeneratorOptions> ParseGenerate(const std::string& text, std::vector<std::string>* given) {
  GeneratorOptions g;
  given->clear();
  const std::string known = "nodes, pods, rate, duration, seed, mix, queues, gangtopology, movable";
  for (const std::string& item : SplitOn(text, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status::Invalid("--generate: expected key=value (keys: " + known + "), got " +
                             Quoted(item));
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const std::string option = "--generate " + key;
    if (std::find(given->begin(), given->end(), key) != given->end()) {
      return Status::Invalid("--generate: " + key + " is given twice");
    }
    if (key == "nodes") {
      auto v = ParseInteger(option, value, 1, kMaxNodes);
      if (!v.ok()) return v.status();
      g.nodes = static_cast<int32_t>(*v);
    } else if (key == "pods") {
      auto v = ParseInteger(option, value, 1, kMaxTasks);
      if (!v.ok()) return v.status();
      g.pods = *v;
    } else if (key == "rate") {
      auto v = ParseReal(option + " (arrivals per second)", value, kMinArrivalRate, true,
                         kMaxArrivalRate);
      if (!v.ok()) return v.status();
      g.arrivals_per_s = *v;
    } else if (key == "duration") {
      auto v = ParseInteger(option + " (mean seconds)", value, 1, kMaxMeanDurationS);
      if (!v.ok()) return v.status();
      g.mean_duration_s = *v;
    } else if (key == "seed") {
      auto v = ParseSeed(option, value);
      if (!v.ok()) return v.status();
      g.seed = *v;
    } else if (key == "mix") {
      const std::vector<std::string> parts = SplitOn(value, '/');
      const std::string expected = option +
                                   ": expected four percentages A/B/C/D (single GPU, shared GPU, "
                                   "8-GPU gangs, CPU-only) adding up to 100, got " +
                                   Quoted(value);
      if (parts.size() != 4) return Status::Invalid(expected);
      int32_t pct[4];
      for (size_t i = 0; i < 4; ++i) {
        auto v = ParseInteger(option, parts[i], 0, 100);
        if (!v.ok()) return Status::Invalid(expected);
        pct[i] = static_cast<int32_t>(*v);
      }
      if (pct[0] + pct[1] + pct[2] + pct[3] != 100) return Status::Invalid(expected);
      g.pct_single = pct[0], g.pct_shared = pct[1], g.pct_gang = pct[2], g.pct_cpu = pct[3];
    } else if (key == "queues") {
      // "1/2/1" (queues q0, q1, q2) or "a:1/b:2/c:1": the tenants and their weights.
      const std::vector<std::string> parts = SplitOn(value, '/');
      if (parts.size() > kMaxGeneratedQueues) {
        return Status::Invalid(option + ": more than " + std::to_string(kMaxGeneratedQueues) +
                               " queues in " + Quoted(value));
      }
      for (size_t i = 0; i < parts.size(); ++i) {
        const size_t colon = parts[i].find(':');
        std::string name =
            colon == std::string::npos ? "q" + std::to_string(i) : parts[i].substr(0, colon);
        const std::string weight =
            colon == std::string::npos ? parts[i] : parts[i].substr(colon + 1);
        if (name.empty() || name.size() > kMaxNameLength) {
          return Status::Invalid(option + ": expected weights W/W/... or NAME:W/NAME:W/..., got " +
                                 Quoted(value));
        }
        for (const auto& [other, w] : g.queues) {
          if (other == name)
            return Status::Invalid(option + ": queue " + Quoted(name) + " is given twice");
        }
        auto v = ParseInteger(option + " weight of " + name, weight, 1, kMaxGeneratedQueueWeight);
        if (!v.ok()) return v.status();
        g.queues.emplace_back(std::move(name), *v);
      }
    } else if (key == "gangtopology") {
      const size_t colon = value.find(':');
      const std::string mode = value.substr(0, colon);
      if (colon == std::string::npos || colon + 1 == value.size() ||
          (mode != "required" && mode != "preferred")) {
        return Status::Invalid(option + ": expected required:LEVEL or preferred:LEVEL (a node " +
                               "label key of the cluster's topologyKeys), got " + Quoted(value));
      }
      g.gang_topology = TopologyRequest{value.substr(colon + 1), mode == "required"};
    } else if (key == "movable") {
      auto v = ParseInteger(option + " (percent of jobs)", value, 0, 100);
      if (!v.ok()) return v.status();
      g.pct_movable = static_cast<int32_t>(*v);
    } else {
      return Status::Invalid("--generate: unknown key " + Quoted(key) + " (known: " + known + ")");
    }
    given->push_back(key);
  }
  if (!g.queues.empty() && std::find(given->begin(), given->end(), "mix") != given->end()) {
    return Status::Invalid(
        "--generate: mix shapes the pods of a workload without queues; "
        "with queues= the pods are one-GPU gangs");
  }
  Status st = CheckGeneratorOptions(g);
  if (!st.ok()) return Status::Invalid("--generate: " + st.message());
  return g;
}

Result<SimSettings> ParseSimOptions(const SimOptions& o) {
  SimSettings s;
  if (!o.protocol.empty() && o.protocol != "fgd-atc23") {
    return Status::Invalid("--protocol: unknown protocol " + Quoted(o.protocol) +
                           " (known: fgd-atc23)");
  }
  s.protocol = !o.protocol.empty();

  auto seeds = ParseSeeds(o.seeds);
  if (!seeds.ok()) return seeds.status();
  s.seeds = std::move(seeds).value();
  for (const std::string& p : SplitOn(o.policies, ',')) {
    if (p.empty())
      return Status::Invalid("--policy: an empty policy name in " + Quoted(o.policies));
    if (std::find(s.policies.begin(), s.policies.end(), p) != s.policies.end()) {
      return Status::Invalid("--policy: " + Quoted(p) + " is given twice");
    }
    s.policies.push_back(p);
  }

  if (!o.arrival_scale.empty()) {
    if (!s.protocol) return Status::Invalid("--arrival-scale applies to --protocol fgd-atc23 only");
    auto v =
        ParseReal("--arrival-scale", o.arrival_scale, kMinArrivalScale, true, kMaxArrivalScale);
    if (!v.ok()) return v.status();
    s.arrival_scale = *v;
  }
  if (o.gpu_api == "dra") {
    s.gpu_api = GpuApi::kDra;
  } else if (!o.gpu_api.empty() && o.gpu_api != "device-plugin") {
    return Status::Invalid("--gpu-api: unknown API " + Quoted(o.gpu_api) +
                           " (known: device-plugin, dra)");
  }
  if (!o.period.empty()) {
    if (s.protocol) return Status::Invalid("--period applies to replays only, not to --protocol");
    auto v = ParseInteger("--period (seconds)", o.period, 1, kMaxReplayPeriodS);
    if (!v.ok()) return v.status();
    s.period_s = *v;
  }
  if (!o.nodes_to_score.empty()) {
    if (s.protocol)
      return Status::Invalid("--nodes-to-score applies to replays only, not to --protocol");
    auto v = ParseInteger("--nodes-to-score", o.nodes_to_score, 0, kMaxNodes);
    if (!v.ok()) return v.status();
    s.nodes_to_score = static_cast<int32_t>(*v);
  }
  if (!o.jobs.empty()) {
    auto v = ParseInteger("--jobs", o.jobs, 1, kMaxSimJobs);
    if (!v.ok()) return v.status();
    s.jobs = static_cast<int32_t>(*v);
  }

  if (!o.snapshot.empty()) {
    // The snapshot is the cluster, its running pods the start and the rest the workload.
    for (auto [option, text] :
         {std::pair{"--cluster", &o.cluster}, std::pair{"--workload", &o.workload},
          std::pair{"--generate", &o.generate}, std::pair{"--protocol", &o.protocol},
          std::pair{"--datasets", &o.datasets}}) {
      if (!text->empty()) {
        return Status::Invalid(std::string(option) +
                               " cannot be given with --snapshot (the snapshot is the cluster "
                               "and the workload)");
      }
    }
  }
  if (!o.generate.empty()) {
    std::vector<std::string> given;
    auto g = ParseGenerate(o.generate, &given);
    if (!g.ok()) return g.status();
    auto has = [&](const char* key) {
      return std::find(given.begin(), given.end(), key) != given.end();
    };
    if (!o.cluster.empty() && has("nodes")) {
      return Status::Invalid(
          "--generate nodes makes the cluster; it cannot be given with --cluster");
    }
    if (!o.workload.empty()) {
      for (const char* key : {"pods", "rate", "duration", "seed", "mix", "queues", "movable"}) {
        if (has(key)) {
          return Status::Invalid(
              "--generate " + std::string(key) +
              " shapes a generated workload; it cannot be given with --workload");
        }
      }
    }
    s.generate_cluster = o.cluster.empty();
    s.generate_workload = o.workload.empty();
    if (!s.generate_cluster && !s.generate_workload) {
      return Status::Invalid(
          "--generate has nothing to make: --cluster and --workload are both given");
    }
    s.generator = *g;
  }
  if (o.cluster.empty() && !s.generate_cluster && o.snapshot.empty()) {
    return Status::Invalid("no cluster: give --cluster FILE (or --generate)");
  }
  if (o.workload.empty() && !s.generate_workload && o.snapshot.empty()) {
    return Status::Invalid("no workload: give --workload FILE or --generate");
  }
  if (!o.queues.empty() && s.protocol)
    return Status::Invalid("--queues applies to replays only, not to --protocol");
  if (!o.actions.empty()) {
    if (s.protocol) return Status::Invalid("--actions applies to replays only, not to --protocol");
    for (const std::string& a : SplitOn(o.actions, ',')) {
      if (a.empty())
        return Status::Invalid("--actions: an empty action name in " + Quoted(o.actions));
      s.actions.push_back(a);
    }
  }
  for (auto [option, text, field] :
       {std::tuple{"--preemption-grace (seconds)", &o.preemption_grace, &s.preemption_grace_s},
        std::tuple{"--starvation (seconds)", &o.starvation, &s.starvation_s}}) {
    if (text->empty()) continue;
    if (s.protocol) return Status::Invalid(std::string(option) + " applies to replays only");
    auto v = ParseInteger(option, *text, 0, kMaxConfiguredSeconds);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (!o.datasets.empty()) {
    if (s.protocol) return Status::Invalid("--datasets applies to replays only, not to --protocol");
    auto d = ParseDatasetWorkload(o.datasets);
    if (!d.ok()) return d.status();
    s.datasets = *d;
  }
  if (!o.movable.empty()) {
    if (s.protocol) return Status::Invalid("--movable applies to replays only, not to --protocol");
    auto v = ParseMovable(o.movable);
    if (!v.ok()) return v.status();
    s.movable = *v;
  }
  if (!o.time_scale.empty()) {
    if (s.protocol)
      return Status::Invalid("--time-scale applies to replays only, not to --protocol");
    auto v = ParseInteger("--time-scale", o.time_scale, 1, kMaxTimeScale);
    if (!v.ok()) return v.status();
    s.time_scale = *v;
  }
  if (!o.defragment_budget.empty()) {
    if (s.protocol) return Status::Invalid("--defragment-budget applies to replays only");
    auto v = ParseInteger("--defragment-budget (evictions per hour)", o.defragment_budget, 0,
                          kMaxDefragmentEvictionsPerHour);
    if (!v.ok()) return v.status();
    s.defragment_budget = static_cast<int32_t>(*v);
  }
  s.fairness =
      !o.queues.empty() || !s.actions.empty() || (s.generator && !s.generator->queues.empty());
  if (s.protocol && o.workload.empty()) {
    return Status::Invalid("--protocol fgd-atc23 needs an openb pod list as --workload");
  }
  return s;
}

}  // namespace gantry
