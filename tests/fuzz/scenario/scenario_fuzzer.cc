// Scenario files (sim/scenario_reader.h): ParseScenario on any text, its `dra:` objects read
// with the API's decoders as `gantry sim` reads them (cli/device_objects.h).
//
// Checks: a refusal names the file; what is accepted keeps the limits on input
// (model/limits.h) and a consistent cluster (tests/fuzz/cluster_checks.h), with every
// job's tasks under kMaxTasksPerJob and a gang size of at least 1.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/device_objects.h"
#include "sim/scenario_reader.h"
#include "tests/fuzz/cluster_checks.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-scenario.yaml";
  const ApiDeviceObjectReader devices;
  Result<Scenario> scenario =
      ParseScenario(std::string(fuzz::AsText(data, size)), source, &devices);
  if (!scenario.ok()) {
    fuzz::CheckErrorNamesSource(scenario.status(), source);
    return 0;
  }
  const ClusterState& cluster = scenario->cluster;
  fuzz::CheckCluster(cluster);
  for (const Job& job : cluster.jobs()) {
    FUZZ_CHECK(static_cast<int64_t>(job.tasks.size()) <= kMaxTasksPerJob,
               "job \"" + job.name + "\" has " + std::to_string(job.tasks.size()) + " tasks");
    FUZZ_CHECK(job.min_member >= 1,
               "job \"" + job.name + "\": minMember " + std::to_string(job.min_member));
  }
  return 0;
}
