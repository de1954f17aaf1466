// The gantry command's subcommands. Each returns the process exit status:
// 0 success, 1 expectations unmet, 2 bad input or usage.
#pragma once

#include <cstdint>
#include <string>

namespace gantry {

struct ScheduleOptions {
  std::string scenario;
  std::string format = "table";  // table | json
};
int RunSchedule(const ScheduleOptions& options);

struct SimOptions {
  std::string cluster;
  std::string workload;
  std::string generate;
  std::string protocol;
  double arrival_scale = 1.3;
  std::string policies = "gantry";
  std::string seeds = "42";
  std::string out = "out/sim";
  int64_t period_s = 10;
  int32_t nodes_to_score = 100;
  int jobs = 2;
};
int RunSim(const SimOptions& options);

}  // namespace gantry
