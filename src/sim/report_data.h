// The simulator report's reading of its input (sim/report.h): JSON read leniently, the
// policies with their runs and aggregates, their statistics, and what the report's parts
// (report.cc, report_tables.cc, report_charts.cc) share. Names are in gantry::report: they
// are the report's, not the simulator's.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/svg_chart.h"

namespace gantry::report {

using Json = nlohmann::ordered_json;
using Points = std::vector<std::pair<double, double>>;

// Enough to follow a curve on a page ~600 px wide, small enough that 7 policies x several
// charts stay well under a few hundred KB.
inline constexpr size_t kMaxPointsPerSeries = 500;

// ---- JSON access: values of the wrong type read as absent, never throw.
const Json* Get(const Json& j, const std::string& key);
std::optional<double> Number(const Json* j);
std::optional<double> NumberAt(const Json& j, const std::string& key);
std::optional<double> NumberAt(const Json& j, const std::string& key, const std::string& sub);
// Strings as they are, other scalars as JSON; invalid UTF-8 must not throw mid-report.
std::string Text(const Json* j);
std::optional<double> ParseNumber(const std::string& s);
// A curve: [[x, y], ...] with both numbers; other entries are skipped.
Points Curve(const Json* j);
// Runs, aggregates and rows name their policy the same way, so they meet in one entry.
std::string PolicyName(const std::string& name);
std::string PolicyName(const Json* j);

// ---- The data.
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

Stat Summarize(const std::vector<double>& v);
// The aggregate the simulator wrote when it is there, else one computed from the runs.
Stat PolicyStat(const Policy& p, const std::string& mean_key, const std::string& std_key,
                const std::vector<double>& run_values);

template <typename F>
std::vector<double> RunValues(const Policy& p, F&& value) {
  std::vector<double> out;
  for (const Json* run : p.runs) {
    if (const std::optional<double> v = value(*run)) out.push_back(*v);
  }
  return out;
}

// The mean over the policy's runs at each x any of them has.
Points MeanCurve(const Policy& p, const std::string& key);
// The value at `x`, else at the largest x (the end of arrival).
std::optional<double> EndValue(const Points& curve, double x);
// Seconds in the unit that suits their size, so "20.61 min" rather than "1236.60 s".
std::pair<double, const char*> DurationUnit(double seconds);

// The end of arrival that the headline figures are taken at: the by_policy key
// alloc_pct_<N>_mean with the largest N, else the largest x any run's curve reaches, else
// 130 (% of capacity).
struct EndOfArrival {
  std::string key;  // N as the keys write it
  double at = 130;
};
EndOfArrival FindEndOfArrival(const std::vector<Policy>& policies);

// ---- The parts of the page.
// "+1.25" / "-0.50" / "0.00".
std::string Signed(double v, int decimals);
// The headline tables (allocation and fragmentation at the end of arrival; job timing),
// or a line saying there are none.
std::string RenderHeadlineTables(const std::vector<Policy>& policies, const Json* published,
                                 const EndOfArrival& end);
// Every run's figures, folded away; "" without runs.
std::string RenderRunsTable(const std::vector<Policy>& policies, size_t run_count,
                            const EndOfArrival& end);
// The charts: allocation and fragmentation against arrived demand, the time series (rows of
// `timeseries`, binned), the job completion time CDF; "" when none has data. `index`:
// policy name -> index in `policies`.
std::string RenderCharts(const std::vector<Policy>& policies,
                         const std::map<std::string, size_t>& index, const Json& timeseries,
                         const EndOfArrival& end);

}  // namespace gantry::report
