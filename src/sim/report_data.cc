#include "sim/report_data.h"

#include <cmath>
#include <cstdlib>

#include "sim/stats.h"

namespace gantry::report {

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

std::string PolicyName(const std::string& name) {
  return name.empty() ? "(unnamed)" : name;
}
std::string PolicyName(const Json* j) {
  return PolicyName(Text(j));
}

Stat Summarize(const std::vector<double>& v) {
  Stat s;
  if (v.empty()) return s;
  const SampleStats stats = MeanAndStd(v);
  s.mean = stats.mean;
  if (v.size() >= 2) s.std = stats.std;
  return s;
}

Stat PolicyStat(const Policy& p, const std::string& mean_key, const std::string& std_key,
                const std::vector<double>& run_values) {
  Stat s = Summarize(run_values);
  if (p.by_policy != nullptr) {
    if (const auto m = NumberAt(*p.by_policy, mean_key)) s.mean = m;
    if (const auto sd = NumberAt(*p.by_policy, std_key)) s.std = sd;
  }
  return s;
}

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

std::optional<double> EndValue(const Points& curve, double x) {
  if (curve.empty()) return std::nullopt;
  for (const auto& pt : curve) {
    if (pt.first == x) return pt.second;
  }
  return curve.back().second;
}

std::pair<double, const char*> DurationUnit(double seconds) {
  const double a = std::abs(seconds);
  if (a >= 2 * 86400.0) return {86400.0, "d"};
  if (a >= 2 * 3600.0) return {3600.0, "h"};
  if (a >= 120.0) return {60.0, "min"};
  return {1.0, "s"};
}

EndOfArrival FindEndOfArrival(const std::vector<Policy>& policies) {
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
  EndOfArrival out;
  out.key = end_x ? FormatFixed(*end_x, 0) : "130";
  out.at = end_x ? *end_x : 130;
  return out;
}

std::string Signed(double v, int decimals) {
  std::string s = FormatFixed(v, decimals);
  // Prepended, not inserted: GCC 12 warns (wrongly, -Wrestrict) on insert(0, "+") here.
  if (s[0] != '-' && s.find_first_not_of("0.") != std::string::npos) s = "+" + s;
  return s;
}

}  // namespace gantry::report
