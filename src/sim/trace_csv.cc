#include "sim/trace_csv.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "model/input_file.h"
#include "model/limits.h"
#include "sim/csv_cursor.h"

namespace gantry {
namespace {

using csv::Cursor;
using csv::NameProblem;
using csv::Range;
using csv::SeenNames;
using csv::Shown;
using csv::WithoutByteOrderMark;

constexpr int64_t kMaxMilli = int64_t{1} << 40;
// The most MiB whose bytes still fit in int64 milli-units (8 PiB).
constexpr int64_t kMaxMemoryMiB = INT64_MAX / (int64_t{1024} * 1024 * 1000);

// The rules tying a pod's GPU count, share and models together: the problem and the
// column it belongs to (4: gpu_milli, 5: gpu_spec), or nullopt.
std::optional<std::pair<size_t, std::string>> PodGpuProblem(int64_t num_gpu, int64_t gpu_milli,
                                                            bool has_models) {
  if (num_gpu > 1 && gpu_milli != kGpuMilliWhole) {
    return std::make_pair(size_t{4}, "gpu_milli: a pod with " + std::to_string(num_gpu) +
                                         " GPUs must take whole GPUs (1000), got " +
                                         std::to_string(gpu_milli));
  }
  if (num_gpu >= 1 && gpu_milli == 0) {
    return std::make_pair(size_t{4},
                          std::string("gpu_milli: a pod with GPUs needs a share above 0"));
  }
  if (num_gpu == 0 && gpu_milli != 0) {
    return std::make_pair(
        size_t{4}, "gpu_milli: a pod without GPUs must have 0, got " + std::to_string(gpu_milli));
  }
  if (num_gpu == 0 && has_models) {
    return std::make_pair(size_t{5},
                          std::string("gpu_spec: a pod without GPUs cannot name GPU models"));
  }
  return std::nullopt;
}

std::string Joined(const std::vector<std::string>& names, const char* separator) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : separator) + n;
  return joined;
}

// The first line is `want`. `what` names the format, for the messages.
Status CheckHeader(const Cursor& csv, const std::vector<std::string>& want,
                   const std::string& what) {
  GANTRY_RETURN_IF_ERROR(csv.CheckUnquoted());
  const std::string header = "\"" + Joined(want, ",") + "\"";
  if (csv.size() != want.size()) {
    return csv.Error(0,
                     "expected the header " + header + " (" + what + "), got " + Shown(csv.text()));
  }
  // A first line of data: the second column of every format is a number.
  int64_t number = 0;
  auto [end, ec] =
      std::from_chars(csv.cell(1).data(), csv.cell(1).data() + csv.cell(1).size(), number);
  if (ec == std::errc() && end == csv.cell(1).data() + csv.cell(1).size() &&
      csv.cell(0) != want[0]) {
    return csv.Error(0, "the header is missing: line 1 of " + what + " must be " + header +
                            ", got " + Shown(csv.text()));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (csv.cell(i) != want[i]) {
      return csv.Error(i, "expected column \"" + want[i] + "\", got " + Shown(csv.cell(i)) + " (" +
                              what + " has the header " + header + ")");
    }
  }
  return Status::Ok();
}

const std::vector<std::string> kNodeHeader = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
const std::vector<std::string> kLongPodHeader = {
    "name", "cpu_milli", "memory_mib",    "num_gpu",       "gpu_milli",     "gpu_spec",
    "qos",  "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
const std::vector<std::string> kShortPodHeader = {"name", "cpu_milli", "memory_mib", "num_gpu",
                                                  "gpu_milli"};
const std::vector<std::string> kRequiredJobColumns = {"submit_time", "duration", "gpus_per_pod",
                                                      "cpu", "memory"};
const std::vector<std::string> kJobColumns = {
    "submit_time", "duration", "pods", "gpus_per_pod", "gpu_fraction", "cpu",
    "memory",      "queue",    "name", "priority",     "min_member",   "gpu_model"};

// "source:line:1: more than 100000 nodes (the limit of 100000 nodes in a cluster)".
Status TooManyRows(const std::string& source, int32_t line, const char* noun, int64_t limit,
                   const char* what) {
  return Status::Invalid(source + ":" + std::to_string(line) + ":1: more than " +
                         std::to_string(limit) + " " + noun + " (the limit of " +
                         std::to_string(limit) + " " + what + ")");
}

}  // namespace


