#include "sim/report_topology.h"

#include "sim/svg_chart.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

std::string NumberCell(const Json& row, const char* key, int decimals) {
  if (!row.contains(key) || !row.at(key).is_number()) return "<td>-</td>";
  return "<td>" + FormatFixed(row.at(key).get<double>(), decimals) + "</td>";
}

}  // namespace

std::string RenderTopologyHtml(const Json& summary) {
  if (!summary.is_object() || !summary.contains("runs") || !summary.at("runs").is_array())
    return "";
  std::string rows;
  for (const Json& run : summary.at("runs")) {
    if (!run.is_object() || !run.contains("gang_spans") || !run.at("gang_spans").is_array())
      continue;
    const std::string policy = run.contains("policy") && run.at("policy").is_string()
                                   ? run.at("policy").get<std::string>()
                                   : "";
    const std::string seed = run.contains("seed") ? run.at("seed").dump() : "";
    for (const Json& span : run.at("gang_spans")) {
      if (!span.is_object() || !span.contains("level") || !span.at("level").is_string() ||
          !span.contains("gangs") || !span.at("gangs").is_number() ||
          span.at("gangs").get<double>() <= 0) {
        continue;
      }
      rows += "<tr><td>" + HtmlEscape(policy) + "</td><td>" + HtmlEscape(seed) + "</td><td>" +
              HtmlEscape(span.at("level").get<std::string>()) + "</td>" +
              NumberCell(span, "gangs", 0) + NumberCell(span, "mean_domains", 2) +
              NumberCell(span, "max_domains", 0) + NumberCell(span, "pct_in_one", 1) + "</tr>\n";
    }
  }
  if (rows.empty()) return "";
  return "<h2>Topology: domains per gang</h2>\n<p>Each gang (minMember &gt; 1) counted once, as "
         "it started: how many domains of each level its running tasks were in.</p>\n"
         "<table>\n<tr><th>policy</th><th>seed</th><th>level</th><th>gangs</th>"
         "<th>domains (mean)</th><th>max</th><th>inside one (%)</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace gantry
