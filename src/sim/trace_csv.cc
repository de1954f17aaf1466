#include "sim/trace_csv.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

namespace gantry {
namespace {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open the file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A CSV without quoting (the trace formats have none): lines of comma-separated cells.
class CsvCursor {
 public:
  CsvCursor(const std::string& text, std::string source) : text_(text), source_(std::move(source)) {}

  // Advances to the next non-empty line; false at the end.
  bool Next() {
    while (pos_ < text_.size() || (pos_ == text_.size() && !at_end_)) {
      if (pos_ >= text_.size()) {
        at_end_ = true;
        return false;
      }
      size_t end = text_.find('\n', pos_);
      if (end == std::string::npos) end = text_.size();
      std::string_view line(text_.data() + pos_, end - pos_);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      pos_ = end + 1;
      ++line_no_;
      if (line.empty()) continue;
      Split(line);
      return true;
    }
    return false;
  }

  int32_t line() const { return line_no_; }
  size_t size() const { return cells_.size(); }
  std::string_view cell(size_t i) const { return cells_[i]; }

  Status Error(size_t column, const std::string& what) const {
    return Status::Invalid(source_ + ":" + std::to_string(line_no_) + ":" +
                           std::to_string(column + 1) + ": " + what);
  }
  // Column `i` (0-based) named `name` as an integer in [min, max].
  Status Int(size_t i, const std::string& name, int64_t min, int64_t max, int64_t* out) const {
    std::string_view s = cells_[i];
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      return Error(i, name + ": expected an integer, got \"" + std::string(s) + "\"");
    }
    if (v < min || v > max) {
      return Error(i, name + ": " + std::string(s) + " is out of range [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]");
    }
    *out = v;
    return Status::Ok();
  }
  const std::string& source() const { return source_; }

 private:
  void Split(std::string_view line) {
    cells_.clear();
    size_t start = 0;
    while (true) {
      size_t comma = line.find(',', start);
      if (comma == std::string_view::npos) {
        cells_.push_back(line.substr(start));
        break;
      }
      cells_.push_back(line.substr(start, comma - start));
      start = comma + 1;
    }
  }

