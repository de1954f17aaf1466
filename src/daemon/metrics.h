// A small thread-safe Prometheus metrics registry for the daemon's /metrics endpoint.
//
// There is no global registry: the daemon owns one MetricsRegistry and hands the families
// it registers to the parts that update them. Render() writes the Prometheus text
// exposition format 0.0.4.
//
// Errors follow the rest of the project: registering a bad or duplicate name returns a
// Status instead of aborting, because metric names may one day come from configuration.
// Updates on the hot path (Inc, Set, Observe) never fail loudly: a counter refuses a
// negative increment with a Status, and With() with the wrong number of label values
// returns a detached child that takes updates but is never exported (TryWith() reports
// the mistake instead, for label values that come from input).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "model/status.h"

namespace gantry {

using LabelValues = std::vector<std::string>;

// The number as the exposition format writes it: integral values below 2^53 as plain
// digits ("3", "1000000"), other values in the shortest form that reads back to the same
// double ("0.25", "1e-07", "1.5e+300"), and "+Inf", "-Inf", "NaN".
std::string FormatMetricValue(double value);

// `count` bucket bounds start, start*factor, start*factor^2, ...; empty when the
// arguments cannot give increasing positive bounds (start <= 0, factor <= 1, count < 1).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

// A value that only goes up (requests served, pods bound).
class Counter {
 public:
  // Refuses negative and non-finite deltas: a counter that went down would read as a
  // process restart to Prometheus' rate().
  Status Inc(double delta = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down (pending pods, free GPUs).
class Gauge {
 public:
  void Set(double value);
  void Add(double delta);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  friend class GaugeFamily;
  std::atomic<double> value_{0};
  // Cleared by GaugeFamily::Reset(); any update publishes the gauge again.
  std::atomic<bool> published_{true};
};

// Observations counted into buckets (scheduling cycle latency, bind latency).
class Histogram {
 public:
  struct Snapshot {
    std::vector<uint64_t> cumulative_counts;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };

  // `upper_bounds` must outlive the histogram; the family that creates it owns them.
  explicit Histogram(const std::vector<double>* upper_bounds);

  // NaN is dropped: it would turn _sum into NaN for the life of the process.
  void Observe(double value);
  Snapshot Collect() const;

 private:
  const std::vector<double>* upper_bounds_;
  // One lock rather than atomics so that a scrape sees buckets, sum and count that agree.
  mutable std::mutex mu_;
  std::vector<uint64_t> bucket_counts_;  // not cumulative; last one is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// What every family has: a name, help, label names, and how it writes its samples.
class MetricFamilyBase {
 public:
  MetricFamilyBase(std::string name, std::string help, std::string type,
                   std::vector<std::string> label_names);
  virtual ~MetricFamilyBase() = default;
  MetricFamilyBase(const MetricFamilyBase&) = delete;
  MetricFamilyBase& operator=(const MetricFamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::string& type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends this family's sample lines (not HELP/TYPE) in label-value order.
  virtual void RenderSamples(std::string* out) const = 0;

 protected:
  // `{a="x",b="y"` without the closing brace, or "" when there are no labels; histograms
  // add `le` before closing it.
  std::string OpenLabelSet(const LabelValues& values) const;
  Status CheckArity(const LabelValues& values) const;

 private:
  std::string name_;
  std::string help_;
  std::string type_;
  std::vector<std::string> label_names_;
};

// The children of one family, one per distinct tuple of label values, created on first
// use and never destroyed while the family lives, so references stay valid.
template <typename Child>
class MetricFamily : public MetricFamilyBase {
 public:
  using MetricFamilyBase::MetricFamilyBase;

  // The child for these label values (one per label name, in order). With the wrong
  // number of values it returns a detached child that is never exported.
  Child& With(const LabelValues& values);
  // As With(), but says when the number of values is wrong.
  Result<Child*> TryWith(const LabelValues& values);

 protected:
  virtual std::unique_ptr<Child> NewChild() const = 0;
  // REQUIRES: mu_ held and `values` of the right arity.
  Child& FindOrCreateLocked(const LabelValues& values);

  mutable std::mutex mu_;
  std::map<LabelValues, std::unique_ptr<Child>> children_;

 private:
  std::unique_ptr<Child> detached_;
};

class CounterFamily : public MetricFamily<Counter> {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // For a family without labels.
  Status Inc(double delta = 1) { return With({}).Inc(delta); }
  void RenderSamples(std::string* out) const override;

 protected:
  std::unique_ptr<Counter> NewChild() const override;
};

class GaugeFamily : public MetricFamily<Gauge> {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // For a family without labels.
  void Set(double value) { With({}).Set(value); }
  void Add(double delta) { With({}).Add(delta); }

  // Unpublishes every child and zeroes it, so that a value republished each cycle (pending
  // pods per queue) does not keep reporting a queue that has gone. A child comes back on
  // its next Set() or Add(); references stay valid. (A child that With() creates is
  // published from the start, at 0, as Prometheus clients do.)
  void Reset();
  // Reset() and the given values in one step, so that a scrape never sees the family
  // half republished. Fails, changing nothing, when a tuple has the wrong arity.
  Status Replace(const std::vector<std::pair<LabelValues, double>>& values);

  void RenderSamples(std::string* out) const override;

 protected:
  std::unique_ptr<Gauge> NewChild() const override;
};

class HistogramFamily : public MetricFamily<Histogram> {
 public:
  // `upper_bounds` are strictly increasing and finite (MetricsRegistry checks them).
  HistogramFamily(std::string name, std::string help, std::vector<double> upper_bounds,
                  std::vector<std::string> label_names);
  // For a family without labels.
  void Observe(double value) { With({}).Observe(value); }
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  void RenderSamples(std::string* out) const override;

 protected:
  std::unique_ptr<Histogram> NewChild() const override;

 private:
  std::vector<double> upper_bounds_;
};

extern template class MetricFamily<Counter>;
extern template class MetricFamily<Gauge>;
extern template class MetricFamily<Histogram>;

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* without a
  // leading "__" (reserved by Prometheus); a name is taken once, and a histogram also
  // takes its _bucket, _sum and _count names. The family lives as long as the registry.
  Result<CounterFamily*> AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names = {});
  Result<GaugeFamily*> AddGauge(std::string name, std::string help,
                                std::vector<std::string> label_names = {});
  // `upper_bounds` strictly increasing, not NaN; a trailing +Inf is implied and may be
  // given. Histograms may not use the label name "le".
  Result<HistogramFamily*> AddHistogram(std::string name, std::string help,
                                        std::vector<double> upper_bounds,
                                        std::vector<std::string> label_names = {});

  // Every family in registration order, as text exposition format 0.0.4. A family with
  // labels and no children yet writes only its HELP and TYPE lines.
  std::string Render() const;

 private:
  // Checks the names and reserves them (with `suffixes`) when they are free.
  Status Reserve(const std::string& name, const std::vector<std::string>& label_names,
                 const std::vector<std::string>& suffixes);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MetricFamilyBase>> families_;
  std::set<std::string> taken_names_;
};

}  // namespace gantry
