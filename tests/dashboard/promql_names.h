// The metric names a PromQL expression queries, and the expressions of a Grafana dashboard:
// what tests/unit/promql_names_test.cc and tests/integration/dashboard_test.cc check
// deploy/grafana/gantry.json with, so that a renamed metric fails a test, not a dashboard.
//
// Not a PromQL parser: a tokenizer that knows what is not a metric name (functions and
// aggregations, followed by "(" or by by/without; label names inside {} and inside the
// parentheses after by, without, on, ignoring, group_left, group_right; keywords;
// strings; numbers and durations; Grafana's $variables).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::testing {

inline bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

inline bool IsNameChar(char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9');
}

// Words that are never metric names where they stand without "(" after them.
inline bool IsPromqlKeyword(std::string_view word) {
  static const std::set<std::string_view> kWords = {
      // aggregations (may be followed by `by (...)` before their "(")
      "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
      "topk", "quantile", "limitk", "limit_ratio",
      // binary operators and modifiers
      "and", "or", "unless", "atan2", "bool", "by", "without", "on", "ignoring", "group_left",
      "group_right", "offset", "start", "end",
      // number literals
      "inf", "nan", "Inf", "NaN"};
  return kWords.count(word) > 0;
}

// Where the matching `close` of the bracket at `open_at` is (or text.size()), skipping strings.
inline size_t SkipBracket(std::string_view text, size_t open_at, char open, char close) {
  int depth = 0;
  for (size_t i = open_at; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'' || c == '`') {
      const size_t end = text.find(c, i + 1);
      if (end == std::string_view::npos) return text.size();
      i = end;
    } else if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      return i;
    }
  }
  return text.size();
}

// The metric names `expr` selects, in order of appearance, each once.
inline std::vector<std::string> PromqlMetricNames(std::string_view expr) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  bool labels_follow = false;  // the last word was by/without/on/ignoring/group_*
  size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      const size_t end = expr.find(c, i + 1);
      i = end == std::string_view::npos ? expr.size() : end + 1;
      continue;
    }
    if (c == '{') {
      i = SkipBracket(expr, i, '{', '}') + 1;
      continue;
    }
    if (c == '[') {
      i = SkipBracket(expr, i, '[', ']') + 1;
      continue;
    }
    if (c == '(' && labels_follow) {
      i = SkipBracket(expr, i, '(', ')') + 1;
      labels_follow = false;
      continue;
    }
    if (c == '$') {
      // $var, ${var}, $__rate_interval: Grafana's, never a metric.
      ++i;
      if (i < expr.size() && expr[i] == '{') {
        i = SkipBracket(expr, i, '{', '}') + 1;
      } else {
        while (i < expr.size() && IsNameChar(expr[i])) ++i;
      }
      continue;
    }
    if ((c >= '0' && c <= '9') ||
        (c == '.' && i + 1 < expr.size() && expr[i + 1] >= '0' && expr[i + 1] <= '9')) {
      // 0.99, 1e3, 0x1f, 5m: a number or a duration, letters and all.
      while (i < expr.size() && (IsNameChar(expr[i]) || expr[i] == '.')) ++i;
      continue;
    }
    if (!IsNameStart(c)) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < expr.size() && IsNameChar(expr[i])) ++i;
    const std::string word(expr.substr(start, i - start));
    size_t next = i;
    while (next < expr.size() && (expr[next] == ' ' || expr[next] == '\t' || expr[next] == '\n'))
      ++next;
    const bool call = next < expr.size() && expr[next] == '(';
    labels_follow = word == "by" || word == "without" || word == "on" || word == "ignoring" ||
                    word == "group_left" || word == "group_right";
    if (call || IsPromqlKeyword(word)) continue;
    if (seen.insert(word).second) names.push_back(word);
  }
  return names;
}

// A histogram's series name to its family: x_bucket, x_sum, x_count -> x, when `families`
// declares x; any other name as it is.
inline std::string MetricFamilyOf(const std::string& name, const std::set<std::string>& families) {
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      std::string family = name.substr(0, name.size() - suffix.size());
      if (families.count(family) > 0) return family;
    }
  }
  return name;
}

// The families a Prometheus text exposition declares (its "# TYPE name type" lines).
inline std::set<std::string> ExposedFamilies(const std::string& exposition) {
  std::set<std::string> out;
  size_t pos = 0;
  while (pos < exposition.size()) {
    size_t end = exposition.find('\n', pos);
    if (end == std::string::npos) end = exposition.size();
    std::string_view line(exposition.data() + pos, end - pos);
    if (line.starts_with("# TYPE ")) {
      line.remove_prefix(7);
      out.insert(std::string(line.substr(0, line.find(' '))));
    }
    pos = end + 1;
  }
  return out;
}

// Every PromQL expression of a dashboard: each panel's targets (rows' panels included), and
// the metric of each `label_values(metric, label)` variable query, as an expression of it.
struct DashboardQuery {
  std::string where;  // "panel \"Cycle time\" target A", "variable job"
  std::string expr;
};

inline void CollectPanelQueries(const nlohmann::json& panels, std::vector<DashboardQuery>* out) {
  if (!panels.is_array()) return;
  for (const nlohmann::json& panel : panels) {
    const std::string title = panel.value("title", std::string("(untitled)"));
    if (panel.contains("targets") && panel["targets"].is_array()) {
      for (const nlohmann::json& target : panel["targets"]) {
        if (!target.contains("expr")) continue;
        out->push_back({"panel \"" + title + "\" target " + target.value("refId", std::string("?")),
                        target["expr"].get<std::string>()});
      }
    }
    if (panel.contains("panels")) CollectPanelQueries(panel["panels"], out);
  }
}

inline std::vector<DashboardQuery> DashboardQueries(const nlohmann::json& dashboard) {
  std::vector<DashboardQuery> out;
  CollectPanelQueries(dashboard.value("panels", nlohmann::json::array()), &out);
  const nlohmann::json variables = dashboard.value("templating", nlohmann::json::object())
                                       .value("list", nlohmann::json::array());
  for (const nlohmann::json& v : variables) {
    if (v.value("type", std::string()) != "query") continue;
    std::string query = v.value("definition", std::string());
    if (query.empty() && v.contains("query") && v["query"].is_object()) {
      query = v["query"].value("query", std::string());
    }
    // label_values(metric{...}, label): the metric part is an expression; the label is not.
    const std::string_view prefix = "label_values(";
    if (!query.starts_with(prefix)) continue;
    const std::string inner = query.substr(prefix.size());
    const size_t comma = inner.rfind(',');
    out.push_back(
        {"variable " + v.value("name", std::string("?")),
         comma == std::string::npos ? inner.substr(0, inner.rfind(')')) : inner.substr(0, comma)});
  }
  return out;
}

}  // namespace gantry::testing
