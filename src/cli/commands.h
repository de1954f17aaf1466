// The gantry command's subcommands. Each returns the process exit status:
// 0 success, 1 expectations unmet, 2 bad input or usage.
#pragma once

#include <string>

namespace gantry {

struct ScheduleOptions {
  std::string scenario;
  std::string format = "table";  // table | json
};
int RunSchedule(const ScheduleOptions& options);

}  // namespace gantry
