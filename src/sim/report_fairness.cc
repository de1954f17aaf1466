#include "sim/report_fairness.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/svg_chart.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

// The report shows the first runs only: each has two charts.
constexpr size_t kMaxRunsShown = 4;
// A queue's deserved share is drawn dashed in its share's colour (see ChartColour).
constexpr int kDashedStyle = 10;
constexpr size_t kMaxQueuesDrawn = 10;

std::optional<double> NumberOf(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const Json& v = j.at(key);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::optional<double> MeanOf(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  return NumberOf(j.at(key), "mean");
}

std::string StringOf(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_string()) return "";
  return j.at(key).get<std::string>();
}

std::string Cell(std::optional<double> v, int decimals) {
  return "<td>" + (v ? FormatFixed(*v, decimals) : std::string("-")) + "</td>";
}

// Points (t, series[i]) for the numbers of `values` that have a time.
std::vector<std::pair<double, double>> Points(const std::vector<double>& t, const Json& values) {
  std::vector<std::pair<double, double>> points;
  if (!values.is_array()) return points;
  for (size_t i = 0; i < values.size() && i < t.size(); ++i) {
    if (values[i].is_number()) points.emplace_back(t[i], values[i].get<double>());
  }
  return points;
}

std::string RunSection(const Json& run) {
  const Json& queues = run.at("queues");
  const std::string title = StringOf(run, "policy") + " seed " + run.value("seed", Json()).dump();
  std::string html = "<h3>" + HtmlEscape(title) + "</h3>\n<p>";
  const auto jain = NumberOf(run, "jain_mean"), steady = NumberOf(run, "jain_steady");
  html +=
      "Jain's index (share / deserved over the queues that deserve GPUs, time-weighted): " +
      (jain ? FormatFixed(*jain, 4) : "-") + ", steady state " +
      (steady ? FormatFixed(*steady, 4) : "-") +
      ". Evicted tasks: " + FormatFixed(NumberOf(run, "preempted_tasks").value_or(0), 0) +
      "; loops: " + FormatFixed(NumberOf(run, "eviction_loops").value_or(0), 0) +
      "; last eviction at t = " + FormatFixed(NumberOf(run, "last_eviction_t").value_or(-1), 0) +
      " s, last arrival at t = " + FormatFixed(NumberOf(run, "last_arrival_t").value_or(0), 0) +
      " s, last time two queues had work pending at t = " +
      FormatFixed(NumberOf(run, "last_contended_t").value_or(-1), 0) + " s.</p>\n";
  html +=
      "<div class=\"table-wrap\"><table><thead><tr><th>Queue</th><th>Parent</th><th>Share "
      "(%)</th><th>Deserved (%)</th><th>Steady share (%)</th><th>Steady deserved (%)</th>"
      "<th>Wait mean (s)</th><th>JCT mean (s)</th><th>Evicted</th><th>Evicted for it</th>"
      "</tr></thead><tbody>\n";
  for (const Json& q : queues) {
    html += "<tr><td>" + HtmlEscape(StringOf(q, "name")) + "</td><td>" +
            HtmlEscape(StringOf(q, "parent")) + "</td>" + Cell(NumberOf(q, "share_pct"), 2) +
            Cell(NumberOf(q, "deserved_pct"), 2) + Cell(NumberOf(q, "steady_share_pct"), 2) +
            Cell(NumberOf(q, "steady_deserved_pct"), 2) + Cell(MeanOf(q, "wait_s"), 0) +
            Cell(MeanOf(q, "jct_s"), 0) + Cell(NumberOf(q, "evicted"), 0) +
            Cell(NumberOf(q, "evicted_for"), 0) + "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  const Json* series = run.contains("queue_series") ? &run.at("queue_series") : nullptr;
  if (series == nullptr || !series->is_object() || !series->contains("t") ||
      !series->at("t").is_array()) {
    return html;
  }
  std::vector<double> t;
  for (const Json& v : series->at("t")) t.push_back(v.is_number() ? v.get<double>() : 0);
  std::vector<ChartSeries> shares;
  const Json& share = series->value("share_pct", Json::object());
  const Json& deserved = series->value("deserved_pct", Json::object());
  int style = 0;
  for (const Json& q : queues) {
    if (static_cast<size_t>(style) >= kMaxQueuesDrawn) break;
    const std::string name = StringOf(q, "name");
    if (share.is_object() && share.contains(name))
      shares.push_back({name + " share", Points(t, share.at(name)), style});
    if (deserved.is_object() && deserved.contains(name))
      shares.push_back({name + " deserved", Points(t, deserved.at(name)), style + kDashedStyle});
    ++style;
  }
  html +=
      "<div class=\"charts\">\n<figure>\n" +
      LineChartSvg(ChartSpec{"Share of the GPUs against the deserved share",
                             ChartAxis{"Time (s)", 0.0, std::nullopt, false, std::nullopt, false},
                             ChartAxis{"GPUs (%)", 0.0, 100.0, false, std::nullopt, false}},
                   shares) +
      "<figcaption>Solid: the queue's share; dashed: its deserved share (the proportion "
      "plugin's, each session).</figcaption>\n</figure>\n";
  std::vector<ChartSeries> jain_series = {
      {"Jain's index", Points(t, series->value("jain", Json::array())), 0}};
  html +=
      "<figure>\n" +
      LineChartSvg(ChartSpec{"Jain's fairness index over time",
                             ChartAxis{"Time (s)", 0.0, std::nullopt, false, std::nullopt, false},
                             ChartAxis{"Jain's index", 0.0, 1.0, true, std::nullopt, false}},
                   jain_series) +
      "</figure>\n</div>\n";
  return html;
}

}  // namespace

std::string RenderFairnessHtml(const Json& summary) {
  if (!summary.is_object() || !summary.contains("runs") || !summary.at("runs").is_array())
    return "";
  std::string html;
  size_t shown = 0;
  for (const Json& run : summary.at("runs")) {
    if (shown == kMaxRunsShown) break;
    if (!run.is_object() || !run.contains("queues") || !run.at("queues").is_array() ||
        run.at("queues").size() < 2) {
      continue;
    }
    html += RunSection(run);
    ++shown;
  }
  if (html.empty()) return "";
  return "<h2>Queues and fairness</h2>\n" + html;
}

}  // namespace gantry
