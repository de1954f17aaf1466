// openb pod lists (sim/trace_csv.h), both the 11-column and the 5-column form:
// ParsePodCsv on any text, then the simulator's conversion to jobs (JobsFromPods).
//
// Checks: a refusal names the file; each pod read keeps the column rules (a name,
// non-negative CPU and memory, 0..kMaxGpusPerNode GPUs, a share in 1..1000 per GPU and
// below 1000 only for one GPU, no share without GPUs, deleted no earlier than created,
// times only in the long form); one job per pod, each with one task.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/limits.h"
#include "sim/trace_csv.h"
#include "sim/workload.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-pods.csv";
  auto pods = ParsePodCsv(std::string(fuzz::AsText(data, size)), source);
  if (!pods.ok()) {
    fuzz::CheckErrorNamesSource(pods.status(), source);
    return 0;
  }
  FUZZ_CHECK(!pods->empty(), "an empty pod list accepted");
  for (const TracePod& p : *pods) {
    const std::string where = "pod \"" + p.name + "\" (line " + std::to_string(p.line) + ")";
    FUZZ_CHECK(!p.name.empty(), "a pod without a name");
    FUZZ_CHECK(p.line >= 2, where + ": a row before the header");
    FUZZ_CHECK(p.cpu_milli >= 0 && p.memory_mib >= 0, where + ": negative amounts");
    FUZZ_CHECK(p.num_gpu >= 0 && p.num_gpu <= kMaxGpusPerNode,
               where + ": " + std::to_string(p.num_gpu) + " GPUs");
    if (p.num_gpu == 0) {
      FUZZ_CHECK(p.gpu_milli == 0, where + ": a GPU share without GPUs");
    } else {
      FUZZ_CHECK(p.gpu_milli >= 1 && p.gpu_milli <= 1000,
                 where + ": GPU share " + std::to_string(p.gpu_milli));
      FUZZ_CHECK(p.num_gpu == 1 || p.gpu_milli == 1000, where + ": shares of several GPUs");
    }
    if (p.has_times) {
      FUZZ_CHECK(p.creation_time >= 0 && p.scheduled_time >= 0 && p.deletion_time >= 0,
                 where + ": negative times");
      FUZZ_CHECK(p.deletion_time == 0 || p.deletion_time >= p.creation_time,
                 where + ": deleted before it was created");
    }
  }
  std::vector<SimJob> jobs = JobsFromPods(*pods);
  FUZZ_CHECK(jobs.size() == pods->size(),
             std::to_string(pods->size()) + " pods make " + std::to_string(jobs.size()) + " jobs");
  return 0;
}
