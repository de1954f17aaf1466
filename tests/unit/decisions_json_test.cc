// The JSON of a session's decisions (sim/decisions_json.h), as `gantry schedule --format
// json` writes it. No action evicts or pipelines yet, so the decisions here are made up:
// the format of every kind of entry is exercised with data in it.
#include "sim/decisions_json.h"

#include <gtest/gtest.h>

#include <string>

#include "k8s/json_text.h"
#include "sim/scenario_reader.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// Two GPUs on n0; low runs there, high waits with two workers.
const char* const kScenario = R"(
nodes:
- {name: n0, allocatable: {cpu: 8}, gpus: {count: 2}}
jobs:
- {name: low, tasks: [{requests: {cpu: 1, nvidia.com/gpu: 1}}]}
- {name: high, tasks: [{role: worker, replicas: 2, requests: {cpu: 1, nvidia.com/gpu: 1}}]}
running:
- {job: low, node: n0, gpus: [0]}
)";

TEST(DecisionsJson, NoDecisionsAreEmptyArrays) {
  const Scenario s = Must(ParseScenario(kScenario, "s.yaml"));
  EXPECT_EQ(k8s::JsonText(DecisionsJson(s.cluster, Decisions{})),
            R"({"binds":[],"evictions":[],"pipelined":[],"pending":[]})");
}

TEST(DecisionsJson, ListsBindsEvictionsPipelinedAndPending) {
  const Scenario s = Must(ParseScenario(kScenario, "s.yaml"));
  const ClusterState& c = s.cluster;
  const JobId low = c.FindJob("low"), high = c.FindJob("high");
  const NodeId n0 = c.FindNode("n0");
  Decisions d;
  d.binds.push_back({high, c.job(high).tasks[0], n0, {1}});
  d.evictions.push_back({low, c.job(low).tasks[0], n0, "preempted by high"});
  d.pipelined.push_back({high, c.job(high).tasks[1], n0, {0}});
  d.pending.push_back({high, 1, "waiting for low to terminate"});
  EXPECT_EQ(k8s::JsonText(DecisionsJson(c, d)),
            R"({"binds":[{"job":"high","role":"worker","task":"high-worker-0","node":"n0",)"
            R"("gpus":[1]}],)"
            R"("evictions":[{"job":"low","task":"low-task-0","node":"n0",)"
            R"("reason":"preempted by high","cause":"preempt"}],)"
            R"("pipelined":[{"job":"high","task":"high-worker-1","node":"n0","gpus":[0]}],)"
            R"("pending":[{"job":"high","tasks":1,"reason":"waiting for low to terminate"}]})");
}

}  // namespace
}  // namespace gantry
