// The simulator's report: one self-contained HTML5 page (inline CSS, inline SVG charts, no
// scripts, no network) from the JSON that `gantry sim` writes. It reads what is there and
// leaves out what is not: a table or chart appears only when the input has data for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gantry {

// `summary`: {"title", "cluster", "workload", "protocol", "runs": [...], "by_policy": {...},
// "published": {...}}; `timeseries`: rows {"policy", "seed", "t", "gpu_alloc_pct",
// "gpu_util_pct", "queue_len", "running_tasks"}, empty for protocol runs. Every key is
// optional; values of the wrong type are ignored rather than thrown on.
std::string RenderHtmlReport(const nlohmann::ordered_json& summary,
                             const nlohmann::ordered_json& timeseries);

// &, <, >, " and ' as entities: safe in element text and in quoted attribute values.
std::string HtmlEscape(std::string_view text);

// ----------------------------------------------------------------- the line-chart helper

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y) in data units, drawn in order
  int style = 0;  // picks colour (and dash pattern past the palette); keep it per policy
};

struct ChartAxis {
  std::string label;
  // The axis spans at least [min, max] and the data; with `exact` it spans exactly
  // [min, max] (both must be set) and points outside are clamped to the edge.
  std::optional<double> min;
  std::optional<double> max;
  bool exact = false;
  std::optional<double> step;  // tick spacing; a "nice" 1-2-5 step when unset
  bool log = false;            // base-10; ticks at the powers of ten; drops points <= 0
};

struct ChartSpec {
  std::string title;
  ChartAxis x;
  ChartAxis y;
  int width = 640;
  int height = 360;
};

// An inline <svg>: title, gridlines, axes with ticks and labels, one <polyline> per series
// with at least two points (a <circle> for a single point), and a legend. Non-finite
// points are skipped. All text is escaped.
std::string LineChartSvg(const ChartSpec& spec, const std::vector<ChartSeries>& series);

}  // namespace gantry
