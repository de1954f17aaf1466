// Readers of cluster and workload CSV files: the Alibaba "openb" node and pod lists
// (both the 11-column and the 5-column forms) and Gantry's generic job CSV.
//
// Every malformed row is an error naming the file, line and column; nothing is skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/status.h"

namespace gantry {

// One row of openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model.
struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;  // empty for CPU-only nodes
};

// One row of openb_pod_list_*.csv. The 5-column form (multigpu*) has no gpu_spec, qos,
// phase or times: has_times is false then.
struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;  // share of each GPU; < 1000 only for one shared GPU
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

// Adds trace nodes to a cluster: cpu, memory (MiB), GPUs of the model with label
// gantry.dev/gpu-model. Errors name the node.
Status AddTraceNodes(const std::vector<TraceNode>& nodes, ClusterState* cluster);

}  // namespace gantry
