#include "sim/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The <figure> with this id, or "" when there is none.
std::string FigureById(const std::string& html, const std::string& id) {
  const size_t begin = html.find("<figure id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  const size_t end = html.find("</figure>", begin);
  return html.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The points="..." of every polyline in `svg`, in order.
std::vector<std::string> PolylinePoints(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    const size_t p = svg.find("points=\"", at) + 8;
    out.push_back(svg.substr(p, svg.find('"', p) - p));
  }
  return out;
}

// A protocol-style curve 0..130: allocation follows demand up to `end`, then stays there.
Json AllocCurve(double end) {
  Json c = Json::object();
  for (int x = 0; x <= 130; x += 10) c[std::to_string(x)] = std::min<double>(x, end);
  return c;
}

Json FragCurve(double end) {
  Json c = Json::object();
  for (int x = 0; x <= 130; x += 10) c[std::to_string(x)] = end * x / 130.0;
  return c;
}

Json ProtocolRun(const std::string& policy, int seed, double alloc_end, double frag_end,
                 int failed) {
  return Json{{"policy", policy},
              {"seed", seed},
              {"alloc_pct", AllocCurve(alloc_end)},
              {"frag_pct", FragCurve(frag_end)},
              {"failed_pods", failed},
              {"pods", 10000},
              {"wall_s", 0.9}};
}

Json ProtocolSummary() {
  Json s;
  s["title"] = "FGD reproduction";
  s["cluster"] = "data/openb/nodes.csv";
  s["workload"] = "data/openb/pods.csv";
  s["protocol"] = "fgd-atc23";
  s["runs"] = Json::array(
      {ProtocolRun("fgd", 42, 95.2, 4.3, 2430), ProtocolRun("fgd", 43, 95.4, 4.1, 2410),
       ProtocolRun("bestfit", 42, 93.0, 6.0, 2800), ProtocolRun("bestfit", 43, 93.2, 6.2, 2790),
       ProtocolRun("random", 42, 87.4, 11.0, 3900)});
  s["by_policy"] = {{"fgd",
                     {{"alloc_pct_130_mean", 95.4},
                      {"alloc_pct_130_std", 0.1},
                      {"frag_pct_130_mean", 4.2},
                      {"runs", 2}}},
                    {"bestfit", {{"alloc_pct_130_mean", 93.15}, {"alloc_pct_130_std", 0.14}}},
                    {"random", {{"alloc_pct_130_mean", 87.4}}}};
  s["published"] = {{"random", 87.47}, {"bestfit", 93.08}, {"fgd", 95.39}};
  return s;
}

Json ReplayRun(const std::string& policy, int seed, double jct_mean) {
  Json samples = Json::array();
  for (int i = 1; i <= 50; ++i) samples.push_back(jct_mean * i / 25.0);
  return Json{{"policy", policy},
              {"seed", seed},
              {"jct_s", {{"mean", jct_mean}, {"p50", jct_mean}, {"p95", 2 * jct_mean}, {"p99", 0}}},
              {"wait_s", {{"mean", 30.0}, {"p50", 10}, {"p95", 90}, {"p99", 120}}},
              {"failed_tasks", 3},
              {"preempted_tasks", 1},
              {"gpu_alloc_mean_pct", 71.25},
              {"jct_samples", samples}};
}

Json ReplaySummary() {
  Json s;
  s["title"] = "Replay";
  s["protocol"] = "replay";
  s["runs"] = Json::array(
      {ReplayRun("fgd", 1, 100), ReplayRun("fgd", 2, 110), ReplayRun("bestfit", 1, 130)});
  s["by_policy"] = {{"fgd", {{"jct_mean_s", 104.5}, {"wait_mean_s", 30.0}}}};
  return s;
}

Json ReplayRows(int rows_per_run) {
  Json rows = Json::array();
  for (const char* policy : {"fgd", "bestfit"}) {
    for (int seed : {1, 2}) {
      for (int k = 0; k < rows_per_run; ++k) {
        rows.push_back({{"policy", policy},
                        {"seed", seed},
                        {"t", 60.0 * k},
                        {"gpu_alloc_pct", 50.0 + (k % 10)},
                        {"gpu_util_pct", 40.0},
                        {"queue_len", k % 7},
                        {"running_tasks", 12}});
      }
    }
  }
  return rows;
}

// ------------------------------------------------------------------------ protocol runs

TEST(ReportTest, AllocationChartHasOnePolylinePerPolicy) {
  const std::string html = RenderHtmlReport(ProtocolSummary(), Json::array());
  EXPECT_TRUE(Contains(html, "<svg"));
  const std::string alloc = FigureById(html, "chart-alloc");
  ASSERT_FALSE(alloc.empty());
  EXPECT_EQ(Count(alloc, "<polyline"), 3u);
  EXPECT_EQ(Count(FigureById(html, "chart-frag"), "<polyline"), 3u);
}

TEST(ReportTest, TableShowsPolicyNamesAndFormattedFigures) {
  const std::string html = RenderHtmlReport(ProtocolSummary(), Json::array());
  for (const char* policy : {"fgd", "bestfit", "random"}) EXPECT_TRUE(Contains(html, policy));
  EXPECT_TRUE(Contains(html, "95.40 ± 0.10"));  // by_policy's (not the runs' 95.30), 2 decimals
  EXPECT_TRUE(Contains(html, "93.15 ± 0.14"));
  EXPECT_TRUE(Contains(html, "95.39"));        // published
  EXPECT_TRUE(Contains(html, "+0.01"));        // 95.40 - 95.39
  EXPECT_TRUE(Contains(html, "-0.07"));        // 87.40 - 87.47
  EXPECT_TRUE(Contains(html, "4.20"));         // fragmentation from by_policy
  EXPECT_TRUE(Contains(html, "2420 ± 14.1"));  // failed pods: mean ± std over the runs
  EXPECT_TRUE(Contains(html, "FGD reproduction"));
  EXPECT_TRUE(Contains(html, "data/openb/nodes.csv"));
  EXPECT_TRUE(Contains(html, "data/openb/pods.csv"));
  EXPECT_TRUE(Contains(html, "fgd-atc23"));
}

TEST(ReportTest, FiguresComeFromTheRunsWhenByPolicyIsMissing) {
  Json s = ProtocolSummary();
  s.erase("by_policy");
  s.erase("published");
  const std::string html = RenderHtmlReport(s, Json::array());
  EXPECT_TRUE(Contains(html, "95.30 ± 0.14"));  // (95.2, 95.4): sample std 0.141
  EXPECT_TRUE(Contains(html, "4.20 ± 0.14"));
  EXPECT_TRUE(Contains(html, "87.40"));
  EXPECT_FALSE(Contains(html, "Published"));  // no column without data
}

TEST(ReportTest, AllocationCurveIsTheMeanOverSeeds) {
  Json two_seeds = ProtocolSummary();
  two_seeds["runs"] =
      Json::array({ProtocolRun("fgd", 1, 90, 4, 1), ProtocolRun("fgd", 2, 92, 6, 1)});
  Json one_mean = two_seeds;
  one_mean["runs"] = Json::array({ProtocolRun("fgd", 1, 91, 5, 1)});
  const auto a =
      PolylinePoints(FigureById(RenderHtmlReport(two_seeds, Json::array()), "chart-alloc"));
  const auto b =
      PolylinePoints(FigureById(RenderHtmlReport(one_mean, Json::array()), "chart-alloc"));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0], b[0]);
}