Result<std::vector<TraceNode>> ParseNodeCsv(const std::string& text, const std::string& source) {
  Cursor csv(text, source);
  if (!csv.Next()) return Status::Invalid(source + ": the file is empty");
  GANTRY_RETURN_IF_ERROR(CheckHeader(csv, kNodeHeader, "an openb node list"));
  const csv::RowCount rows = csv::CountRows(text, kMaxNodes);
  if (rows.line_past_limit > 0) {
    return TooManyRows(source, rows.line_past_limit, "nodes", kMaxNodes, "nodes in a cluster");
  }
  std::vector<TraceNode> nodes;
  nodes.reserve(static_cast<size_t>(rows.rows));
  SeenNames seen;
  seen.Reserve(static_cast<size_t>(rows.rows));
  while (csv.Next()) {
    GANTRY_RETURN_IF_ERROR(csv.CheckWidth(kNodeHeader.size()));
    TraceNode n;
    n.line = csv.line();
    if (csv.cell(0).empty()) return csv.Error(0, "sn: empty node name");
    GANTRY_RETURN_IF_ERROR(csv.Name(0, "sn", &n.name));
    GANTRY_RETURN_IF_ERROR(seen.Add(csv, "sn", "node", csv.cell(0)));
    int64_t gpus = 0;
    GANTRY_RETURN_IF_ERROR(csv.Int(1, "cpu_milli", 0, kMaxMilli, &n.cpu_milli));
    GANTRY_RETURN_IF_ERROR(csv.Int(2, "memory_mib", 0, kMaxMemoryMiB, &n.memory_mib));
    GANTRY_RETURN_IF_ERROR(csv.Int(3, "gpu", 0, kMaxGpusPerNode, &gpus));
    n.gpus = static_cast<int32_t>(gpus);
    GANTRY_RETURN_IF_ERROR(csv.Name(4, "model", &n.model));
    if (n.gpus > 0 && n.model.empty()) return csv.Error(4, "model: a node with GPUs needs a model");
    if (n.gpus == 0 && !n.model.empty()) {
      return csv.Error(4,
                       "model: a node without GPUs cannot have a GPU model, got " + Shown(n.model));
    }
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return Status::Invalid(source + ": no nodes");
  return nodes;
}

Result<std::vector<TracePod>> ParsePodCsv(const std::string& text, const std::string& source) {
  Cursor csv(text, source);
  if (!csv.Next()) return Status::Invalid(source + ": the file is empty");
  const bool is_long = csv.size() == kLongPodHeader.size();
  GANTRY_RETURN_IF_ERROR(CheckHeader(csv, is_long ? kLongPodHeader : kShortPodHeader,
                                     is_long ? "an openb pod list" : "a 5-column openb pod list"));
  const size_t width = is_long ? kLongPodHeader.size() : kShortPodHeader.size();
  const csv::RowCount rows = csv::CountRows(text, kMaxTasks);
  if (rows.line_past_limit > 0) {
    return TooManyRows(source, rows.line_past_limit, "pods", kMaxTasks, "tasks in a workload");
  }
  std::vector<TracePod> pods;
  pods.reserve(static_cast<size_t>(rows.rows));
  SeenNames seen;
  seen.Reserve(static_cast<size_t>(rows.rows));
  while (csv.Next()) {
    GANTRY_RETURN_IF_ERROR(csv.CheckWidth(width));
    TracePod p;
    p.line = csv.line();
    if (csv.cell(0).empty()) return csv.Error(0, "name: empty pod name");
    GANTRY_RETURN_IF_ERROR(csv.Name(0, "name", &p.name));
    GANTRY_RETURN_IF_ERROR(seen.Add(csv, "name", "pod", csv.cell(0)));
    int64_t num_gpu = 0, gpu_milli = 0;
    GANTRY_RETURN_IF_ERROR(csv.Int(1, "cpu_milli", 0, kMaxMilli, &p.cpu_milli));
    GANTRY_RETURN_IF_ERROR(csv.Int(2, "memory_mib", 0, kMaxMemoryMiB, &p.memory_mib));
    GANTRY_RETURN_IF_ERROR(csv.Int(3, "num_gpu", 0, kMaxGpusPerNode, &num_gpu));
    GANTRY_RETURN_IF_ERROR(csv.Int(4, "gpu_milli", 0, kGpuMilliWhole, &gpu_milli));
    p.num_gpu = static_cast<int32_t>(num_gpu);
    p.gpu_milli = static_cast<int32_t>(gpu_milli);
    if (is_long) GANTRY_RETURN_IF_ERROR(csv.Models(5, "gpu_spec", &p.gpu_spec));
    if (auto problem = PodGpuProblem(num_gpu, gpu_milli, !p.gpu_spec.empty())) {
      return csv.Error(
          problem->first,
          problem->second + (problem->first == 5 ? ", got " + Shown(csv.cell(5)) : ""));
    }
    if (is_long) {
      GANTRY_RETURN_IF_ERROR(csv.Name(6, "qos", &p.qos));
      GANTRY_RETURN_IF_ERROR(csv.Name(7, "pod_phase", &p.phase));
      p.has_times = true;
      GANTRY_RETURN_IF_ERROR(csv.Int(8, "creation_time", 0, kMaxTraceSeconds, &p.creation_time));
      // Empty: never deleted, never scheduled.
      if (!csv.cell(9).empty()) {
        GANTRY_RETURN_IF_ERROR(csv.Int(9, "deletion_time", 0, kMaxTraceSeconds, &p.deletion_time));
      }
      if (!csv.cell(10).empty()) {
        GANTRY_RETURN_IF_ERROR(
            csv.Int(10, "scheduled_time", 0, kMaxTraceSeconds, &p.scheduled_time));
      }
      if (p.deletion_time != 0 && p.deletion_time < p.creation_time) {
        return csv.Error(9, "deletion_time: " + std::to_string(p.deletion_time) +
                                " is before creation_time " + std::to_string(p.creation_time));
      }
    }
    pods.push_back(std::move(p));
  }
  if (pods.empty()) return Status::Invalid(source + ": no pods (an empty workload)");
  return pods;
}

Result<std::vector<TraceJob>> ParseJobCsv(const std::string& text, const std::string& source) {
  Cursor csv(text, source);
  if (!csv.Next()) return Status::Invalid(source + ": the file is empty");
  GANTRY_RETURN_IF_ERROR(csv.CheckUnquoted());
  const std::string known = Joined(kJobColumns, ", ");
  if (csv.size() > kJobColumns.size()) {
    return csv.Error(0, "the header has " + std::to_string(csv.size()) +
                            " columns, more than a job CSV has (" + known + ")");
  }
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < csv.size(); ++i) {
    std::string name(csv.cell(i));
    if (std::find(kJobColumns.begin(), kJobColumns.end(), name) == kJobColumns.end()) {
      return csv.Error(i,
                       "unknown column " + Shown(name) + " (known: " + known +
                           "; a job CSV's first line is a header naming its columns, and an openb "
                           "pod list's starts \"" +
                           Joined(kShortPodHeader, ",") + "\")");
    }
    if (!column.emplace(name, i).second)
      return csv.Error(i, "column \"" + name + "\" appears twice");
  }
  for (const auto& r : kRequiredJobColumns) {
    if (!column.count(r)) return csv.Error(0, "missing the required column \"" + r + "\"");
  }
  // Every job has a pod: more rows than kMaxTasks are refused before they are parsed.
  const csv::RowCount rows = csv::CountRows(text, kMaxTasks);
  if (rows.line_past_limit > 0) {
    return TooManyRows(source, rows.line_past_limit, "jobs", kMaxTasks, "tasks in a workload");
  }
  const size_t width = csv.size();
  std::vector<TraceJob> jobs;
  jobs.reserve(static_cast<size_t>(rows.rows));
  int64_t total_pods = 0;
  while (csv.Next()) {
    GANTRY_RETURN_IF_ERROR(csv.CheckWidth(width));
    TraceJob j;
    j.line = csv.line();
    auto has = [&](const char* c) { return column.count(c) > 0; };
    auto at = [&](const char* c) { return column.at(c); };
    int64_t v = 0;
    GANTRY_RETURN_IF_ERROR(
        csv.Int(at("submit_time"), "submit_time", 0, kMaxTraceSeconds, &j.submit_time));
    GANTRY_RETURN_IF_ERROR(csv.Int(at("duration"), "duration", 0, kMaxTraceSeconds, &j.duration));
    if (has("pods")) {
      GANTRY_RETURN_IF_ERROR(csv.Int(at("pods"), "pods", 1, kMaxTasksPerJob, &v));
      j.pods = static_cast<int32_t>(v);
    }
    if (total_pods + j.pods > kMaxTasks) {
      const size_t c = has("pods") ? at("pods") : 0;
      return csv.Error(c, "pods: the jobs up to this row have " +
                              std::to_string(total_pods + j.pods) + " pods, above the limit of " +
                              std::to_string(kMaxTasks) + " tasks in a workload");
    }
    total_pods += j.pods;
    j.min_member = j.pods;
    if (has("min_member")) {
      GANTRY_RETURN_IF_ERROR(csv.Int(at("min_member"), "min_member", 1, j.pods, &v));
      j.min_member = static_cast<int32_t>(v);
    }
    GANTRY_RETURN_IF_ERROR(csv.Int(at("gpus_per_pod"), "gpus_per_pod", 0, kMaxGpusPerNode, &v));
    j.gpus_per_pod = static_cast<int32_t>(v);
    if (has("gpu_fraction") && !csv.cell(at("gpu_fraction")).empty()) {
      // Exact: a share finer than a thousandth is an error, not rounded up to 0.001.
      auto q = ParseQuantityExact(csv.cell(at("gpu_fraction")));
      if (!q.ok()) return csv.Error(at("gpu_fraction"), "gpu_fraction: " + q.status().message());
      if (*q < 0 || *q >= kMilliPerUnit) {
        return csv.Error(at("gpu_fraction"), "gpu_fraction: must be at least 0 and below 1, got " +
                                                 Shown(csv.cell(at("gpu_fraction"))));
      }
      if (*q > 0 && j.gpus_per_pod > 0) {
        return csv.Error(at("gpu_fraction"),
                         "gpu_fraction: give either whole GPUs or a fraction, not both");
      }
      j.gpu_milli = static_cast<int32_t>(*q);
    }
    for (const char* c : {"cpu", "memory"}) {
      auto q = ParseQuantity(csv.cell(at(c)));
      if (!q.ok()) return csv.Error(at(c), std::string(c) + ": " + q.status().message());
      if (*q < 0)
        return csv.Error(at(c),
                         std::string(c) + ": must not be negative, got " + Shown(csv.cell(at(c))));
      (std::string(c) == "cpu" ? j.cpu : j.memory) = *q;
    }
    if (has("queue") && !csv.cell(at("queue")).empty())
      GANTRY_RETURN_IF_ERROR(csv.Name(at("queue"), "queue", &j.queue));
    if (has("name")) GANTRY_RETURN_IF_ERROR(csv.Name(at("name"), "name", &j.name));
    if (j.name.empty()) j.name = "job-" + std::to_string(jobs.size());
    if (has("priority") && !csv.cell(at("priority")).empty()) {
      GANTRY_RETURN_IF_ERROR(csv.Int(at("priority"), "priority", INT32_MIN, INT32_MAX, &v));
      j.priority = static_cast<int32_t>(v);
    }
    if (has("gpu_model")) {
      GANTRY_RETURN_IF_ERROR(csv.Models(at("gpu_model"), "gpu_model", &j.gpu_models));
      if (!j.gpu_models.empty() && j.gpus_per_pod == 0 && j.gpu_milli == 0) {
        return csv.Error(at("gpu_model"),
                         "gpu_model: a job without GPUs cannot name GPU models, got " +
                             Shown(csv.cell(at("gpu_model"))));
      }
    }
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) return Status::Invalid(source + ": no jobs (an empty workload)");
  return jobs;
}

