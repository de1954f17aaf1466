// The report's charts (report_data.h), drawn by sim/svg_chart.h.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/report_data.h"

namespace gantry::report {
namespace {

ChartAxis Axis(std::string label, std::optional<double> min = std::nullopt,
               std::optional<double> max = std::nullopt) {
  ChartAxis a;
  a.label = std::move(label);
  a.min = min;
  a.max = max;
  return a;
}

std::string Figure(const std::string& id, const ChartSpec& spec,
                   const std::vector<ChartSeries>& series, const std::string& caption) {
  std::string html = "<figure id=\"" + id + "\">\n" + LineChartSvg(spec, series);
  if (!caption.empty()) html += "<figcaption>" + HtmlEscape(caption) + "</figcaption>\n";
  return html + "</figure>\n";
}

bool AnyPoints(const std::vector<ChartSeries>& series) {
  return std::any_of(series.begin(), series.end(),
                     [](const ChartSeries& s) { return !s.points.empty(); });
}

// Time-series rows binned on one time grid shared by all policies: the mean within a bin
// is the mean over seeds (whose samples fall in the same bins) and caps the points drawn.
struct TimeSeries {
  double divisor = 1;
  std::string unit = "s";
  double t_lo = 0, t_hi = 0;
  std::map<std::string, std::vector<ChartSeries>> by_metric;
};

TimeSeries BinTimeSeries(const Json& rows, const std::vector<Policy>& policies,
                         const std::map<std::string, size_t>& index,
                         const std::vector<std::string>& metrics) {
  TimeSeries out;
  if (!rows.is_array() || rows.empty()) return out;
  double t_lo = std::numeric_limits<double>::infinity();
  double t_hi = -t_lo;
  for (const Json& row : rows) {
    if (const auto t = NumberAt(row, "t")) t_lo = std::min(t_lo, *t), t_hi = std::max(t_hi, *t);
  }
  if (!std::isfinite(t_lo)) return out;
  const auto [div, unit] = DurationUnit(t_hi - std::min(t_lo, 0.0));
  out.divisor = div;
  out.unit = unit;
  out.t_lo = t_lo, out.t_hi = t_hi;
  const size_t bins = kMaxPointsPerSeries;
  struct Acc {
    double t = 0, v = 0;
    int n = 0;
  };
  for (const std::string& metric : metrics) {
    std::vector<std::vector<Acc>> acc(policies.size());
    for (const Json& row : rows) {
      const auto t = NumberAt(row, "t");
      const auto v = NumberAt(row, metric);
      if (!t || !v) continue;
      const auto it = index.find(PolicyName(Get(row, "policy")));
      if (it == index.end()) continue;
      size_t b = 0;
      if (t_hi > t_lo) {
        b = std::min(bins - 1, static_cast<size_t>((*t - t_lo) / (t_hi - t_lo) * bins));
      }
      auto& a = acc[it->second];
      if (a.empty()) a.resize(bins);
      a[b].t += *t, a[b].v += *v, a[b].n += 1;
    }
    std::vector<ChartSeries> series;
    for (size_t p = 0; p < policies.size(); ++p) {
      ChartSeries s{policies[p].name, {}, policies[p].style};
      for (const Acc& a : acc[p]) {
        if (a.n > 0) s.points.emplace_back(a.t / a.n / div, a.v / a.n);
      }
      if (!s.points.empty()) series.push_back(std::move(s));
    }
    if (AnyPoints(series)) out.by_metric[metric] = std::move(series);
  }
  return out;
}

// The empirical CDF of the pooled samples, at most kMaxPointsPerSeries points of it.
Points Cdf(std::vector<double> samples) {
  Points out;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  if (n == 0) return out;
  const size_t m = std::min(n, kMaxPointsPerSeries);
  for (size_t k = 0; k < m; ++k) {
    const size_t i =
        m == 1
            ? n - 1
            : static_cast<size_t>(std::llround(static_cast<double>(k) * static_cast<double>(n - 1) /
                                               static_cast<double>(m - 1)));
    out.emplace_back(samples[i], 100.0 * static_cast<double>(i + 1) / static_cast<double>(n));
  }
  return out;
}

}  // namespace

std::string RenderCharts(const std::vector<Policy>& policies,
                         const std::map<std::string, size_t>& index, const Json& timeseries,
                         const EndOfArrival& end) {
  const bool has_rows = timeseries.is_array() && !timeseries.empty();
  std::string charts;
  size_t most_runs = 0;
  for (const Policy& p : policies) most_runs = std::max(most_runs, p.runs.size());
  const std::string seeds_note =
      most_runs > 1 ? "Mean over the runs (up to " + std::to_string(most_runs) + " per policy)"
                    : "One run per policy";
  {
    std::vector<ChartSeries> alloc, frag;
    for (const Policy& p : policies) {
      alloc.push_back({p.name, MeanCurve(p, "alloc_pct"), p.style});
      frag.push_back({p.name, MeanCurve(p, "frag_pct"), p.style});
    }
    ChartAxis demand = Axis("Arrived GPU demand (% of capacity)", 0.0);
    if (end.at <= 200) demand.step = end.at <= 150 ? 10.0 : 20.0;  // a tick at 130
    if (AnyPoints(alloc)) {
      ChartSpec spec{"GPU allocation vs arrived demand", demand,
                     Axis("GPU allocation (% of capacity)", 0.0, 100.0)};
      charts += Figure("chart-alloc", spec, alloc,
                       seeds_note + " at each point of arrived demand. Higher is better.");
    }
    if (AnyPoints(frag)) {
      ChartSpec spec{"Fragmentation vs arrived demand", demand,
                     Axis("Fragmented GPU capacity (%)", 0.0)};
      charts += Figure("chart-frag", spec, frag,
                       seeds_note + " at each point of arrived demand. Lower is better.");
    }
  }
  if (has_rows) {
    const TimeSeries ts =
        BinTimeSeries(timeseries, policies, index,
                      {"gpu_alloc_pct", "gpu_util_pct", "queue_len", "running_tasks"});
    const std::string time_label = "Time (" + ts.unit + ")";
    const std::string note = "Mean over seeds within each of up to " +
                             std::to_string(kMaxPointsPerSeries) + " time bins.";
    struct TimeChart {
      const char* metric;
      const char* id;
      const char* title;
      const char* y_label;
      std::optional<double> y_max;
    };
    for (const TimeChart& c :
         std::vector<TimeChart>{{"gpu_alloc_pct", "chart-time-alloc", "GPU allocation over time",
                                 "GPU allocation (%)", 100.0},
                                {"gpu_util_pct", "chart-time-util", "GPU utilisation over time",
                                 "GPU utilisation (%)", 100.0},
                                {"queue_len", "chart-time-queue", "Queue length over time",
                                 "Queued tasks", std::nullopt},
                                {"running_tasks", "chart-time-running", "Running tasks over time",
                                 "Running tasks", std::nullopt}}) {
      const auto it = ts.by_metric.find(c.metric);
      if (it == ts.by_metric.end()) continue;
      // The run's own span, not snapped to a tick, so the lines reach the right edge.
      ChartAxis x = Axis(time_label, ts.t_lo / ts.divisor, ts.t_hi / ts.divisor);
      x.exact = ts.t_hi > ts.t_lo;
      ChartSpec spec{c.title, x, Axis(c.y_label, 0.0, c.y_max)};
      charts += Figure(c.id, spec, it->second, note);
    }
  }
  {
    std::vector<ChartSeries> cdf;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const Policy& p : policies) {
      std::vector<double> samples;
      for (const Json* run : p.runs) {
        const Json* js = Get(*run, "jct_samples");
        if (js == nullptr || !js->is_array()) continue;
        for (const Json& v : *js) {
          if (const auto x = Number(&v)) {
            samples.push_back(*x);
            if (*x > 0) lo = std::min(lo, *x), hi = std::max(hi, *x);
          }
        }
      }
      if (!samples.empty()) cdf.push_back({p.name, Cdf(std::move(samples)), p.style});
    }
    if (AnyPoints(cdf)) {
      // Completion times span decades: a log axis keeps short jobs from collapsing to a wall.
      const bool log = std::isfinite(lo) && hi / lo >= 100;
      ChartAxis x = Axis(log ? "Job completion time (s, log scale)" : "Job completion time (s)");
      x.log = log;
      if (!log) x.min = 0.0;
      ChartAxis y = Axis("Jobs completed (%)", 0.0, 100.0);
      y.exact = true;
      ChartSpec spec{"Job completion time CDF", x, y};
      charts +=
          Figure("chart-jct-cdf", spec, cdf,
                 "Completion times pooled over seeds" +
                     std::string(log ? "; jobs that took no time are off the log axis." : "."));
    }
  }
  return charts;
}

}  // namespace gantry::report
