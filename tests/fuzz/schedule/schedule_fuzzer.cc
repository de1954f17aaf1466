// `gantry schedule` on any scenario text: ParseScenario, then one session on what it
// accepted (only small scenarios: the harness looks for wrong decisions, not slow ones),
// then CheckExpectations.
//
// Checks on the decisions: each bind is of a pending task, once, and applying the
// evictions and then the binds to the cluster with ClusterState::Place (which checks the
// room on the node and its devices) succeeds: nothing is overcommitted; every bind passes
// the static predicates on its node alone (not only through its node's class); no gang is bound
// below its minMember; every job left with pending tasks has a reason; a second session on
// the same snapshot decides the same, DRA devices included (a scenario's `dra:` objects are
// read with the API's decoders, as `gantry schedule` reads them; this build has no CEL, so
// a selector is an allocation error).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/device_objects.h"
#include "engine/filter.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "sim/scenario_expect.h"
#include "sim/scenario_reader.h"
#include "tests/fuzz/cluster_checks.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry {
namespace {

// Sessions cost about nodes x tasks; above this the harness only parses.
constexpr size_t kMaxWork = 50'000;

bool SameDecisions(const Decisions& a, const Decisions& b) {
  if (a.binds.size() != b.binds.size() || a.evictions.size() != b.evictions.size() ||
      a.pending.size() != b.pending.size()) {
    return false;
  }
  for (size_t i = 0; i < a.binds.size(); ++i) {
    if (a.binds[i].task != b.binds[i].task || a.binds[i].node != b.binds[i].node ||
        a.binds[i].gpus != b.binds[i].gpus || a.binds[i].devices != b.binds[i].devices ||
        a.binds[i].extended_devices != b.binds[i].extended_devices) {
      return false;
    }
  }
  for (size_t i = 0; i < a.evictions.size(); ++i) {
    if (a.evictions[i].task != b.evictions[i].task) return false;
  }
  for (size_t i = 0; i < a.pending.size(); ++i) {
    if (a.pending[i].job != b.pending[i].job || a.pending[i].reason != b.pending[i].reason ||
        a.pending[i].pending_tasks != b.pending[i].pending_tasks) {
      return false;
    }
  }
  return true;
}

void CheckDecisions(const ClusterState& before, const Decisions& decisions,
                    const NodePredicate& static_predicates) {
  ClusterState after = before;
  for (const EvictDecision& e : decisions.evictions) {
    FUZZ_CHECK(e.task < after.tasks().size() && after.task(e.task).state == TaskState::kRunning,
               "evicts a task that is not running: " + std::to_string(e.task));
    after.Release(e.task);
  }
  std::vector<int32_t> placed(after.jobs().size(), 0);
  for (const BindDecision& b : decisions.binds) {
    FUZZ_CHECK(b.task < after.tasks().size(), "binds task id " + std::to_string(b.task));
    const Task& task = after.task(b.task);
    FUZZ_CHECK(task.state == TaskState::kPending,
               "binds task \"" + task.name + "\", which is not pending (bound twice?)");
    FUZZ_CHECK(b.job == task.job, "binds task \"" + task.name + "\" as another job's");
    FUZZ_CHECK(b.node < after.nodes().size(), "binds to node id " + std::to_string(b.node));
    // The static verdict for this node alone (the session caches it per node class, and a
    // class key missing a field the predicates read once bound MIG pods to a node whose
    // MIG manager was re-cutting its GPUs).
    const FilterResult alone =
        static_predicates.FilterStatic(after.spec(task.spec), after.node(b.node));
    FUZZ_CHECK(alone.ok(),
               "binds task \"" + task.name + "\" to node \"" + after.node(b.node).name +
                   "\", which it fails: " + DescribeFilter(alone, after.spec(task.spec)));
    Status placed_ok = after.Place(b.task, b.node, b.gpus);
    FUZZ_CHECK(placed_ok.ok(), "a bind that does not fit: " + placed_ok.message());
    ++placed[task.job];
  }
  fuzz::CheckCluster(after);
  // A pipelined task waits for room its victims give back: placed, not yet bound.
  std::vector<int32_t> pipelined(after.jobs().size(), 0);
  for (const PipelineDecision& p : decisions.pipelined) {
    FUZZ_CHECK(p.task < after.tasks().size() && after.task(p.task).state == TaskState::kPending,
               "pipelines a task that is not pending: " + std::to_string(p.task));
    FUZZ_CHECK(p.job == after.task(p.task).job, "pipelines a task as another job's");
    ++pipelined[p.job];
  }
  for (JobId id = 0; id < after.jobs().size(); ++id) {
    const Job& job = after.job(id);
    if (placed[id] > 0) {
      FUZZ_CHECK(job.running + pipelined[id] >= job.min_member,
                 "job \"" + job.name + "\" bound below its gang: " + std::to_string(job.running) +
                     " running and " + std::to_string(pipelined[id]) + " pipelined of minMember " +
                     std::to_string(job.min_member));
    }
  }
  std::vector<bool> has_reason(after.jobs().size(), false);
  for (const PendingJob& p : decisions.pending) {
    FUZZ_CHECK(p.job < after.jobs().size(), "a pending job id " + std::to_string(p.job));
    FUZZ_CHECK(!p.reason.empty(), "job \"" + after.job(p.job).name + "\" pending without a reason");
    has_reason[p.job] = true;
  }
  for (JobId id : after.jobs_with_pending()) {
    if (after.job(id).pending == pipelined[id]) continue;
    FUZZ_CHECK(has_reason[id], "job \"" + after.job(id).name + "\" has " +
                                   std::to_string(after.job(id).pending) +
                                   " pending tasks and no pending entry with a reason");
  }
}

}  // namespace
}  // namespace gantry

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-schedule.yaml";
  const ApiDeviceObjectReader reader;
  Result<Scenario> scenario = ParseScenario(std::string(fuzz::AsText(data, size)), source, &reader);
  if (!scenario.ok()) return 0;  // the scenario harness checks refusals
  const ClusterState& cluster = scenario->cluster;
  if ((cluster.nodes().size() + 1) * (cluster.tasks().size() + 1) > kMaxWork) return 0;
  const std::unique_ptr<Plugin> predicates = MakePlugin(PluginConfig{"predicates", {}}).value();
  Snapshot snapshot(cluster);
  const RunVerdicts verdicts;
  const DeviceInputs devices = scenario->devices.Inputs(verdicts.get());
  if (!scenario->devices.empty()) snapshot.set_devices(devices);
  Decisions first = Session(snapshot, Policy::Compile(scenario->config).value()).Run();
  CheckDecisions(cluster, first, dynamic_cast<const NodePredicate&>(*predicates));
  Decisions second = Session(snapshot, Policy::Compile(scenario->config).value()).Run();
  FUZZ_CHECK(SameDecisions(first, second), "two sessions on one snapshot decide differently");
  (void)CheckExpectations(*scenario, first);
  return 0;
}
