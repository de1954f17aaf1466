#include "sim/report_datasets.h"

#include <cstdio>

#include "sim/svg_chart.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

Json StatsJson(const DatasetStats& d) {
  return Json{{"tasks", d.tasks},       {"reads", d.reads},    {"hits", d.hits},
              {"filling", d.filling},   {"misses", d.misses},  {"hit_pct", d.hit_pct()},
              {"warmup_s", d.warmup_s}, {"dropped", d.dropped}};
}

double SavedPct(const ReplayResult& r) {
  const auto without = static_cast<double>(r.datasets_without_locality.warmup_s);
  return without > 0 ? 100.0 * (without - static_cast<double>(r.datasets.warmup_s)) / without : 0;
}

std::string NumberCell(const Json& object, const char* key, int decimals) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number())
    return "<td>-</td>";
  return "<td>" + FormatFixed(object.at(key).get<double>(), decimals) + "</td>";
}

}  // namespace

Json DatasetsJson(const ReplayResult& r) {
  if (r.datasets.reads == 0) return nullptr;
  Json out = StatsJson(r.datasets);
  if (r.has_datasets_without_locality) {
    out["without_locality"] = StatsJson(r.datasets_without_locality);
    out["warmup_saved_s"] = r.datasets_without_locality.warmup_s - r.datasets.warmup_s;
    out["warmup_saved_pct"] = SavedPct(r);
  }
  return out;
}

std::string DatasetsLine(const std::string& policy, uint64_t seed, const ReplayResult& r) {
  const DatasetStats& d = r.datasets;
  if (d.reads == 0) return "";
  char line[512];
  std::snprintf(line, sizeof line,
                "datasets %s seed %llu: %lld task runs read data: %.1f%% hits (%lld filling, "
                "%lld misses), warm-up %lld s",
                policy.c_str(), static_cast<unsigned long long>(seed),
                static_cast<long long>(d.tasks), d.hit_pct(), static_cast<long long>(d.filling),
                static_cast<long long>(d.misses), static_cast<long long>(d.warmup_s));
  std::string text = line;
  if (r.has_datasets_without_locality) {
    const DatasetStats& w = r.datasets_without_locality;
    std::snprintf(line, sizeof line,
                  "; without datalocality %.1f%% hits, warm-up %lld s: locality saved %lld s "
                  "(%.1f%%)",
                  w.hit_pct(), static_cast<long long>(w.warmup_s),
                  static_cast<long long>(w.warmup_s - d.warmup_s), SavedPct(r));
    text += line;
  }
  return text + "\n";
}

std::string RenderDatasetsHtml(const Json& summary) {
  if (!summary.is_object() || !summary.contains("runs") || !summary.at("runs").is_array())
    return "";
  std::string rows;
  for (const Json& run : summary.at("runs")) {
    if (!run.is_object() || !run.contains("datasets") || !run.at("datasets").is_object()) continue;
    const Json& d = run.at("datasets");
    const std::string policy = run.contains("policy") && run.at("policy").is_string()
                                   ? run.at("policy").get<std::string>()
                                   : "";
    const std::string seed = run.contains("seed") ? run.at("seed").dump() : "";
    const Json none;
    const Json& w = d.contains("without_locality") ? d.at("without_locality") : none;
    rows += "<tr><td>" + HtmlEscape(policy) + "</td><td>" + HtmlEscape(seed) + "</td>" +
            NumberCell(d, "tasks", 0) + NumberCell(d, "hit_pct", 1) + NumberCell(d, "warmup_s", 0) +
            NumberCell(w, "hit_pct", 1) + NumberCell(w, "warmup_s", 0) +
            NumberCell(d, "warmup_saved_s", 0) + NumberCell(d, "warmup_saved_pct", 1) + "</tr>\n";
  }
  if (rows.empty()) return "";
  return "<h2>Dataset locality: warm-up paid and saved</h2>\n<p>A task placed where its data "
         "is not cached waits for it to be filled before its run starts (the simulator's "
         "cache model). Each run is repeated without the datalocality plugin; the warm-up it "
         "pays less this run's is the time locality saved.</p>\n"
         "<table>\n<tr><th>policy</th><th>seed</th><th>task runs reading data</th>"
         "<th>hits (%)</th><th>warm-up (s)</th><th>hits without locality (%)</th>"
         "<th>warm-up without locality (s)</th><th>saved (s)</th><th>saved (%)</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace gantry
