// Reading scenario files (sim/scenario.h; the format: README.md and tests/scenario/) and
// the queue files of `gantry sim --queues`. The writer beside it is sim/scenario_writer.h.
// The parts of the format each have their reader: nodes (scenario_nodes.h), tasks
// (scenario_task.h), expectations (scenario_expect.h), and the topics of the other
// sim/scenario_*.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/scenario.h"

namespace gantry {

// Reads and validates a scenario file. Errors say "FILE:LINE:COLUMN: FIELD: what".
// `devices` reads its DRA objects (sim/scenario_devices.h); null refuses a file with some.
Result<Scenario> LoadScenario(const std::string& path, const DeviceObjectReader* devices = nullptr);
// The same from text; `source` names it in errors.
Result<Scenario> ParseScenario(const std::string& text, const std::string& source,
                               const DeviceObjectReader* devices = nullptr);

// What a queue file may set of the replay's configuration (the policies come from
// --policy): unset fields leave the policy's own.
struct QueueFileConfig {
  std::vector<std::string> actions;           // empty: the policy's
  std::optional<int64_t> preemption_grace_s;  // preemptionGraceSeconds
  std::optional<int64_t> starvation_s;        // starvationSeconds
};

// A queue file for `gantry sim --queues`: a mapping with `queues:` (the scenario format's
// list: weights, guarantees, capabilities, parents) and optionally `config:` with
// `actions`, `preemptionGraceSeconds` and `starvationSeconds`. Adds the queues to
// `cluster` and sets in `config` what the file names. Errors as ParseScenario's.
Status ParseQueueFile(const std::string& text, const std::string& source, ClusterState* cluster,
                      QueueFileConfig* config);

}  // namespace gantry