Result<std::vector<TraceNode>> ReadNodeCsv(const std::string& path) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParseNodeCsv(*text, path);
}

Result<std::vector<TracePod>> ReadPodCsv(const std::string& path) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParsePodCsv(*text, path);
}

Result<std::vector<TraceJob>> ReadJobCsv(const std::string& path) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParseJobCsv(*text, path);
}

Result<WorkloadCsv> ParseWorkloadCsv(const std::string& text, const std::string& source) {
  Cursor csv(text, source);
  bool pod_list = false;
  if (csv.Next()) {
    // Split by hand: a header of more than kMaxCells columns is not kept by the cursor.
    std::string_view header = csv.text();
    size_t start = 0;
    while (start <= header.size() && !pod_list) {
      size_t comma = std::min(header.find(',', start), header.size());
      pod_list = header.substr(start, comma - start) == "cpu_milli";
      start = comma + 1;
    }
  }
  WorkloadCsv workload;
  if (pod_list) {
    auto pods = ParsePodCsv(text, source);
    if (!pods.ok()) return pods.status();
    workload.pods = std::move(pods).value();
  } else {
    auto jobs = ParseJobCsv(text, source);
    if (!jobs.ok()) return jobs.status();
    workload.jobs = std::move(jobs).value();
  }
  return workload;
}

