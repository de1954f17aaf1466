// Readers of cluster and workload CSV files: the Alibaba "openb" node and pod lists
// (both the 11-column and the 5-column forms) and Gantry's generic job CSV.
//
// Every malformed row is an error naming the file, line and column and quoting the value
// (shortened when long); nothing is skipped. The rules, beyond each column's range:
// - The first line is the header. A UTF-8 byte-order mark before it, blank lines and CRLF
//   line ends are ignored. Cells are not quoted (the traces have none): a '"' is an error.
// - Names (nodes, pods, jobs, queues) and GPU models are at most kMaxNameLength bytes,
//   without control characters; node and pod names are unique in their file.
// - At most kMaxNodes nodes, kMaxTasks pods (in a job CSV: pods of all jobs), and
//   kMaxTasksPerJob pods per job; GPU counts at most kMaxGpusPerNode; times and durations
//   at most kMaxTraceSeconds; a GPU share is exact to a thousandth; a list of GPU models
//   ("A|B") has no empty entry, and only nodes with GPUs and rows that ask for GPUs name
//   models.
// - A file is at most kMaxInputFileBytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster.h"
#include "model/status.h"

namespace gantry {

// The latest time and the longest duration in a trace, in seconds (about 31,700 years):
// nothing real is later, and the replay's clock (times plus durations, chained over every
// task) stays far inside int64.
inline constexpr int64_t kMaxTraceSeconds = 1'000'000'000'000;

// One row of openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model.
struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;  // empty for CPU-only nodes
  int32_t line = 0;   // where it came from, for messages; 0: not from a file
};

// One row of openb_pod_list_*.csv. The 5-column form (multigpu*) has no gpu_spec, qos,
// phase or times: has_times is false then.
struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;              // share of each GPU; < 1000 only for one shared GPU
  std::vector<std::string> gpu_spec;  // allowed models; empty: any
  std::string qos;
  std::string phase;
  bool has_times = false;
  int64_t creation_time = 0;
  int64_t deletion_time = 0;
  int64_t scheduled_time = 0;
  int32_t line = 0;  // where it came from, for messages
};

// One row of the generic job CSV: a job of `pods` identical pods (see README.md for the
// columns: submit_time,duration,pods,gpus_per_pod,gpu_fraction,cpu,memory,queue, and
// optionally name,priority,min_member,gpu_model).
struct TraceJob {
  std::string name;
  int64_t submit_time = 0;  // seconds
  int64_t duration = 0;     // seconds; 0: runs until the end
  int32_t pods = 1;
  int32_t min_member = 1;
  int32_t gpus_per_pod = 0;
  int32_t gpu_milli = 0;  // a share of one GPU, when gpus_per_pod is 0
  Milli cpu = 0;
  Milli memory = 0;
  std::string queue = "default";
  int32_t priority = 0;
  std::vector<std::string> gpu_models;
  int32_t line = 0;
};

Result<std::vector<TraceNode>> ReadNodeCsv(const std::string& path);
Result<std::vector<TracePod>> ReadPodCsv(const std::string& path);
Result<std::vector<TraceJob>> ReadJobCsv(const std::string& path);
// The same from text; `source` names it in errors.
Result<std::vector<TraceNode>> ParseNodeCsv(const std::string& text, const std::string& source);
Result<std::vector<TracePod>> ParsePodCsv(const std::string& text, const std::string& source);
Result<std::vector<TraceJob>> ParseJobCsv(const std::string& text, const std::string& source);

// A workload file: an openb pod list when its header has a cpu_milli column, else a job
// CSV. Exactly one of the two is filled.
struct WorkloadCsv {
  std::vector<TracePod> pods;
  std::vector<TraceJob> jobs;
};
Result<WorkloadCsv> ReadWorkloadCsv(const std::string& path);
Result<WorkloadCsv> ParseWorkloadCsv(const std::string& text, const std::string& source);

// Whether `text` (a file's bytes) reads as CSV rather than YAML: its first non-blank line
// (after a byte-order mark) has a comma, no ':' and does not open a YAML comment,
// directive, document, sequence or flow collection.
bool LooksLikeCsv(std::string_view text);

// Checks one pod row's numbers as the reader does, for pods that come from elsewhere.
// Errors name the pod (and its line when it has one).
Status CheckTracePod(const TracePod& pod);

// Adds trace nodes to a cluster: cpu, memory (MiB), GPUs of the model with label
// gantry.dev/gpu-model. Checks what the reader checks (a node list's nodes pass) and the
// cluster's kMaxNodes. Errors name the node, and "source:line" when the node has a line.
Status AddTraceNodes(const std::vector<TraceNode>& nodes, ClusterState* cluster,
                     const std::string& source = "");

}  // namespace gantry
