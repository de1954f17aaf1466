#include "daemon/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace gantry {
namespace {

// Doubles hold every integer up to 2^53 exactly; past it "integral" says little.
constexpr double kMaxExactInteger = 9007199254740992.0;

bool IsMetricName(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Unlike metric names, label names may not contain ':'.
bool IsLabelName(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string EscapeHelp(const std::string& help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// `open` is what OpenLabelSet gave; closes it, or writes nothing for a family without labels.
std::string CloseLabelSet(const std::string& open) {
  return open.empty() ? "" : open + "}";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::trunc(value) && std::fabs(value) < kMaxExactInteger) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, end);
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  if (!(start > 0) || !(factor > 1) || count < 1) return bounds;
  double bound = start;
  for (int i = 0; i < count && std::isfinite(bound); ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

Status Counter::Inc(double delta) {
  if (!std::isfinite(delta) || delta < 0) {
    return Status::Invalid("counter increment must be finite and not negative, got " +
                           FormatMetricValue(delta));
  }
  value_.fetch_add(delta, std::memory_order_relaxed);
  return Status::Ok();
}

void Gauge::Set(double value) {
  value_.store(value, std::memory_order_relaxed);
  published_.store(true, std::memory_order_relaxed);
}

void Gauge::Add(double delta) {
  value_.fetch_add(delta, std::memory_order_relaxed);
  published_.store(true, std::memory_order_relaxed);
}

Histogram::Histogram(const std::vector<double>* upper_bounds)
    : upper_bounds_(upper_bounds), bucket_counts_(upper_bounds->size() + 1, 0) {}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // The first bucket whose bound is >= value: buckets count observations <= their bound.
  size_t bucket =
      static_cast<size_t>(std::lower_bound(upper_bounds_->begin(), upper_bounds_->end(), value) -
                          upper_bounds_->begin());
  std::lock_guard lock(mu_);
  ++bucket_counts_[bucket];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::Collect() const {
  Snapshot snap;
  std::lock_guard lock(mu_);
  snap.cumulative_counts.reserve(bucket_counts_.size());
  uint64_t running = 0;
  for (uint64_t c : bucket_counts_) {
    running += c;
    snap.cumulative_counts.push_back(running);
  }
  snap.sum = sum_;
  snap.count = count_;
  return snap;
}

MetricFamilyBase::MetricFamilyBase(std::string name, std::string help, std::string type,
                                   std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      label_names_(std::move(label_names)) {}

std::string MetricFamilyBase::OpenLabelSet(const LabelValues& values) const {
  if (label_names_.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < label_names_.size(); ++i) {
    if (i > 0) out += ',';
    out += label_names_[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  return out;
}

Status MetricFamilyBase::CheckArity(const LabelValues& values) const {
  if (values.size() == label_names_.size()) return Status::Ok();
  return Status::Invalid("metric " + name_ + ": " + std::to_string(values.size()) +
                         " label values given for " + std::to_string(label_names_.size()) +
                         " label names (" + JoinNames(label_names_) + ")");
}

template <typename Child>
Child& MetricFamily<Child>::With(const LabelValues& values) {
  std::lock_guard lock(mu_);
  if (values.size() != label_names().size()) {
    if (!detached_) detached_ = NewChild();
    return *detached_;
  }
  return FindOrCreateLocked(values);
}

template <typename Child>
Result<Child*> MetricFamily<Child>::TryWith(const LabelValues& values) {
  GANTRY_RETURN_IF_ERROR(CheckArity(values));
  std::lock_guard lock(mu_);
  return &FindOrCreateLocked(values);
}

template <typename Child>
Child& MetricFamily<Child>::FindOrCreateLocked(const LabelValues& values) {
  auto it = children_.find(values);
  if (it == children_.end()) it = children_.emplace(values, NewChild()).first;
  return *it->second;
}

template class MetricFamily<Counter>;
template class MetricFamily<Gauge>;
template class MetricFamily<Histogram>;

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : MetricFamily(std::move(name), std::move(help), "counter", std::move(label_names)) {}

std::unique_ptr<Counter> CounterFamily::NewChild() const {
  return std::make_unique<Counter>();
}

void CounterFamily::RenderSamples(std::string* out) const {
  std::lock_guard lock(mu_);
  for (const auto& [values, counter] : children_) {
    *out += name() + CloseLabelSet(OpenLabelSet(values)) + " " +
            FormatMetricValue(counter->Value()) + "\n";
  }
}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : MetricFamily(std::move(name), std::move(help), "gauge", std::move(label_names)) {}

std::unique_ptr<Gauge> GaugeFamily::NewChild() const {
  return std::make_unique<Gauge>();
}

void GaugeFamily::Reset() {
  std::lock_guard lock(mu_);
  for (auto& [values, gauge] : children_) {
    gauge->value_.store(0, std::memory_order_relaxed);
    gauge->published_.store(false, std::memory_order_relaxed);
  }
}

Status GaugeFamily::Replace(const std::vector<std::pair<LabelValues, double>>& values) {
  for (const auto& [labels, value] : values) GANTRY_RETURN_IF_ERROR(CheckArity(labels));
  std::lock_guard lock(mu_);
  for (auto& [labels, gauge] : children_) {
    gauge->value_.store(0, std::memory_order_relaxed);
    gauge->published_.store(false, std::memory_order_relaxed);
  }
  for (const auto& [labels, value] : values) FindOrCreateLocked(labels).Set(value);
  return Status::Ok();
}

void GaugeFamily::RenderSamples(std::string* out) const {
  std::lock_guard lock(mu_);
  for (const auto& [values, gauge] : children_) {
    if (!gauge->published_.load(std::memory_order_relaxed)) continue;
    *out += name() + CloseLabelSet(OpenLabelSet(values)) + " " + FormatMetricValue(gauge->Value()) +
            "\n";
  }
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<double> upper_bounds,
                                 std::vector<std::string> label_names)
    : MetricFamily(std::move(name), std::move(help), "histogram", std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {}

std::unique_ptr<Histogram> HistogramFamily::NewChild() const {
  return std::make_unique<Histogram>(&upper_bounds_);
}

void HistogramFamily::RenderSamples(std::string* out) const {
  std::lock_guard lock(mu_);
  for (const auto& [values, histogram] : children_) {
    Histogram::Snapshot snap = histogram->Collect();
    std::string open = OpenLabelSet(values);
    std::string le_prefix = open.empty() ? "{le=\"" : open + ",le=\"";
    for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
      std::string bound = i < upper_bounds_.size() ? FormatMetricValue(upper_bounds_[i]) : "+Inf";
      *out += name() + "_bucket" + le_prefix + bound + "\"} " +
              std::to_string(snap.cumulative_counts[i]) + "\n";
    }
    std::string labels = CloseLabelSet(open);
    *out += name() + "_sum" + labels + " " + FormatMetricValue(snap.sum) + "\n";
    *out += name() + "_count" + labels + " " + std::to_string(snap.count) + "\n";
  }
}

Status MetricsRegistry::Reserve(const std::string& name,
                                const std::vector<std::string>& label_names,
                                const std::vector<std::string>& suffixes) {
  if (!IsMetricName(name)) {
    return Status::Invalid("metric name \"" + name + "\" does not match [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
  std::set<std::string> seen;
  for (const std::string& label : label_names) {
    if (!IsLabelName(label)) {
      return Status::Invalid("metric " + name + ": label name \"" + label +
                             "\" does not match [a-zA-Z_][a-zA-Z0-9_]*");
    }
    if (label.starts_with("__")) {
      return Status::Invalid("metric " + name + ": label name \"" + label +
                             "\" starts with \"__\", which Prometheus reserves");
    }
    if (!seen.insert(label).second) {
      return Status::Invalid("metric " + name + ": label name \"" + label + "\" appears twice");
    }
  }
  std::vector<std::string> names = {name};
  for (const std::string& suffix : suffixes) names.push_back(name + suffix);
  for (const std::string& n : names) {
    if (taken_names_.count(n) > 0) {
      return Status::Invalid("metric name \"" + n + "\" is already registered" +
                             (n == name ? "" : " (histogram " + name + " needs it)"));
    }
  }
  taken_names_.insert(names.begin(), names.end());
  return Status::Ok();
}

Result<CounterFamily*> MetricsRegistry::AddCounter(std::string name, std::string help,
                                                   std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  GANTRY_RETURN_IF_ERROR(Reserve(name, label_names, {}));
  auto family =
      std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(label_names));
  // A family without labels has its one sample from the start, at 0.
  if (family->label_names().empty()) family->With({});
  CounterFamily* ptr = family.get();
  families_.push_back(std::move(family));
  return ptr;
}

Result<GaugeFamily*> MetricsRegistry::AddGauge(std::string name, std::string help,
                                               std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  GANTRY_RETURN_IF_ERROR(Reserve(name, label_names, {}));
  auto family =
      std::make_unique<GaugeFamily>(std::move(name), std::move(help), std::move(label_names));
  if (family->label_names().empty()) family->With({});
  GaugeFamily* ptr = family.get();
  families_.push_back(std::move(family));
  return ptr;
}

Result<HistogramFamily*> MetricsRegistry::AddHistogram(std::string name, std::string help,
                                                       std::vector<double> upper_bounds,
                                                       std::vector<std::string> label_names) {
  // +Inf is always the last bucket; accept it spelled out.
  if (!upper_bounds.empty() && upper_bounds.back() == std::numeric_limits<double>::infinity())
    upper_bounds.pop_back();
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    if (!std::isfinite(upper_bounds[i])) {
      return Status::Invalid("histogram " + name + ": bucket bound " +
                             FormatMetricValue(upper_bounds[i]) + " is not a finite number");
    }
    if (i > 0 && !(upper_bounds[i - 1] < upper_bounds[i])) {
      return Status::Invalid("histogram " + name + ": bucket bounds must increase strictly, " +
                             FormatMetricValue(upper_bounds[i - 1]) + " is followed by " +
                             FormatMetricValue(upper_bounds[i]));
    }
  }
  if (std::find(label_names.begin(), label_names.end(), "le") != label_names.end()) {
    return Status::Invalid("histogram " + name + ": label name \"le\" is reserved for buckets");
  }
  std::lock_guard lock(mu_);
  GANTRY_RETURN_IF_ERROR(Reserve(name, label_names, {"_bucket", "_sum", "_count"}));
  auto family = std::make_unique<HistogramFamily>(std::move(name), std::move(help),
                                                  std::move(upper_bounds), std::move(label_names));
  if (family->label_names().empty()) family->With({});
  HistogramFamily* ptr = family.get();
  families_.push_back(std::move(family));
  return ptr;
}

std::string MetricsRegistry::Render() const {
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& family : families_) {
    out += "# HELP " + family->name() + " " + EscapeHelp(family->help()) + "\n";
    out += "# TYPE " + family->name() + " " + family->type() + "\n";
    family->RenderSamples(&out);
  }
  return out;
}

}  // namespace gantry
