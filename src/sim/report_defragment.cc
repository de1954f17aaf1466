#include "sim/report_defragment.h"

#include "sim/svg_chart.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

double NumberOr0(const Json& row, const char* key) {
  return row.contains(key) && row.at(key).is_number() ? row.at(key).get<double>() : 0;
}

std::string NumberCell(const Json& row, const char* key, int decimals) {
  if (!row.contains(key) || !row.at(key).is_number()) return "<td>-</td>";
  return "<td>" + FormatFixed(row.at(key).get<double>(), decimals) + "</td>";
}

}  // namespace

std::string RenderDefragmentHtml(const Json& summary) {
  if (!summary.is_object() || !summary.contains("runs") || !summary.at("runs").is_array())
    return "";
  std::string rows;
  for (const Json& run : summary.at("runs")) {
    if (!run.is_object()) continue;
    if (NumberOr0(run, "idle_unusable_gpu_hours") <= 0 && NumberOr0(run, "movable_tasks") <= 0 &&
        NumberOr0(run, "defragment_evictions") <= 0) {
      continue;
    }
    const std::string policy = run.contains("policy") && run.at("policy").is_string()
                                   ? run.at("policy").get<std::string>()
                                   : "";
    const std::string seed = run.contains("seed") ? run.at("seed").dump() : "";
    rows += "<tr><td>" + HtmlEscape(policy) + "</td><td>" + HtmlEscape(seed) + "</td>" +
            NumberCell(run, "idle_gpus_mean", 2) + NumberCell(run, "idle_unusable_gpus_mean", 2) +
            NumberCell(run, "idle_unusable_gpu_hours", 1) + NumberCell(run, "movable_tasks", 0) +
            NumberCell(run, "defragment_evictions", 0) + NumberCell(run, "work_lost_gpu_hours", 1) +
            "</tr>\n";
  }
  if (rows.empty()) return "";
  return "<h2>Defragmentation: idle GPUs that could not be used</h2>\n<p>Time-weighted means "
         "while jobs arrived (first session to last arrival): the GPUs idle, and those idle "
         "while a job needing whole GPUs waited that they would hold in total; and the latter "
         "over the whole run in GPU-hours. Defragment evictions move movable tasks to free a "
         "node; an evicted task starts over, and the work it had done is lost.</p>\n"
         "<table>\n<tr><th>policy</th><th>seed</th><th>idle GPUs</th>"
         "<th>idle, unusable</th><th>unusable (GPU-h)</th><th>movable tasks</th>"
         "<th>defragment evictions</th>"
         "<th>work lost (GPU-h)</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace gantry
