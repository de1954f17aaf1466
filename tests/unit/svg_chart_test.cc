// The report's chart helpers at the ends of their ranges: styles as far from 0 as an int goes
// (std::abs(INT_MIN) overflows) and numbers as large as a double goes (whose fixed notation is
// longer than a small buffer). Expected values are written out, or read back with strtod.
#include "sim/svg_chart.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cstdlib>
#include <set>
#include <string>

namespace gantry {
namespace {

// Tableau 10, as the report's legend documents it.
const std::set<std::string> kTableau10 = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

TEST(ChartColour, EveryStyleHasAColourOfThePalette) {
  EXPECT_EQ(std::string(ChartColour(0)), "#1f77b4");
  EXPECT_EQ(std::string(ChartColour(11)), "#ff7f0e");  // the palette wraps after 10
  for (int style : {INT_MIN, INT_MIN + 1, -1, INT_MAX}) {
    EXPECT_EQ(kTableau10.count(ChartColour(style)), 1u) << style;
  }
}

TEST(LineChartSvg, DrawsSeriesOfExtremeStyles) {
  ChartSpec spec;
  spec.title = "t";
  std::vector<ChartSeries> series = {{"lowest", {{0, 1}, {1, 2}}, INT_MIN},
                                     {"highest", {{0, 2}, {1, 3}}, INT_MAX}};
  const std::string svg = LineChartSvg(spec, series);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("lowest"), std::string::npos);
  EXPECT_NE(svg.find("highest"), std::string::npos);
}

TEST(FormatFixed, WritesEveryDigitOfTheLargestNumbers) {
  EXPECT_EQ(FormatFixed(2.5, 1), "2.5");
  EXPECT_EQ(FormatFixed(-0.001, 2), "0.00");  // no sign on a negative zero
  EXPECT_EQ(FormatFixed(1e20, 0), "100000000000000000000");
  for (double v : {DBL_MAX, -DBL_MAX, 1e100, -1e63}) {
    for (int decimals : {0, 2}) {
      const std::string text = FormatFixed(v, decimals);
      EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
      if (decimals == 0) {
        EXPECT_EQ(text.find('.'), std::string::npos) << text;
      } else {
        EXPECT_EQ(text.size() - text.find('.'), 3u) << text;  // ".00"
      }
    }
  }
  EXPECT_EQ(FormatFixed(DBL_MAX, 0).size(), 309u);  // DBL_MAX is about 1.8e308
  EXPECT_EQ(FormatFixed(-DBL_MAX, 0).size(), 310u);
}

}  // namespace
}  // namespace gantry
