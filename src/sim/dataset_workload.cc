#include "sim/dataset_workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <set>

#include "model/datasets.h"
#include "model/limits.h"

namespace gantry {
namespace {

std::string Quoted(const std::string& value) {
  return "\"" + (value.size() > 64 ? value.substr(0, 64) + "..." : value) + "\"";
}

Result<int64_t> Integer(const std::string& key, const std::string& text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || end != text.data() + text.size() || ec != std::errc() || v < min || v > max) {
    return Status::Invalid("--datasets " + key + ": expected an integer in [" +
                           std::to_string(min) + ", " + std::to_string(max) + "], got " +
                           Quoted(text));
  }
  return v;
}

Result<int64_t> Size(const std::string& key, const std::string& text, int64_t min) {
  auto v = ParseDatasetSize(text);
  if (!v.ok()) return v.status().WithPrefix("--datasets " + key);
  if (*v < min) {
    return Status::Invalid("--datasets " + key + ": " + Quoted(text) + " is less than " +
                           std::to_string(min) + " bytes");
  }
  return *v;
}

}  // namespace

Result<DatasetWorkloadOptions> ParseDatasetWorkload(const std::string& text) {
  DatasetWorkloadOptions o;
  const std::string known = "count, zipf, share, size, bandwidth, cache, seed";
  std::set<std::string> given;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status::Invalid("--datasets: expected key=value (keys: " + known + "), got " +
                             Quoted(item));
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (!given.insert(key).second) return Status::Invalid("--datasets: " + key + " is given twice");
    if (key == "count") {
      auto v = Integer(key, value, 1, static_cast<int64_t>(kMaxKnownDatasets));
      if (!v.ok()) return v.status();
      o.count = *v;
    } else if (key == "zipf") {
      double v = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      // Written to refuse NaN: every comparison with it is false.
      if (value.empty() || end != value.data() + value.size() || ec != std::errc() ||
          !(v >= 0 && v <= 10)) {
        return Status::Invalid("--datasets zipf: expected a number in [0, 10], got " +
                               Quoted(value));
      }
      o.zipf = v;
    } else if (key == "share") {
      auto v = Integer(key + " (percent of jobs)", value, 0, 100);
      if (!v.ok()) return v.status();
      o.share_pct = *v;
    } else if (key == "size") {
      const size_t dash = value.find('-');
      auto lo = Size(key, value.substr(0, dash), 1);
      if (!lo.ok()) return lo.status();
      auto hi = dash == std::string::npos ? lo : Size(key, value.substr(dash + 1), 1);
      if (!hi.ok()) return hi.status();
      if (*hi < *lo) {
        return Status::Invalid("--datasets size: expected MIN-MAX with MIN <= MAX, got " +
                               Quoted(value));
      }
      o.min_bytes = *lo, o.max_bytes = *hi;
    } else if (key == "bandwidth") {
      auto v = Size(key + " (bytes per second)", value, 1);
      if (!v.ok()) return v.status();
      o.cache.bandwidth_bytes_per_s = *v;
    } else if (key == "cache") {
      auto v = Size(key + " (bytes per node)", value, 0);
      if (!v.ok()) return v.status();
      o.cache.capacity_bytes = *v;
    } else if (key == "seed") {
      auto v = Integer(key, value, 0, INT64_MAX);
      if (!v.ok()) return v.status();
      o.seed = static_cast<uint64_t>(*v);
    } else {
      return Status::Invalid("--datasets: unknown key " + Quoted(key) + " (known: " + known + ")");
    }
  }
  if (!given.count("count")) return Status::Invalid("--datasets: count= is required");
  return o;
}

Status AssignDatasets(const DatasetWorkloadOptions& o, std::vector<SimJob>* jobs,
                      ClusterState* cluster) {
  if (o.count < 1) return Status::Invalid("--datasets: count must be at least 1");
  std::mt19937_64 rng(o.seed ^ 0xda7a5e7ULL);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<DatasetInfo> table = cluster->datasets().all();
  std::vector<std::string> names;
  std::vector<double> cumulative;  // popularity, summed
  double total = 0;
  const double log_lo = std::log(static_cast<double>(o.min_bytes));
  const double log_hi = std::log(static_cast<double>(o.max_bytes));
  for (int64_t k = 0; k < o.count; ++k) {
    DatasetInfo info;
    info.name = "sim/ds-" + std::to_string(k);
    if (cluster->datasets().Find(info.name) != nullptr) {
      return Status::Invalid("--datasets: the cluster file describes " + info.name + " already");
    }
    const double size = std::exp(log_lo + (log_hi - log_lo) * unit(rng));
    info.size_bytes = std::clamp(static_cast<int64_t>(size), o.min_bytes, o.max_bytes);
    names.push_back(info.name);
    table.push_back(std::move(info));
    total += 1.0 / std::pow(static_cast<double>(k + 1), o.zipf);
    cumulative.push_back(total);
  }
  for (SimJob& job : *jobs) {
    const double reads = unit(rng), pick = unit(rng) * total;
    if (reads * 100 >= static_cast<double>(o.share_pct)) continue;
    auto it = std::upper_bound(cumulative.begin(), cumulative.end(), pick);
    const size_t k =
        std::min<size_t>(static_cast<size_t>(it - cumulative.begin()), names.size() - 1);
    job.spec.datasets = {names[k]};
  }
  return cluster->SetDatasets(std::move(table));
}

}  // namespace gantry
