// What `gantry sim` writes and prints from its runs: summary.json (the schema: per run, then
// per policy over its seeds), the time series (CSV, and JSON rows for the report) and the
// terminal table. Built from the results alone, so it reads no clock and writes no file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/sim_options.h"

namespace gantry {

// One simulation: a policy, a seed and what it gave (`protocol` for --protocol runs, else
// `replay`), with its wall time, the only field that measures the machine.
struct SimRun {
  std::string policy;
  uint64_t seed = 0;
  ProtocolResult protocol;
  ReplayResult replay;
  double wall_s = 0;
};

struct SimOutputs {
  nlohmann::ordered_json summary;     // summary.json
  nlohmann::ordered_json timeseries;  // replay rows for the report; empty for the protocol
  std::string timeseries_csv;         // timeseries.csv
  std::string table;          // the terminal summary, one line per policy (and fairness per run)
  std::string queues_csv;     // replays: per run, row and queue its share and deserved share
  std::string evictions_csv;  // replays: per run, its evictions (the first kMaxEvictionRecords)
};

// `runs`: every policy of `settings` with every seed, in any order; aggregates over a
// policy's runs follow the order of `runs`. The summary quotes the paper's published means
// when the protocol ran on openb_pod_list_default.csv at an arrival scale of 1.3.
SimOutputs SummarizeSimRuns(const SimOptions& options, const SimSettings& settings,
                            const std::vector<SimRun>& runs);

}  // namespace gantry
