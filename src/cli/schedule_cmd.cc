// `gantry schedule`: one session on a scenario file.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/device_objects.h"
#include "engine/explain.h"
#include "engine/session.h"
#include "explain/explanation_json.h"
#include "k8s/json_text.h"
#include "sim/decisions_json.h"
#include "sim/scenario_expect.h"
#include "sim/scenario_reader.h"

namespace gantry {
namespace {

constexpr size_t kExplainAll = 1'000'000;

std::string GpuList(const std::vector<int32_t>& gpus) {
  std::string out;
  for (int32_t g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out.empty() ? "-" : out;
}

// A bind's devices: its GPU indexes, then the DRA devices its claims were given, then those
// of its extended resources served by DRA.
std::string DevicesOf(const BindDecision& b) {
  std::string out = b.gpus.empty() ? "" : GpuList(b.gpus);
  auto add = [&out](const dra::Allocation& allocation) {
    for (const dra::AllocationResult& result : allocation.results) {
      out += (out.empty() ? "" : ",") + result.pool + "/" + result.device;
    }
  };
  for (const std::optional<dra::Allocation>& claim : b.devices) {
    if (claim) add(*claim);
  }
  if (b.extended_devices) add(*b.extended_devices);
  return out.empty() ? "-" : out;
}

void PrintTable(const Scenario& s, const Decisions& d,
                const std::vector<PendingExplanation>& explanations) {
  const ClusterState& c = s.cluster;
  std::printf("scenario %s: %zu nodes, %zu jobs, %zu tasks\n", s.name.c_str(), c.nodes().size(),
              c.jobs().size(), c.tasks().size());
  std::printf("\n%-24s %-32s %-20s %s\n", "JOB", "TASK", "NODE", "GPUS");
  for (const BindDecision& b : d.binds) {
    std::printf("%-24s %-32s %-20s %s\n", c.job(b.job).name.c_str(), c.task(b.task).name.c_str(),
                c.node(b.node).name.c_str(), DevicesOf(b).c_str());
  }
  if (d.binds.empty()) std::printf("(no binds)\n");
  for (const EvictDecision& e : d.evictions) {
    std::printf("evict %s on %s: %s\n", c.task(e.task).name.c_str(), c.node(e.node).name.c_str(),
                e.reason.c_str());
  }
  for (const PipelineDecision& p : d.pipelined) {
    std::printf("pipelined %s onto %s (GPUs %s), binds once its room is released\n",
                c.task(p.task).name.c_str(), c.node(p.node).name.c_str(), GpuList(p.gpus).c_str());
  }
  if (!d.pending.empty()) {
    std::printf("\n%-24s %-8s %s\n", "PENDING JOB", "TASKS", "REASON");
    for (const PendingJob& p : d.pending) {
      std::printf("%-24s %-8d %s\n", c.job(p.job).name.c_str(), p.pending_tasks, p.reason.c_str());
    }
    for (const PendingExplanation& e : explanations) {
      const auto p = std::find_if(d.pending.begin(), d.pending.end(),
                                  [&](const PendingJob& x) { return x.job == e.job; });
      const std::string words = ExplanationText(
          nlohmann::json::parse(ExplanationJson(c, *p, &e).dump()), c.job(e.job).name);
      std::printf("\n%s", words.c_str());
    }
  }
}

}  // namespace

int RunSchedule(const ScheduleOptions& options) {
  const ApiDeviceObjectReader device_objects;
  auto scenario = LoadScenario(options.scenario, &device_objects);
  if (!scenario.ok()) {
    std::fprintf(stderr, "gantry schedule: %s\n", scenario.status().message().c_str());
    return 2;
  }
  auto policy = Policy::Compile(scenario->config);
  if (!policy.ok()) {  // the loader checked the configuration already
    std::fprintf(stderr, "gantry schedule: %s: %s\n", options.scenario.c_str(),
                 policy.status().message().c_str());
    return 2;
  }
  Snapshot snapshot(scenario->cluster);
  const RunVerdicts verdicts;
  const DeviceInputs devices = scenario->devices.Inputs(verdicts.get());
  if (!scenario->devices.empty()) snapshot.set_devices(devices);
  Session session(snapshot, *policy);
  Decisions decisions = session.Run();
  // Scenarios are small: every pending job is explained (and expect.explain checks it).
  const std::vector<PendingExplanation> explanations =
      ExplainPending(session, decisions, kExplainAll);
  if (options.format == "json") {
    std::cout << k8s::JsonText(DecisionsJson(scenario->cluster, decisions), 2) << "\n";
  } else {
    PrintTable(*scenario, decisions, explanations);
  }
  std::vector<std::string> unmet = CheckExpectations(*scenario, decisions, &explanations);
  if (!unmet.empty()) {
    std::fprintf(stderr, "\n%s: %zu expectation(s) not met:\n", options.scenario.c_str(),
                 unmet.size());
    for (const std::string& line : unmet) std::fprintf(stderr, "  - %s\n", line.c_str());
    return 1;
  }
  if (scenario->expect.present && options.format == "table") {
    std::printf("\nexpectations met\n");
  }
  return 0;
}

}  // namespace gantry
