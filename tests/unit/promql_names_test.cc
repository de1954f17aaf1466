// The PromQL tokenizer the dashboard test reads expressions with (tests/dashboard/promql_names.h).
#include "tests/dashboard/promql_names.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gantry::testing {
namespace {

using Names = std::vector<std::string>;

TEST(PromqlNames, MetricNamesOnly) {
  const std::pair<const char*, Names> cases[] = {
      {"gantry_nodes", {"gantry_nodes"}},
      {"max(gantry_gpus_allocated{job=~\"$job\"}) / max(gantry_gpus_capacity)",
       {"gantry_gpus_allocated", "gantry_gpus_capacity"}},
      // Aggregation with by before its argument; label names in by (...) and in {}.
      {"histogram_quantile(0.99, sum by (le) (rate(gantry_cycle_duration_seconds_bucket"
       "{job=~\"$job\"}[$__rate_interval])))",
       {"gantry_cycle_duration_seconds_bucket"}},
      {"sum without (instance, pod) (increase(gantry_evictions_total[5m]))",
       {"gantry_evictions_total"}},
      // on (...) and group_left (...) hold labels; `and`, `bool`, `offset` are keywords.
      {"a_metric / on (queue) group_left (resource) b_metric > bool 0 and c_metric offset 1h",
       {"a_metric", "b_metric", "c_metric"}},
      {"sum(x) by (queue)", {"x"}},
      // Strings, numbers in every spelling, Grafana variables in both forms.
      {"label_replace(up{job=\"a\"}, \"dst\", \"$1\", \"src\", \"(.*)\") * 1e3 + 0x1f - .5",
       {"up"}},
      {"topk(5, gantry_queue_allocated{resource=\"${resource}\"}) * $scale",
       {"gantry_queue_allocated"}},
      // A name inside a matcher's value or after __name__= is not read as a selector.
      {"count({__name__=\"not_this\"})", {}},
      // Each name once, in order; a name that looks like a keyword prefix is a name.
      {"sum_of_things + by_queue + sum_of_things", {"sum_of_things", "by_queue"}},
      // Whitespace before "(" still makes a call; recording-rule names with colons.
      {"rate (job:gantry_binds:rate5m [5m])", {"job:gantry_binds:rate5m"}},
  };
  for (const auto& [expr, want] : cases) EXPECT_EQ(PromqlMetricNames(expr), want) << expr;
}

TEST(PromqlNames, HistogramSeriesToTheirFamily) {
  const std::set<std::string> families = {"gantry_cycle_duration_seconds", "gantry_nodes",
                                          "gantry_pods_count"};
  EXPECT_EQ(MetricFamilyOf("gantry_cycle_duration_seconds_bucket", families),
            "gantry_cycle_duration_seconds");
  EXPECT_EQ(MetricFamilyOf("gantry_cycle_duration_seconds_sum", families),
            "gantry_cycle_duration_seconds");
  EXPECT_EQ(MetricFamilyOf("gantry_nodes", families), "gantry_nodes");
  // A family whose own name ends in _count stays itself.
  EXPECT_EQ(MetricFamilyOf("gantry_pods_count", families), "gantry_pods_count");
  // An unknown name is kept, for the test to report.
  EXPECT_EQ(MetricFamilyOf("gantry_renamed_bucket", families), "gantry_renamed_bucket");
}

TEST(PromqlNames, ExposedFamiliesFromTypeLines) {
  const std::string text =
      "# HELP a_total A.\n# TYPE a_total counter\na_total 3\n"
      "# HELP h_seconds H.\n# TYPE h_seconds histogram\nh_seconds_bucket{le=\"+Inf\"} 1\n"
      "# HELP g G.\n# TYPE g gauge\n";
  EXPECT_EQ(ExposedFamilies(text), (std::set<std::string>{"a_total", "h_seconds", "g"}));
}

TEST(PromqlNames, DashboardQueriesReadPanelsRowsAndVariables) {
  const nlohmann::json dashboard = nlohmann::json::parse(R"json({
    "panels": [
      {"type": "row", "title": "r", "panels": [
        {"title": "inner", "targets": [{"refId": "A", "expr": "x_metric"}]}]},
      {"title": "outer", "targets": [{"refId": "B", "expr": "rate(y_total[5m])"},
                                     {"refId": "C", "datasource": "other"}]}],
    "templating": {"list": [
      {"name": "ds", "type": "datasource", "query": "prometheus"},
      {"name": "res", "type": "query",
       "definition": "label_values(z_metric{a=\"b\"}, resource)"}]}
  })json");
  const std::vector<DashboardQuery> q = DashboardQueries(dashboard);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].where, "panel \"inner\" target A");
  EXPECT_EQ(q[0].expr, "x_metric");
  EXPECT_EQ(q[1].expr, "rate(y_total[5m])");
  EXPECT_EQ(q[2].where, "variable res");
  EXPECT_EQ(PromqlMetricNames(q[2].expr), (Names{"z_metric"}));
}

// The shipped dashboard: valid JSON, a Prometheus data source variable, every panel's
// queries on that variable, and gantry metrics only (which ones exist: dashboard_test.cc).
TEST(PromqlNames, ShippedDashboardQueriesGantryMetrics) {
  std::ifstream in(std::string(GANTRY_SOURCE_DIR) + "/deploy/grafana/gantry.json");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json dashboard = nlohmann::json::parse(text.str());
  EXPECT_GE(dashboard.value("schemaVersion", 0), 39);
  bool has_datasource = false;
  for (const auto& v : dashboard["templating"]["list"]) {
    has_datasource |= v["type"] == "datasource" && v["query"] == "prometheus";
  }
  EXPECT_TRUE(has_datasource);
  const std::vector<DashboardQuery> queries = DashboardQueries(dashboard);
  EXPECT_GE(queries.size(), 20u);
  for (const DashboardQuery& q : queries) {
    const Names names = PromqlMetricNames(q.expr);
    EXPECT_FALSE(names.empty()) << q.where << ": " << q.expr;
    for (const std::string& name : names) {
      EXPECT_TRUE(name.starts_with("gantry_")) << q.where << ": " << name;
    }
  }
}

}  // namespace
}  // namespace gantry::testing