TEST(ReportTest, EscapesPolicyNamesAndPaths) {
  Json s = ProtocolSummary();
  s["title"] = "<script>alert(1)</script>";
  s["cluster"] = "clusters/\"odd\"<dir>&co.yaml";
  s["runs"].push_back(ProtocolRun("a<b&c", 42, 80, 10, 5));
  s["published"]["a<b&c"] = 81.0;
  const std::string html = RenderHtmlReport(s, Json::array());
  EXPECT_FALSE(Contains(html, "<b&"));
  EXPECT_FALSE(Contains(html, "<dir>"));
  EXPECT_FALSE(Contains(html, "<script"));
  EXPECT_TRUE(Contains(html, "a&lt;b&amp;c"));
  EXPECT_TRUE(Contains(html, "clusters/&quot;odd&quot;&lt;dir&gt;&amp;co.yaml"));
  EXPECT_TRUE(Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_EQ(Count(FigureById(html, "chart-alloc"), "<polyline"), 4u);
}

TEST(ReportTest, PageIsSelfContainedHtml5) {
  for (const auto& [summary, rows] :
       {std::pair{ProtocolSummary(), Json::array()}, std::pair{ReplaySummary(), ReplayRows(50)}}) {
    const std::string html = RenderHtmlReport(summary, rows);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_TRUE(Contains(html, "<meta charset=\"utf-8\">"));
    EXPECT_TRUE(Contains(html, "</html>"));
    EXPECT_FALSE(Contains(html, "http://"));
    EXPECT_FALSE(Contains(html, "https://"));
    EXPECT_FALSE(Contains(html, "<script"));
    EXPECT_FALSE(Contains(html, "<link"));
    EXPECT_FALSE(Contains(html, "<img"));
    EXPECT_EQ(Count(html, "<svg"), Count(html, "</svg>"));
    EXPECT_EQ(Count(html, "<figure"), Count(html, "</figure>"));
  }
}

TEST(ReportTest, ProtocolRunsDrawNoTimeOrJctCharts) {
  const std::string html = RenderHtmlReport(ProtocolSummary(), Json::array());
  EXPECT_FALSE(FigureById(html, "chart-alloc").empty());
  EXPECT_FALSE(FigureById(html, "chart-frag").empty());
  EXPECT_FALSE(Contains(html, "chart-time-"));
  EXPECT_FALSE(Contains(html, "chart-jct-cdf"));
  EXPECT_FALSE(Contains(html, "JCT mean"));
}

// -------------------------------------------------------------------------- replay runs

TEST(ReportTest, ReplayRunsDrawTimeAndJctCharts) {
  const std::string html = RenderHtmlReport(ReplaySummary(), ReplayRows(50));
  for (const char* id :
       {"chart-time-alloc", "chart-time-util", "chart-time-queue", "chart-jct-cdf"}) {
    EXPECT_EQ(Count(FigureById(html, id), "<polyline"), 2u) << id;
  }
  EXPECT_TRUE(FigureById(html, "chart-alloc").empty());  // no alloc_pct curves in replay runs
  EXPECT_TRUE(FigureById(html, "chart-frag").empty());
}

TEST(ReportTest, ReplayTableShowsTimingFigures) {
  const std::string html = RenderHtmlReport(ReplaySummary(), Json::array());
  EXPECT_TRUE(Contains(html, "JCT mean"));
  EXPECT_TRUE(Contains(html, "104.50 ± 7.07 s"));  // fgd: by_policy's mean, the runs' std
  EXPECT_TRUE(Contains(html, "2.17 min"));         // bestfit: 130 s, its one run
  EXPECT_TRUE(Contains(html, "3.50 ± 0.24 min"));  // fgd p95: 200 s and 220 s
  EXPECT_TRUE(Contains(html, "30.00 s"));          // wait mean
  EXPECT_TRUE(Contains(html, "71.25"));            // GPU allocation mean
  EXPECT_FALSE(Contains(html, "chart-time-"));     // no rows, no time charts
  EXPECT_FALSE(FigureById(html, "chart-jct-cdf").empty());
}

TEST(ReportTest, LongTimeSeriesAreDownsampled) {
  const std::string html = RenderHtmlReport(ReplaySummary(), ReplayRows(20000));
  const auto lines = PolylinePoints(FigureById(html, "chart-time-queue"));
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& points : lines) {
    const size_t n = Count(points, ",");
    EXPECT_GT(n, 100u);
    EXPECT_LE(n, 500u);
  }
  EXPECT_LT(html.size(), 200u * 1024);
}

