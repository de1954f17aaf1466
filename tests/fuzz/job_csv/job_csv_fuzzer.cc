// Gantry's generic job CSV (sim/trace_csv.h): ParseJobCsv on any text, then the
// simulator's conversion to jobs (JobsFromTraceJobs).
//
// Checks: a refusal names the file; each job read keeps the column rules (times and
// amounts non-negative, 1..kMaxTasksPerJob pods with a gang of 1..pods, 0..kMaxGpusPerNode
// whole GPUs or a share of one below 1000, not both; a name); one simulated job per row.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/limits.h"
#include "sim/trace_csv.h"
#include "sim/workload.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-jobs.csv";
  auto jobs = ParseJobCsv(std::string(fuzz::AsText(data, size)), source);
  if (!jobs.ok()) {
    fuzz::CheckErrorNamesSource(jobs.status(), source);
    return 0;
  }
  FUZZ_CHECK(!jobs->empty(), "an empty job list accepted");
  for (const TraceJob& j : *jobs) {
    const std::string where = "job \"" + j.name + "\" (line " + std::to_string(j.line) + ")";
    FUZZ_CHECK(!j.name.empty(), "a job without a name");
    FUZZ_CHECK(j.line >= 2, where + ": a row before the header");
    FUZZ_CHECK(j.submit_time >= 0 && j.duration >= 0, where + ": negative times");
    FUZZ_CHECK(j.cpu >= 0 && j.memory >= 0, where + ": negative amounts");
    FUZZ_CHECK(j.pods >= 1 && j.pods <= kMaxTasksPerJob,
               where + ": " + std::to_string(j.pods) + " pods");
    FUZZ_CHECK(j.min_member >= 1 && j.min_member <= j.pods,
               where + ": min_member " + std::to_string(j.min_member));
    FUZZ_CHECK(j.gpus_per_pod >= 0 && j.gpus_per_pod <= kMaxGpusPerNode,
               where + ": " + std::to_string(j.gpus_per_pod) + " GPUs per pod");
    FUZZ_CHECK(j.gpu_milli >= 0 && j.gpu_milli < 1000,
               where + ": GPU share " + std::to_string(j.gpu_milli));
    FUZZ_CHECK(j.gpu_milli == 0 || j.gpus_per_pod == 0, where + ": whole GPUs and a share");
  }
  std::vector<SimJob> sim_jobs = JobsFromTraceJobs(*jobs);
  FUZZ_CHECK(sim_jobs.size() == jobs->size(), std::to_string(jobs->size()) + " rows make " +
                                                  std::to_string(sim_jobs.size()) + " jobs");
  return 0;
}