Result<WorkloadCsv> ReadWorkloadCsv(const std::string& path) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParseWorkloadCsv(*text, path);
}

bool LooksLikeCsv(std::string_view text) {
  text = WithoutByteOrderMark(text);
  while (!text.empty()) {
    size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;  // blank
    line.remove_prefix(first);
    if (std::string_view("#%-{[").find(line.front()) != std::string_view::npos) return false;
    return line.find(':') == std::string_view::npos && line.find(',') != std::string_view::npos;
  }
  return false;
}

Status CheckTracePod(const TracePod& pod) {
  const std::string where = "pod \"" +
                            (pod.name.size() > 64 ? pod.name.substr(0, 64) + "..." : pod.name) +
                            "\"" + (pod.line > 0 ? " (line " + std::to_string(pod.line) + ")" : "");
  auto fail = [&](const std::string& what) { return Status::Invalid(where + ": " + what); };
  auto range = [&](const char* field, int64_t v, int64_t min, int64_t max) -> Status {
    if (v >= min && v <= max) return Status::Ok();
    return fail(std::string(field) + " " + std::to_string(v) + " is out of range " +
                Range(min, max));
  };
  if (pod.name.empty()) return fail("empty pod name");
  if (auto problem = NameProblem(pod.name)) return fail("name: " + *problem);
  GANTRY_RETURN_IF_ERROR(range("cpu_milli", pod.cpu_milli, 0, kMaxMilli));
  GANTRY_RETURN_IF_ERROR(range("memory_mib", pod.memory_mib, 0, kMaxMemoryMiB));
  GANTRY_RETURN_IF_ERROR(range("num_gpu", pod.num_gpu, 0, kMaxGpusPerNode));
  GANTRY_RETURN_IF_ERROR(range("gpu_milli", pod.gpu_milli, 0, kGpuMilliWhole));
  for (const std::string& model : pod.gpu_spec) {
    if (model.empty()) return fail("gpu_spec: an empty GPU model");
    if (auto problem = NameProblem(model)) return fail("gpu_spec: " + *problem);
  }
  if (auto problem = PodGpuProblem(pod.num_gpu, pod.gpu_milli, !pod.gpu_spec.empty())) {
    return fail(problem->second);
  }
  if (pod.has_times) {
    GANTRY_RETURN_IF_ERROR(range("creation_time", pod.creation_time, 0, kMaxTraceSeconds));
    GANTRY_RETURN_IF_ERROR(range("deletion_time", pod.deletion_time, 0, kMaxTraceSeconds));
    if (pod.deletion_time != 0 && pod.deletion_time < pod.creation_time) {
      return fail("deletion_time " + std::to_string(pod.deletion_time) +
                  " is before creation_time " + std::to_string(pod.creation_time));
    }
  }
  return Status::Ok();
}