TEST(ReportTest, JctCdfIsDownsampled) {
  Json s = ReplaySummary();
  Json many = Json::array();
  for (int i = 0; i < 5000; ++i) many.push_back(1.0 + i);
  s["runs"][0]["jct_samples"] = many;
  const auto lines =
      PolylinePoints(FigureById(RenderHtmlReport(s, Json::array()), "chart-jct-cdf"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_LE(Count(lines[0], ","), 500u);
  EXPECT_GE(Count(lines[0], ","), 400u);
}

// ------------------------------------------------------------------ missing or odd input

TEST(ReportTest, EmptyRunsSayThereIsNoData) {
  const std::string html =
      RenderHtmlReport(Json{{"title", "Nothing"}, {"runs", Json::array()}}, Json::array());
  EXPECT_TRUE(Contains(html, "No data"));
  EXPECT_TRUE(Contains(html, "Nothing"));
  EXPECT_FALSE(Contains(html, "<svg"));
  EXPECT_FALSE(Contains(html, "<table"));
  EXPECT_TRUE(Contains(html, "</html>"));
}

TEST(ReportTest, NonObjectInputSaysThereIsNoData) {
  EXPECT_TRUE(Contains(RenderHtmlReport(Json(), Json()), "No data"));
  EXPECT_TRUE(Contains(RenderHtmlReport(Json::array({1, 2}), Json("rows")), "No data"));
}

TEST(ReportTest, WrongTypesAreIgnored) {
  Json s = ProtocolSummary();
  s["runs"].push_back("not a run");
  s["runs"].push_back({{"policy", "odd"},
                       {"alloc_pct", {{"x", 1.0}, {"10", "high"}, {"20", nullptr}}},
                       {"failed_pods", "many"},
                       {"jct_s", 5},
                       {"jct_samples", {"a", nullptr}}});
  s["by_policy"]["fgd"]["alloc_pct_130_mean"] = "n/a";
  s["published"] = "none";
  Json rows = Json::array({1, {{"policy", "fgd"}, {"t", "soon"}, {"queue_len", 3}}});
  std::string html;
  ASSERT_NO_THROW(html = RenderHtmlReport(s, rows));
  EXPECT_TRUE(Contains(html, "odd"));
  EXPECT_TRUE(Contains(html, "95.30 ± 0.10"));  // the runs' mean, by_policy's std
  EXPECT_EQ(Count(FigureById(html, "chart-alloc"), "<polyline"), 3u);
  EXPECT_FALSE(Contains(html, "chart-time-"));
  EXPECT_FALSE(Contains(html, "chart-jct-cdf"));
}

TEST(ReportTest, ArrayCurvesAreIndexedByPercent) {
  Json s;
  s["runs"] = Json::array({{{"policy", "fgd"}, {"alloc_pct", {0.0, 1.0, 2.0, 2.5}}}});
  const std::string html = RenderHtmlReport(s, Json::array());
  EXPECT_EQ(Count(FigureById(html, "chart-alloc"), "<polyline"), 1u);
  EXPECT_TRUE(Contains(html, "2.50"));  // the value at the end, in the table
}

// ------------------------------------------------------------------------ the chart helper

ChartSpec Spec(const std::string& title) {
  ChartSpec spec;
  spec.title = title;
  spec.x.label = "x";
  spec.y.label = "y";
  return spec;
}

TEST(LineChartSvgTest, DrawsOnePolylinePerSeriesAndALegend) {
  const std::string svg = LineChartSvg(
      Spec("t"),
      {{"one", {{0, 1}, {1, 2}}, 0}, {"two", {{0, 2}, {1, 3}, {2, 1}}, 1}, {"empty", {}, 2}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(Count(svg, "<polyline"), 2u);
  EXPECT_TRUE(Contains(svg, ">one</text>"));
  EXPECT_TRUE(Contains(svg, ">two</text>"));
  EXPECT_FALSE(Contains(svg, ">empty</text>"));
  EXPECT_EQ(Count(PolylinePoints(svg)[1], ","), 3u);
  EXPECT_NE(PolylinePoints(svg)[0], PolylinePoints(svg)[1]);
}

TEST(LineChartSvgTest, SeriesGetDistinctColours) {
  std::vector<ChartSeries> series;
  for (int i = 0; i < 7; ++i) series.push_back({"s" + std::to_string(i), {{0, 0}, {1, i}}, i});
  const std::string svg = LineChartSvg(Spec("t"), series);
  std::vector<std::string> colours;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    const size_t p = svg.find("stroke=\"#", at) + 8;
    colours.push_back(svg.substr(p, 7));
  }
  ASSERT_EQ(colours.size(), 7u);
  std::sort(colours.begin(), colours.end());
  EXPECT_EQ(std::unique(colours.begin(), colours.end()), colours.end());
}

TEST(LineChartSvgTest, EscapesText) {
  ChartSpec spec = Spec("a<b & \"c\"");
  spec.x.label = "<x>";
  const std::string svg = LineChartSvg(spec, {{"p<q", {{0, 0}, {1, 1}}, 0}});
  EXPECT_FALSE(Contains(svg, "a<b"));
  EXPECT_FALSE(Contains(svg, "<x>"));
  EXPECT_FALSE(Contains(svg, "p<q"));
  EXPECT_TRUE(Contains(svg, "a&lt;b &amp; &quot;c&quot;"));
  EXPECT_TRUE(Contains(svg, "p&lt;q"));
}

TEST(LineChartSvgTest, SkipsNonFinitePointsAndDrawsALonePointAsADot) {
  const double nan = std::nan("");
  const std::string svg = LineChartSvg(
      Spec("t"),
      {{"gappy", {{0, 1}, {1, nan}, {std::numeric_limits<double>::infinity(), 2}, {3, 4}}, 0},
       {"dot", {{1, 1}}, 1}});
  EXPECT_FALSE(Contains(svg, "nan"));
  EXPECT_FALSE(Contains(svg, "inf"));
  ASSERT_EQ(PolylinePoints(svg).size(), 1u);
  EXPECT_EQ(Count(PolylinePoints(svg)[0], ","), 2u);
  EXPECT_EQ(Count(svg, "<circle"), 1u);
}

TEST(LineChartSvgTest, NoSeriesSaysNoData) {
  const std::string svg = LineChartSvg(Spec("t"), {});
  EXPECT_TRUE(Contains(svg, "no data"));
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
}

ChartSpec DemandSpec(int width) {
  ChartSpec spec = Spec("t");
  spec.width = width;
  spec.x.min = 0;
  spec.x.max = 130;
  spec.x.step = 10;
  spec.y.min = 0;
  spec.y.max = 100;
  return spec;
}

TEST(LineChartSvgTest, TicksCoverTheRequestedRange) {
  const std::string svg = LineChartSvg(DemandSpec(1000), {{"s", {{0, 0}, {130, 95}}, 0}});
  EXPECT_TRUE(Contains(svg, ">130</text>"));
  EXPECT_TRUE(Contains(svg, ">10</text>"));
  EXPECT_TRUE(Contains(svg, ">100</text>"));
  EXPECT_FALSE(Contains(svg, ">140</text>"));
}

TEST(LineChartSvgTest, CrowdedTickLabelsAreThinnedButNotTheirGridlines) {
  const std::string wide = LineChartSvg(DemandSpec(1000), {{"s", {{0, 0}, {130, 95}}, 0}});
  const std::string narrow = LineChartSvg(DemandSpec(640), {{"s", {{0, 0}, {130, 95}}, 0}});
  EXPECT_TRUE(Contains(narrow, ">120</text>"));
  EXPECT_FALSE(Contains(narrow, ">10</text>"));
  EXPECT_FALSE(Contains(narrow, ">130</text>"));
  EXPECT_EQ(Count(narrow, "<line"), Count(wide, "<line"));  // 14 + 6 gridlines, 1 legend line
  EXPECT_LT(Count(narrow, "<text"), Count(wide, "<text"));
}

TEST(LineChartSvgTest, LogAxisTicksAtPowersOfTen) {
  ChartSpec spec = Spec("t");
  spec.x.log = true;
  const std::string svg = LineChartSvg(spec, {{"s", {{0, 5}, {3, 10}, {20000, 50}}, 0}});
  EXPECT_TRUE(Contains(svg, ">1</text>"));
  EXPECT_TRUE(Contains(svg, ">10k</text>"));
  EXPECT_TRUE(Contains(svg, ">100k</text>"));
  EXPECT_EQ(Count(PolylinePoints(svg)[0], ","), 2u);  // x = 0 has no place on a log axis
}

TEST(HtmlEscapeTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("plain/path.csv"), "plain/path.csv");
}

}  // namespace
}  // namespace gantry
