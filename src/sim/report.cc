#include "sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "sim/report_datasets.h"
#include "sim/report_defragment.h"
#include "sim/report_fairness.h"
#include "sim/report_topology.h"
#include "sim/stats.h"

namespace gantry {
namespace {

using Json = nlohmann::ordered_json;
using Points = std::vector<std::pair<double, double>>;

// Enough to follow a curve on a page ~600 px wide, small enough that 7 policies x several
// charts stay well under a few hundred KB.
constexpr size_t kMaxPointsPerSeries = 500;

std::string Signed(double v, int decimals) {
  std::string s = FormatFixed(v, decimals);
  if (s[0] != '-' && s.find_first_not_of("0.") != std::string::npos) s.insert(0, "+");
  return s;
}

ChartAxis Axis(std::string label, std::optional<double> min = std::nullopt,
               std::optional<double> max = std::nullopt) {
  ChartAxis a;
  a.label = std::move(label);
  a.min = min;
  a.max = max;
  return a;
}

// -------------------------------------------------------------------------- JSON access

const Json* Get(const Json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::optional<double> Number(const Json* j) {
  if (j == nullptr || !j->is_number()) return std::nullopt;
  const double v = j->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> NumberAt(const Json& j, const std::string& key) {
  return Number(Get(j, key));
}

std::optional<double> NumberAt(const Json& j, const std::string& key, const std::string& sub) {
  const Json* inner = Get(j, key);
  return inner == nullptr ? std::nullopt : NumberAt(*inner, sub);
}

// Strings as they are, other scalars as JSON; invalid UTF-8 must not throw mid-report.
std::string Text(const Json* j) {
  if (j == nullptr || j->is_null()) return "";
  if (j->is_string()) return j->get<std::string>();
  return j->dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<double> ParseNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// {"0": 0.0, "1": 1.0, ...} (keys are numbers as strings) or a plain array indexed from 0;
// sorted by x.
Points Curve(const Json* j) {
  Points out;
  if (j == nullptr) return out;
  if (j->is_object()) {
    for (const auto& item : j->items()) {
      const auto x = ParseNumber(item.key());
      const auto y = Number(&item.value());
      if (x && y) out.emplace_back(*x, *y);
    }
  } else if (j->is_array()) {
    for (size_t i = 0; i < j->size(); ++i) {
      if (const auto y = Number(&(*j)[i])) out.emplace_back(static_cast<double>(i), *y);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs, aggregates and rows name their policy the same way, so they meet in one entry.
std::string PolicyName(const std::string& name) {
  return name.empty() ? "(unnamed)" : name;
}
std::string PolicyName(const Json* j) {
  return PolicyName(Text(j));
}

// ----------------------------------------------------------------------------- the data

struct Policy {
  std::string name;
  int style = 0;
  std::vector<const Json*> runs;
  const Json* by_policy = nullptr;
};

struct Stat {
  std::optional<double> mean;
  std::optional<double> std;
};

Stat Summarize(const std::vector<double>& v) {
  Stat s;
  if (v.empty()) return s;
  const SampleStats stats = MeanAndStd(v);
  s.mean = stats.mean;
  if (v.size() >= 2) s.std = stats.std;
  return s;
}

// The aggregate the simulator wrote when it is there, else one computed from the runs.
Stat PolicyStat(const Policy& p, const std::string& mean_key, const std::string& std_key,
                const std::vector<double>& run_values) {
  Stat s = Summarize(run_values);
  if (p.by_policy != nullptr) {
    if (const auto m = NumberAt(*p.by_policy, mean_key)) s.mean = m;
    if (const auto sd = NumberAt(*p.by_policy, std_key)) s.std = sd;
  }
  return s;
}

template <typename F>
std::vector<double> RunValues(const Policy& p, F&& value) {
  std::vector<double> out;
  for (const Json* run : p.runs) {
    if (const std::optional<double> v = value(*run)) out.push_back(*v);
  }
  return out;
}

// The mean over the policy's runs at each x any of them has.
Points MeanCurve(const Policy& p, const std::string& key) {
  std::map<double, std::pair<double, int>> acc;
  for (const Json* run : p.runs) {
    for (const auto& [x, y] : Curve(Get(*run, key))) {
      acc[x].first += y;
      acc[x].second += 1;
    }
  }
  Points out;
  for (const auto& [x, a] : acc) out.emplace_back(x, a.first / a.second);
  return out;
}

// The value at `x`, else at the largest x (the end of arrival).
std::optional<double> EndValue(const Points& curve, double x) {
  if (curve.empty()) return std::nullopt;
  for (const auto& pt : curve) {
    if (pt.first == x) return pt.second;
  }
  return curve.back().second;
}

// Seconds in the unit that suits their size, so "20.61 min" rather than "1236.60 s".
std::pair<double, const char*> DurationUnit(double seconds) {
  const double a = std::abs(seconds);
  if (a >= 2 * 86400.0) return {86400.0, "d"};
  if (a >= 2 * 3600.0) return {3600.0, "h"};
  if (a >= 120.0) return {60.0, "min"};
  return {1.0, "s"};
}

// ------------------------------------------------------------------------------- tables

enum class Better { kNone, kHigher, kLower };

struct Cell {
  std::string text;
  std::optional<double> value;  // what "best" compares
};

struct Column {
  std::string header;
  Better better = Better::kNone;
  std::vector<std::optional<Cell>> cells;
  bool raw_html = false;  // cells already escaped (the policy column with its swatch)
};

std::optional<Cell> PctCell(const Stat& s) {
  if (!s.mean) return std::nullopt;
  std::string text = FormatFixed(*s.mean, 2);
  if (s.std) text += " ± " + FormatFixed(*s.std, 2);
  return Cell{text, s.mean};
}

std::optional<Cell> CountCell(const Stat& s) {
  if (!s.mean) return std::nullopt;
  const bool whole = std::abs(*s.mean - std::round(*s.mean)) < 1e-9;
  std::string text = FormatFixed(*s.mean, whole ? 0 : 1);
  if (s.std) text += " ± " + FormatFixed(*s.std, 1);
  return Cell{text, s.mean};
}

std::optional<Cell> DurationCell(const Stat& s) {
  if (!s.mean) return std::nullopt;
  const auto [div, unit] = DurationUnit(*s.mean);
  std::string text = FormatFixed(*s.mean / div, 2);
  if (s.std) text += " ± " + FormatFixed(*s.std / div, 2);
  return Cell{text + " " + unit, s.mean};
}

std::string RenderTable(const std::vector<Column>& all, const std::string& css_class) {
  std::vector<const Column*> columns;
  for (const Column& c : all) {
    if (std::any_of(c.cells.begin(), c.cells.end(), [](const auto& x) { return x.has_value(); }))
      columns.push_back(&c);
  }
  if (columns.empty()) return "";
  size_t rows = 0;
  for (const Column* c : columns) rows = std::max(rows, c->cells.size());

  std::vector<std::optional<double>> best(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i]->better == Better::kNone) continue;
    int valued = 0;
    for (const auto& cell : columns[i]->cells) {
      if (!cell || !cell->value) continue;
      ++valued;
      const double v = *cell->value;
      if (!best[i] || (columns[i]->better == Better::kHigher ? v > *best[i] : v < *best[i]))
        best[i] = v;
    }
    if (valued < 2) best[i].reset();  // a lone value is not "best" of anything
  }

  std::string html = "<div class=\"table-wrap\"><table class=\"" + css_class + "\">\n<thead><tr>";
  for (const Column* c : columns) html += "<th scope=\"col\">" + HtmlEscape(c->header) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < rows; ++r) {
    html += "<tr>";
    for (size_t i = 0; i < columns.size(); ++i) {
      const Column& c = *columns[i];
      const std::optional<Cell>* cell = r < c.cells.size() ? &c.cells[r] : nullptr;
      if (cell == nullptr || !cell->has_value()) {
        html += "<td class=\"na\">–</td>";
        continue;
      }
      const Cell& x = **cell;
      const bool is_best = best[i] && x.value && std::abs(*x.value - *best[i]) < 1e-12;
      html += is_best ? "<td class=\"best\">" : "<td>";
      html += c.raw_html ? x.text : HtmlEscape(x.text);
      html += "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  return html;
}

std::string PolicyLabelHtml(const Policy& p) {
  return std::string("<span class=\"swatch\" style=\"background:") + ChartColour(p.style) +
         "\"></span>" + HtmlEscape(p.name);
}

// ------------------------------------------------------------------------------- charts

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

constexpr const char* kCss = R"(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f7f9; color: #1f2933;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 24px; margin: 0 0 12px; }
h2 { font-size: 18px; margin: 32px 0 12px; padding-bottom: 4px; border-bottom: 1px solid #d9dee5; }
h3 { font-size: 15px; margin: 20px 0 8px; }
dl.inputs { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 8px; }
dl.inputs dt { font-weight: 600; color: #52606d; }
dl.inputs dd { margin: 0; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  overflow-wrap: anywhere; }
.note { color: #616e7c; font-size: 13px; margin: 6px 0; }
.empty { padding: 16px; background: #fff; border: 1px dashed #cbd2d9; border-radius: 6px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; font-variant-numeric: tabular-nums;
  border: 1px solid #d9dee5; }
th, td { padding: 6px 12px; text-align: right; white-space: nowrap;
  border-bottom: 1px solid #e4e7eb; }
th { background: #eef1f5; font-weight: 600; white-space: normal; vertical-align: bottom;
  max-width: 14em; }
th:first-child, td:first-child { text-align: left; }
td.best { font-weight: 700; color: #0b6e4f; }
td.na { color: #9aa5b1; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 8px; vertical-align: baseline; }
details { margin-top: 16px; }
summary { cursor: pointer; font-weight: 600; margin-bottom: 8px; }
.charts { display: grid; gap: 16px;
  grid-template-columns: repeat(auto-fill, minmax(min(540px, 100%), 1fr)); }
figure { margin: 0; padding: 8px; background: #fff; border: 1px solid #d9dee5; border-radius: 6px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { color: #616e7c; font-size: 12px; padding: 2px 8px 4px; }
)";

}  // namespace

std::string RenderHtmlReport(const nlohmann::ordered_json& summary,
                             const nlohmann::ordered_json& timeseries) {
  // --- Policies, in the order the runs name them, then any only the aggregates name.
  std::vector<Policy> policies;
  std::map<std::string, size_t> index;
  auto policy_for = [&](const std::string& name) -> Policy& {
    auto [it, added] = index.emplace(name, policies.size());
    if (added) policies.push_back(Policy{name, static_cast<int>(policies.size()), {}, nullptr});
    return policies[it->second];
  };
  size_t run_count = 0;
  std::vector<std::string> seeds;
  std::set<std::string> seen_seeds;
  if (const Json* runs = Get(summary, "runs"); runs != nullptr && runs->is_array()) {
    for (const Json& run : *runs) {
      if (!run.is_object()) continue;
      policy_for(PolicyName(Get(run, "policy"))).runs.push_back(&run);
      ++run_count;
      const std::string seed = Text(Get(run, "seed"));
      if (!seed.empty() && seen_seeds.insert(seed).second) seeds.push_back(seed);
    }
  }
  if (const Json* bp = Get(summary, "by_policy"); bp != nullptr && bp->is_object()) {
    for (const auto& item : bp->items()) {
      if (item.value().is_object()) policy_for(PolicyName(item.key())).by_policy = &item.value();
    }
  }
  const bool has_rows = timeseries.is_array() && !timeseries.empty();
  if (has_rows) {
    for (const Json& row : timeseries) {
      if (row.is_object()) policy_for(PolicyName(Get(row, "policy")));
    }
  }
  const Json* published = Get(summary, "published");
  if (published != nullptr && !published->is_object()) published = nullptr;

  // --- Header.
  std::string title = Text(Get(summary, "title"));
  if (title.empty()) title = "Gantry simulation report";
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>" +
      HtmlEscape(title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n<main>\n";
  html += "<h1>" + HtmlEscape(title) + "</h1>\n<dl class=\"inputs\">\n";
  for (const auto& [key, label] : std::vector<std::pair<std::string, std::string>>{
           {"cluster", "Cluster"}, {"workload", "Workload"}, {"protocol", "Protocol"}}) {
    const std::string value = Text(Get(summary, key));
    if (!value.empty()) html += "<dt>" + label + "</dt><dd>" + HtmlEscape(value) + "</dd>\n";
  }
  html += "</dl>\n<p class=\"note\">Generated by Gantry's simulator from " +
          std::to_string(run_count) + (run_count == 1 ? " run" : " runs") + " of " +
          std::to_string(policies.size()) + (policies.size() == 1 ? " policy" : " policies");
  if (!seeds.empty()) {
    html += seeds.size() == 1 ? " (seed " : " (seeds ";
    for (size_t i = 0; i < seeds.size() && i < 20; ++i)
      html += (i ? ", " : "") + HtmlEscape(seeds[i]);
    if (seeds.size() > 20) html += ", … " + std::to_string(seeds.size()) + " in all";
    html += ")";
  }
  html += ".";
  if (const std::string when = Text(Get(summary, "generated_at")); !when.empty())
    html += " Written " + HtmlEscape(when) + ".";
  html += " Self-contained: no scripts, nothing fetched.</p>\n";

  if (policies.empty()) {
    html +=
        "<p class=\"empty\">No data: the summary holds no runs and there is no time "
        "series to chart.</p>\n</main>\n</body>\n</html>\n";
    return html;
  }

  // --- Headline tables.
  // The end of arrival: the by_policy key alloc_pct_<N>_mean with the largest N, else the
  // largest x any run's curve reaches.
  std::optional<double> end_x;
  for (const Policy& p : policies) {
    if (p.by_policy == nullptr) continue;
    for (const auto& item : p.by_policy->items()) {
      const std::string& k = item.key();
      const std::string pre = "alloc_pct_", post = "_mean";
      if (k.size() <= pre.size() + post.size() || k.compare(0, pre.size(), pre) != 0 ||
          k.compare(k.size() - post.size(), post.size(), post) != 0)
        continue;
      const auto n = ParseNumber(k.substr(pre.size(), k.size() - pre.size() - post.size()));
      if (n && (!end_x || *n > *end_x)) end_x = n;
    }
  }
  for (const Policy& p : policies) {
    for (const Json* run : p.runs) {
      const Points c = Curve(Get(*run, "alloc_pct"));
      if (!c.empty() && (!end_x || c.back().first > *end_x)) end_x = c.back().first;
    }
  }
  const std::string end_key = end_x ? FormatFixed(*end_x, 0) : "130";
  const double end_at = end_x ? *end_x : 130;

  Column name_col{"Policy", Better::kNone, {}, true};
  Column runs_col{"Runs", Better::kNone, {}, false};
  Column alloc_col{"GPU allocation (%)", Better::kHigher, {}, false};
  Column frag_col{"Fragmentation (%)", Better::kLower, {}, false};
  Column failed_col{"Failed pods", Better::kLower, {}, false};
  Column pub_col{"Published (%)", Better::kNone, {}, false};
  Column diff_col{"Δ vs published (pp)", Better::kNone, {}, false};
  Column jct_col{"JCT mean", Better::kLower, {}, false};
  Column p95_col{"JCT p95", Better::kLower, {}, false};
  Column wait_col{"Wait mean", Better::kLower, {}, false};
  Column galloc_col{"GPU allocation mean (%)", Better::kHigher, {}, false};
  Column ftask_col{"Failed tasks", Better::kLower, {}, false};
  Column preempt_col{"Preempted tasks", Better::kLower, {}, false};
  for (const Policy& p : policies) {
    name_col.cells.push_back(Cell{PolicyLabelHtml(p), std::nullopt});
    std::optional<double> n_runs =
        p.runs.empty() ? std::nullopt : std::optional<double>(static_cast<double>(p.runs.size()));
    if (!n_runs && p.by_policy != nullptr) n_runs = NumberAt(*p.by_policy, "runs");
    runs_col.cells.push_back(n_runs ? std::optional<Cell>(Cell{FormatFixed(*n_runs, 0), n_runs})
                                    : std::nullopt);

    const Stat alloc = PolicyStat(
        p, "alloc_pct_" + end_key + "_mean", "alloc_pct_" + end_key + "_std",
        RunValues(p, [&](const Json& r) { return EndValue(Curve(Get(r, "alloc_pct")), end_at); }));
    alloc_col.cells.push_back(PctCell(alloc));
    frag_col.cells.push_back(PctCell(PolicyStat(
        p, "frag_pct_" + end_key + "_mean", "frag_pct_" + end_key + "_std",
        RunValues(p, [&](const Json& r) { return EndValue(Curve(Get(r, "frag_pct")), end_at); }))));

    const Stat failed =
        PolicyStat(p, "failed_pods_mean", "failed_pods_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "failed_pods"); }));
    const Stat pods = PolicyStat(p, "pods_mean", "",
                                 RunValues(p, [](const Json& r) { return NumberAt(r, "pods"); }));
    std::optional<Cell> failed_cell = CountCell(failed);
    if (failed_cell && pods.mean && *pods.mean > 0)
      failed_cell->text += " (" + FormatFixed(100 * *failed.mean / *pods.mean, 2) + "%)";
    failed_col.cells.push_back(failed_cell);

    const auto pub = published != nullptr ? NumberAt(*published, p.name) : std::nullopt;
    pub_col.cells.push_back(pub ? std::optional<Cell>(Cell{FormatFixed(*pub, 2), pub})
                                : std::nullopt);
    diff_col.cells.push_back(
        pub && alloc.mean ? std::optional<Cell>(Cell{Signed(*alloc.mean - *pub, 2), std::nullopt})
                          : std::nullopt);

    jct_col.cells.push_back(DurationCell(
        PolicyStat(p, "jct_mean_s", "jct_mean_s_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "jct_s", "mean"); }))));
    p95_col.cells.push_back(DurationCell(
        PolicyStat(p, "jct_p95_s", "jct_p95_s_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "jct_s", "p95"); }))));
    wait_col.cells.push_back(DurationCell(
        PolicyStat(p, "wait_mean_s", "wait_mean_s_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "wait_s", "mean"); }))));
    galloc_col.cells.push_back(PctCell(
        PolicyStat(p, "gpu_alloc_mean_pct", "gpu_alloc_mean_pct_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "gpu_alloc_mean_pct"); }))));
    ftask_col.cells.push_back(CountCell(
        PolicyStat(p, "failed_tasks_mean", "failed_tasks_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "failed_tasks"); }))));
    preempt_col.cells.push_back(CountCell(
        PolicyStat(p, "preempted_tasks_mean", "preempted_tasks_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "preempted_tasks"); }))));
  }
  auto has_data = [](const std::vector<const Column*>& cols) {
    for (const Column* c : cols) {
      for (const auto& cell : c->cells) {
        if (cell) return true;
      }
    }
    return false;
  };

  html += "<h2>Headline figures</h2>\n";
  bool any_table = false;
  if (has_data({&alloc_col, &frag_col, &failed_col, &pub_col})) {
    any_table = true;
    html += "<h3>Once GPU demand of " + end_key + "% of capacity has arrived</h3>\n" +
            RenderTable({name_col, runs_col, alloc_col, frag_col, failed_col, pub_col, diff_col},
                        "headline allocation");
    html +=
        "<p class=\"note\">Mean ± sample standard deviation over seeds. GPU allocation and "
        "fragmentation are percentages of the cluster's GPU capacity; failed pods also as a share "
        "of the pods that arrived; Δ is in percentage points. Best in bold.</p>\n";
  }
  if (has_data({&jct_col, &p95_col, &wait_col, &galloc_col, &ftask_col, &preempt_col})) {
    any_table = true;
    html += "<h3>Job timing</h3>\n" + RenderTable({name_col, runs_col, jct_col, p95_col, wait_col,
                                                   galloc_col, ftask_col, preempt_col},
                                                  "headline timing");
    html +=
        "<p class=\"note\">Mean over seeds (± sample standard deviation where there are "
        "several). JCT: job completion time; wait: time queued before starting. Best in "
        "bold.</p>\n";
  }
  if (!any_table) html += "<p class=\"empty\">No headline figures in the summary.</p>\n";

  // --- Charts.
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
    if (end_at <= 200) demand.step = end_at <= 150 ? 10.0 : 20.0;  // a tick at 130
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
  if (!charts.empty()) html += "<h2>Charts</h2>\n<div class=\"charts\">\n" + charts + "</div>\n";
  html += RenderFairnessHtml(summary);
  html += RenderTopologyHtml(summary);
  html += RenderDatasetsHtml(summary);
  html += RenderDefragmentHtml(summary);

  // --- Per-run detail, folded away: it is for checking, not for reading first.
  if (run_count > 0) {
    Column pol{"Policy", Better::kNone, {}, true}, seed{"Seed", Better::kNone, {}, false};
    Column pods{"Pods", Better::kNone, {}, false}, failed{"Failed pods", Better::kNone, {}, false};
    Column a_end{"GPU alloc at " + end_key + "% (%)", Better::kNone, {}, false};
    Column f_end{"Frag at " + end_key + "% (%)", Better::kNone, {}, false};
    Column jct{"JCT mean", Better::kNone, {}, false}, p95{"JCT p95", Better::kNone, {}, false};
    Column wait{"Wait mean", Better::kNone, {}, false};
    Column gal{"GPU alloc mean (%)", Better::kNone, {}, false};
    Column ft{"Failed tasks", Better::kNone, {}, false};
    Column pt{"Preempted", Better::kNone, {}, false};
    Column wall{"Wall time (s)", Better::kNone, {}, false};
    auto num = [](std::optional<double> v, int decimals) -> std::optional<Cell> {
      if (!v) return std::nullopt;
      return Cell{FormatFixed(*v, decimals), v};
    };
    auto dur = [](std::optional<double> v) -> std::optional<Cell> {
      return v ? DurationCell(Stat{v, std::nullopt}) : std::nullopt;
    };
    for (const Policy& p : policies) {
      for (const Json* r : p.runs) {
        pol.cells.push_back(Cell{PolicyLabelHtml(p), std::nullopt});
        const std::string s = Text(Get(*r, "seed"));
        seed.cells.push_back(s.empty() ? std::nullopt : std::optional<Cell>(Cell{s, std::nullopt}));
        pods.cells.push_back(num(NumberAt(*r, "pods"), 0));
        failed.cells.push_back(num(NumberAt(*r, "failed_pods"), 0));
        a_end.cells.push_back(num(EndValue(Curve(Get(*r, "alloc_pct")), end_at), 2));
        f_end.cells.push_back(num(EndValue(Curve(Get(*r, "frag_pct")), end_at), 2));
        jct.cells.push_back(dur(NumberAt(*r, "jct_s", "mean")));
        p95.cells.push_back(dur(NumberAt(*r, "jct_s", "p95")));
        wait.cells.push_back(dur(NumberAt(*r, "wait_s", "mean")));
        gal.cells.push_back(num(NumberAt(*r, "gpu_alloc_mean_pct"), 2));
        ft.cells.push_back(num(NumberAt(*r, "failed_tasks"), 0));
        pt.cells.push_back(num(NumberAt(*r, "preempted_tasks"), 0));
        wall.cells.push_back(num(NumberAt(*r, "wall_s"), 2));
      }
    }
    html += "<details>\n<summary>Per-run results (" + std::to_string(run_count) +
            " runs)</summary>\n" +
            RenderTable({pol, seed, pods, failed, a_end, f_end, jct, p95, wait, gal, ft, pt, wall},
                        "runs");
    html += "</details>\n";
  }

  html += "</main>\n</body>\n</html>\n";
  return html;
}

}  // namespace gantry