Status AddTraceNodes(const std::vector<TraceNode>& nodes, ClusterState* cluster,
                     const std::string& source) {
  if (static_cast<int64_t>(cluster->nodes().size() + nodes.size()) > kMaxNodes) {
    return Status::Invalid((source.empty() ? "" : source + ": ") + std::to_string(nodes.size()) +
                           " nodes make more than the limit of " + std::to_string(kMaxNodes) +
                           " nodes in a cluster");
  }
  for (const TraceNode& t : nodes) {
    std::string where = source;
    if (t.line > 0) where += (where.empty() ? "line " : ":") + std::to_string(t.line);
    auto fail = [&](const std::string& what) {
      const std::string name = t.name.size() > 64 ? t.name.substr(0, 64) + "..." : t.name;
      return Status::Invalid((where.empty() ? "" : where + ": ") + "node \"" + name +
                             "\": " + what);
    };
    auto range = [&](const char* field, int64_t v, int64_t min, int64_t max) -> Status {
      if (v >= min && v <= max) return Status::Ok();
      return fail(std::string(field) + " " + std::to_string(v) + " is out of range " +
                  Range(min, max));
    };
    if (t.name.empty()) return fail("empty node name");
    if (auto problem = NameProblem(t.name)) return fail(*problem);
    GANTRY_RETURN_IF_ERROR(range("cpu_milli", t.cpu_milli, 0, kMaxMilli));
    GANTRY_RETURN_IF_ERROR(range("memory_mib", t.memory_mib, 0, kMaxMemoryMiB));
    GANTRY_RETURN_IF_ERROR(range("gpus", t.gpus, 0, kMaxGpusPerNode));
    if (t.gpus > 0 && t.model.empty()) return fail("a node with GPUs needs a model");
    if (t.gpus == 0 && !t.model.empty()) return fail("a node without GPUs cannot have a GPU model");
    if (auto problem = NameProblem(t.model)) return fail("model: " + *problem);

    Node node;
    node.name = t.name;
    node.allocatable.Set(kCpu, t.cpu_milli);
    node.allocatable.Set(kMemory, t.memory_mib * 1024 * 1024 * kMilliPerUnit);
    if (t.gpus > 0) {
      GpuModelId model = GpuModels().Intern(t.model);
      node.labels.Set("gantry.dev/gpu-model", t.model);
      for (int32_t g = 0; g < t.gpus; ++g) node.gpus.push_back(GpuDevice{model, 0, 0, 0, 0, 0});
    }
    auto added = cluster->AddNode(std::move(node));
    if (!added.ok()) return where.empty() ? added.status() : added.status().WithPrefix(where);
  }
  return Status::Ok();
}

}  // namespace gantry