  const std::string& text_;
  std::string source_;
  size_t pos_ = 0;
  bool at_end_ = false;
  int32_t line_no_ = 0;
  std::vector<std::string_view> cells_;
};

std::vector<std::string> SplitBar(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size() && !s.empty()) {
    size_t bar = s.find('|', start);
    if (bar == std::string_view::npos) bar = s.size();
    if (bar > start) out.emplace_back(s.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

Status CheckHeader(const CsvCursor& csv, const std::vector<std::string>& want) {
  if (csv.size() != want.size()) {
    std::string joined;
    for (const auto& w : want) joined += (joined.empty() ? "" : ",") + w;
    return csv.Error(0, "expected the header \"" + joined + "\"");
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (csv.cell(i) != want[i]) {
      return csv.Error(i, "expected column \"" + want[i] + "\", got \"" + std::string(csv.cell(i)) + "\"");
    }
  }
  return Status::Ok();
}

constexpr int64_t kMaxMilli = int64_t{1} << 40;
// The most MiB whose bytes still fit in int64 milli-units (8 PiB).
constexpr int64_t kMaxMemoryMiB = INT64_MAX / (int64_t{1024} * 1024 * 1000);

}  // namespace

Result<std::vector<TraceNode>> ParseNodeCsv(const std::string& text, const std::string& source) {
  CsvCursor csv(text, source);
  if (!csv.Next()) return Status::Invalid(source + ": the file is empty");
  GANTRY_RETURN_IF_ERROR(CheckHeader(csv, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}));
  std::vector<TraceNode> nodes;
  while (csv.Next()) {
    if (csv.size() != 5) {
      return csv.Error(0, "expected 5 columns, got " + std::to_string(csv.size()));
    }
    TraceNode n;
    n.name = std::string(csv.cell(0));
    if (n.name.empty()) return csv.Error(0, "sn: empty node name");
    int64_t gpus = 0;
    GANTRY_RETURN_IF_ERROR(csv.Int(1, "cpu_milli", 0, kMaxMilli, &n.cpu_milli));
    GANTRY_RETURN_IF_ERROR(csv.Int(2, "memory_mib", 0, kMaxMemoryMiB, &n.memory_mib));
    GANTRY_RETURN_IF_ERROR(csv.Int(3, "gpu", 0, 64, &gpus));
    n.gpus = static_cast<int32_t>(gpus);
    n.model = std::string(csv.cell(4));
    if (n.gpus > 0 && n.model.empty()) return csv.Error(4, "model: a node with GPUs needs a model");
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return Status::Invalid(source + ": no nodes");
  return nodes;
}

Result<std::vector<TracePod>> ParsePodCsv(const std::string& text, const std::string& source) {
  CsvCursor csv(text, source);
  if (!csv.Next()) return Status::Invalid(source + ": the file is empty");
  const std::vector<std::string> long_header = {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
                                                "gpu_spec", "qos", "pod_phase", "creation_time",
                                                "deletion_time", "scheduled_time"};
  const std::vector<std::string> short_header = {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"};
  const bool is_long = csv.size() == long_header.size();
  GANTRY_RETURN_IF_ERROR(CheckHeader(csv, is_long ? long_header : short_header));
  std::vector<TracePod> pods;
  while (csv.Next()) {
    const size_t want = is_long ? 11 : 5;
    if (csv.size() != want) {
      return csv.Error(0, "expected " + std::to_string(want) + " columns, got " + std::to_string(csv.size()));
    }
    TracePod p;
    p.line = csv.line();
    p.name = std::string(csv.cell(0));
    if (p.name.empty()) return csv.Error(0, "name: empty pod name");
    int64_t num_gpu = 0, gpu_milli = 0;
    GANTRY_RETURN_IF_ERROR(csv.Int(1, "cpu_milli", 0, kMaxMilli, &p.cpu_milli));
    GANTRY_RETURN_IF_ERROR(csv.Int(2, "memory_mib", 0, kMaxMemoryMiB, &p.memory_mib));
    GANTRY_RETURN_IF_ERROR(csv.Int(3, "num_gpu", 0, 64, &num_gpu));
    GANTRY_RETURN_IF_ERROR(csv.Int(4, "gpu_milli", 0, 1000, &gpu_milli));
    p.num_gpu = static_cast<int32_t>(num_gpu);
    p.gpu_milli = static_cast<int32_t>(gpu_milli);
    if (p.num_gpu > 1 && p.gpu_milli != 1000) {
      return csv.Error(4, "gpu_milli: a pod with " + std::to_string(p.num_gpu) +
                              " GPUs must take whole GPUs (1000), got " + std::to_string(p.gpu_milli));
    }
    if (p.num_gpu >= 1 && p.gpu_milli == 0) {
      return csv.Error(4, "gpu_milli: a pod with GPUs needs a share above 0");
    }
    if (p.num_gpu == 0 && p.gpu_milli != 0) {
      return csv.Error(4, "gpu_milli: a pod without GPUs must have 0, got " + std::to_string(p.gpu_milli));
    }
    if (is_long) {
      p.gpu_spec = SplitBar(csv.cell(5));
      p.qos = std::string(csv.cell(6));
      p.phase = std::string(csv.cell(7));
      p.has_times = true;
      GANTRY_RETURN_IF_ERROR(csv.Int(8, "creation_time", 0, INT64_MAX / 4, &p.creation_time));
      if (csv.cell(9).empty()) {
        p.deletion_time = 0;
      } else {
        GANTRY_RETURN_IF_ERROR(csv.Int(9, "deletion_time", 0, INT64_MAX / 4, &p.deletion_time));
      }
      if (csv.cell(10).empty()) {
        p.scheduled_time = 0;
      } else {
        GANTRY_RETURN_IF_ERROR(csv.Int(10, "scheduled_time", 0, INT64_MAX / 4, &p.scheduled_time));
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
  CsvCursor csv(text, source);
  if (!csv.Next()) return Status::Invalid(source + ": the file is empty");
  static const std::vector<std::string> kRequired = {"submit_time", "duration", "gpus_per_pod", "cpu", "memory"};
  static const std::vector<std::string> kKnown = {"submit_time", "duration", "pods", "gpus_per_pod",
                                                  "gpu_fraction", "cpu", "memory", "queue", "name",
                                                  "priority", "min_member", "gpu_model"};
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < csv.size(); ++i) {
    std::string name(csv.cell(i));
    if (std::find(kKnown.begin(), kKnown.end(), name) == kKnown.end()) {
      std::string known;
      for (const auto& k : kKnown) known += (known.empty() ? "" : ", ") + k;
      return csv.Error(i, "unknown column \"" + name + "\" (known: " + known + ")");
    }
    if (!column.emplace(name, i).second) return csv.Error(i, "column \"" + name + "\" appears twice");
  }
  for (const auto& r : kRequired) {
    if (!column.count(r)) return csv.Error(0, "missing the required column \"" + r + "\"");
  }
  const size_t width = csv.size();
  std::vector<TraceJob> jobs;
  while (csv.Next()) {
    if (csv.size() != width) {
      return csv.Error(0, "expected " + std::to_string(width) + " columns, got " + std::to_string(csv.size()));
    }
    TraceJob j;
    j.line = csv.line();
    auto has = [&](const char* c) { return column.count(c) > 0; };
    auto at = [&](const char* c) { return column.at(c); };
    int64_t v = 0;
    GANTRY_RETURN_IF_ERROR(csv.Int(at("submit_time"), "submit_time", 0, INT64_MAX / 4, &j.submit_time));
    GANTRY_RETURN_IF_ERROR(csv.Int(at("duration"), "duration", 0, INT64_MAX / 4, &j.duration));
    if (has("pods")) {
      GANTRY_RETURN_IF_ERROR(csv.Int(at("pods"), "pods", 1, 100000, &v));
      j.pods = static_cast<int32_t>(v);
    }
    j.min_member = j.pods;
    if (has("min_member")) {
      GANTRY_RETURN_IF_ERROR(csv.Int(at("min_member"), "min_member", 1, j.pods, &v));
      j.min_member = static_cast<int32_t>(v);
    }
    GANTRY_RETURN_IF_ERROR(csv.Int(at("gpus_per_pod"), "gpus_per_pod", 0, 64, &v));
    j.gpus_per_pod = static_cast<int32_t>(v);
    if (has("gpu_fraction") && !csv.cell(at("gpu_fraction")).empty()) {
      auto q = ParseQuantity(csv.cell(at("gpu_fraction")));
      if (!q.ok()) return csv.Error(at("gpu_fraction"), "gpu_fraction: " + q.status().message());
      if (*q < 0 || *q >= kMilliPerUnit) {
        return csv.Error(at("gpu_fraction"), "gpu_fraction: must be at least 0 and below 1");
      }
      if (*q > 0 && j.gpus_per_pod > 0) {
        return csv.Error(at("gpu_fraction"), "gpu_fraction: give either whole GPUs or a fraction, not both");
      }
      j.gpu_milli = static_cast<int32_t>(*q);
    }
    for (const char* c : {"cpu", "memory"}) {
      auto q = ParseQuantity(csv.cell(at(c)));
      if (!q.ok()) return csv.Error(at(c), std::string(c) + ": " + q.status().message());
      if (*q < 0) return csv.Error(at(c), std::string(c) + ": must not be negative");
      (std::string(c) == "cpu" ? j.cpu : j.memory) = *q;
    }
    if (has("queue") && !csv.cell(at("queue")).empty()) j.queue = std::string(csv.cell(at("queue")));
    if (has("name")) j.name = std::string(csv.cell(at("name")));
    if (j.name.empty()) j.name = "job-" + std::to_string(jobs.size());
    if (has("priority") && !csv.cell(at("priority")).empty()) {
      GANTRY_RETURN_IF_ERROR(csv.Int(at("priority"), "priority", INT32_MIN, INT32_MAX, &v));
      j.priority = static_cast<int32_t>(v);
    }
    if (has("gpu_model")) j.gpu_models = SplitBar(csv.cell(at("gpu_model")));
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) return Status::Invalid(source + ": no jobs (an empty workload)");
  return jobs;
}

Result<std::vector<TraceNode>> ReadNodeCsv(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseNodeCsv(*text, path);
}

Result<std::vector<TracePod>> ReadPodCsv(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParsePodCsv(*text, path);
}

Result<std::vector<TraceJob>> ReadJobCsv(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseJobCsv(*text, path);
}

Status AddTraceNodes(const std::vector<TraceNode>& nodes, ClusterState* cluster) {
  for (const TraceNode& t : nodes) {
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
    if (!added.ok()) return added.status();
  }
  return Status::Ok();
}

}  // namespace gantry
