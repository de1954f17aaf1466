// A small inline-SVG line-chart helper (no scripts, no external resources), used by the
// simulator's HTML report, plus the HTML escaping that its text goes through.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry {

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

// Also used by the report page, so that its tables match the charts' colours and numbers.
// The "#rrggbb" colour that LineChartSvg draws a series of this `style` in.
const char* ChartColour(int style);
// `v` with `decimals` decimals ("%.*f"), without the sign of a negative zero ("-0.00").
std::string FormatFixed(double v, int decimals);

}  // namespace gantry
