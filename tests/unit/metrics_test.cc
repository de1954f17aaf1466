#include "daemon/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// True when `text` contains `part` (gmock's HasSubstr without linking gmock).
TEST(MetricsFormatTest, IntegersWithoutDecimalsOthersShortest) {
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(-0.0), "0");
  EXPECT_EQ(FormatMetricValue(3), "3");
  EXPECT_EQ(FormatMetricValue(-2), "-2");
  EXPECT_EQ(FormatMetricValue(1e6), "1000000");
  EXPECT_EQ(FormatMetricValue(9007199254740991.0), "9007199254740991");  // 2^53 - 1
  EXPECT_EQ(FormatMetricValue(0.25), "0.25");
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(-1.5), "-1.5");
  EXPECT_EQ(FormatMetricValue(1e-7), "1e-07");
  EXPECT_EQ(FormatMetricValue(1e20), "1e+20");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
}

TEST(MetricsFormatTest, ExponentialBuckets) {
  EXPECT_EQ(ExponentialBuckets(0.5, 2, 4), (std::vector<double>{0.5, 1, 2, 4}));
  EXPECT_TRUE(ExponentialBuckets(0, 2, 4).empty());
  EXPECT_TRUE(ExponentialBuckets(1, 1, 4).empty());
  EXPECT_TRUE(ExponentialBuckets(1, 2, 0).empty());
}

TEST(MetricsRegistryTest, CounterWithoutLabelsStartsAtZero) {
  MetricsRegistry registry;
  CounterFamily* cycles = Must(registry.AddCounter("gantry_cycles_total", "Scheduling cycles."));
  EXPECT_EQ(registry.Render(),
            "# HELP gantry_cycles_total Scheduling cycles.\n"
            "# TYPE gantry_cycles_total counter\n"
            "gantry_cycles_total 0\n");
  EXPECT_TRUE(cycles->Inc().ok());
  EXPECT_TRUE(cycles->Inc(2.5).ok());
  EXPECT_TRUE(cycles->With({}).Inc().ok());  // the same child as the family's own Inc()
  EXPECT_EQ(registry.Render(),
            "# HELP gantry_cycles_total Scheduling cycles.\n"
            "# TYPE gantry_cycles_total counter\n"
            "gantry_cycles_total 4.5\n");
}

TEST(MetricsRegistryTest, CounterRefusesNegativeAndNonFiniteIncrements) {
  MetricsRegistry registry;
  CounterFamily* binds = Must(registry.AddCounter("binds_total", "Binds."));
  ASSERT_TRUE(binds->Inc(2).ok());
  Status negative = binds->Inc(-1);
  EXPECT_EQ(negative.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(negative.message(), "-1"));
  EXPECT_FALSE(binds->Inc(std::nan("")).ok());
  EXPECT_FALSE(binds->Inc(std::numeric_limits<double>::infinity()).ok());
  EXPECT_TRUE(binds->Inc(0).ok());
  EXPECT_EQ(binds->With({}).Value(), 2);
}

TEST(MetricsRegistryTest, ChildrenSortedByLabelValuesNotCreationOrder) {
  MetricsRegistry registry;
  CounterFamily* binds =
      Must(registry.AddCounter("gantry_binds_total", "Pods bound.", {"queue", "result"}));
  EXPECT_EQ(registry.Render(),
            "# HELP gantry_binds_total Pods bound.\n"
            "# TYPE gantry_binds_total counter\n");  // no child yet: no sample
  ASSERT_TRUE(binds->With({"team-b", "ok"}).Inc(3).ok());
  ASSERT_TRUE(binds->With({"team-a", "error"}).Inc().ok());
  ASSERT_TRUE(binds->With({"team-a", "ok"}).Inc(7).ok());
  EXPECT_EQ(registry.Render(),
            "# HELP gantry_binds_total Pods bound.\n"
            "# TYPE gantry_binds_total counter\n"
            "gantry_binds_total{queue=\"team-a\",result=\"error\"} 1\n"
            "gantry_binds_total{queue=\"team-a\",result=\"ok\"} 7\n"
            "gantry_binds_total{queue=\"team-b\",result=\"ok\"} 3\n");
}

TEST(MetricsRegistryTest, WithReturnsTheSameChildEachTime) {
  MetricsRegistry registry;
  GaugeFamily* free_gpus = Must(registry.AddGauge("free_gpus", "Free GPUs.", {"node"}));
  Gauge& first = free_gpus->With({"n1"});
  EXPECT_EQ(&free_gpus->With({"n1"}), &first);
  for (int i = 0; i < 100; ++i) free_gpus->With({"m" + std::to_string(i)});
  EXPECT_EQ(&free_gpus->With({"n1"}), &first);  // still valid after many insertions
  EXPECT_EQ(Must(free_gpus->TryWith({"n1"})), &first);
}

TEST(MetricsRegistryTest, GaugeSetAndAddGoBothWays) {
  MetricsRegistry registry;
  GaugeFamily* running = Must(registry.AddGauge("gantry_running_pods", "Running pods."));
  running->Set(10);
  running->Add(-2.5);
  EXPECT_EQ(registry.Render(),
            "# HELP gantry_running_pods Running pods.\n"
            "# TYPE gantry_running_pods gauge\n"
            "gantry_running_pods 7.5\n");
  running->Set(-3);
  EXPECT_EQ(running->With({}).Value(), -3);
}

TEST(MetricsRegistryTest, GaugeResetDropsStaleChildrenUntilSetAgain) {
  MetricsRegistry registry;
  GaugeFamily* pending = Must(registry.AddGauge("pending", "Pending pods.", {"queue"}));
  Gauge& a = pending->With({"a"});
  a.Set(4);
  pending->With({"b"}).Set(2);
  pending->Reset();
  EXPECT_EQ(registry.Render(),
            "# HELP pending Pending pods.\n"
            "# TYPE pending gauge\n");
  EXPECT_EQ(a.Value(), 0);
  a.Add(1);  // an old reference publishes again, starting from zero
  EXPECT_EQ(registry.Render(),
            "# HELP pending Pending pods.\n"
            "# TYPE pending gauge\n"
            "pending{queue=\"a\"} 1\n");
}

TEST(MetricsRegistryTest, GaugeReplacePublishesExactlyTheGivenValues) {
  MetricsRegistry registry;
  GaugeFamily* pending = Must(registry.AddGauge("pending", "Pending pods.", {"queue"}));
  pending->With({"gone"}).Set(9);
  ASSERT_TRUE(pending->Replace({{{"b"}, 2}, {{"a"}, 0}}).ok());
  EXPECT_EQ(registry.Render(),
            "# HELP pending Pending pods.\n"
            "# TYPE pending gauge\n"
            "pending{queue=\"a\"} 0\n"
            "pending{queue=\"b\"} 2\n");
  // A tuple of the wrong size rejects the whole call: nothing changes.
  Status bad = pending->Replace({{{"c"}, 1}, {{"x", "y"}, 1}});
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(bad.message(), "pending: 2 label values given for 1 label names (queue)"));
  EXPECT_EQ(registry.Render(),
            "# HELP pending Pending pods.\n"
            "# TYPE pending gauge\n"
            "pending{queue=\"a\"} 0\n"
            "pending{queue=\"b\"} 2\n");
}

TEST(MetricsRegistryTest, HistogramWithoutLabelsHasCumulativeBuckets) {
  MetricsRegistry registry;
  HistogramFamily* latency =
      Must(registry.AddHistogram("cycle_seconds", "Cycle latency.", {0.5, 1, 10}));
  EXPECT_EQ(registry.Render(),
            "# HELP cycle_seconds Cycle latency.\n"
            "# TYPE cycle_seconds histogram\n"
            "cycle_seconds_bucket{le=\"0.5\"} 0\n"
            "cycle_seconds_bucket{le=\"1\"} 0\n"
            "cycle_seconds_bucket{le=\"10\"} 0\n"
            "cycle_seconds_bucket{le=\"+Inf\"} 0\n"
            "cycle_seconds_sum 0\n"
            "cycle_seconds_count 0\n");
  // 0.5 lands in le="0.5": a bucket counts what is less than or equal to its bound.
  for (double v : {0.25, 0.5, 0.75, 3.0, 100.0}) latency->Observe(v);
  latency->Observe(std::nan(""));  // dropped
  EXPECT_EQ(registry.Render(),
            "# HELP cycle_seconds Cycle latency.\n"
            "# TYPE cycle_seconds histogram\n"
            "cycle_seconds_bucket{le=\"0.5\"} 2\n"
            "cycle_seconds_bucket{le=\"1\"} 3\n"
            "cycle_seconds_bucket{le=\"10\"} 4\n"
            "cycle_seconds_bucket{le=\"+Inf\"} 5\n"
            "cycle_seconds_sum 104.5\n"
            "cycle_seconds_count 5\n");
}

TEST(MetricsRegistryTest, HistogramWithLabelsPutsLeLast) {
  MetricsRegistry registry;
  HistogramFamily* bind =
      Must(registry.AddHistogram("bind_seconds", "Bind latency.", {0.25, 2}, {"result"}));
  bind->With({"ok"}).Observe(0.125);
  bind->With({"error"}).Observe(5);
  EXPECT_EQ(registry.Render(),
            "# HELP bind_seconds Bind latency.\n"
            "# TYPE bind_seconds histogram\n"
            "bind_seconds_bucket{result=\"error\",le=\"0.25\"} 0\n"
            "bind_seconds_bucket{result=\"error\",le=\"2\"} 0\n"
            "bind_seconds_bucket{result=\"error\",le=\"+Inf\"} 1\n"
            "bind_seconds_sum{result=\"error\"} 5\n"
            "bind_seconds_count{result=\"error\"} 1\n"
            "bind_seconds_bucket{result=\"ok\",le=\"0.25\"} 1\n"
            "bind_seconds_bucket{result=\"ok\",le=\"2\"} 1\n"
            "bind_seconds_bucket{result=\"ok\",le=\"+Inf\"} 1\n"
            "bind_seconds_sum{result=\"ok\"} 0.125\n"
            "bind_seconds_count{result=\"ok\"} 1\n");
}

TEST(MetricsRegistryTest, HistogramBounds) {
  MetricsRegistry registry;
  // A spelled-out +Inf is the implied last bucket, not a second one.
  Must(registry.AddHistogram("with_inf", "h", {1, std::numeric_limits<double>::infinity()}));
  Must(registry.AddHistogram("no_bounds", "h", {}));
  EXPECT_EQ(registry.Render(),
            "# HELP with_inf h\n"
            "# TYPE with_inf histogram\n"
            "with_inf_bucket{le=\"1\"} 0\n"
            "with_inf_bucket{le=\"+Inf\"} 0\n"
            "with_inf_sum 0\n"
            "with_inf_count 0\n"
            "# HELP no_bounds h\n"
            "# TYPE no_bounds histogram\n"
            "no_bounds_bucket{le=\"+Inf\"} 0\n"
            "no_bounds_sum 0\n"
            "no_bounds_count 0\n");
  Result<HistogramFamily*> unsorted = registry.AddHistogram("h1", "h", {1, 0.5});
  ASSERT_FALSE(unsorted.ok());
  EXPECT_TRUE(Contains(unsorted.status().message(), "histogram h1: bucket bounds must increase"));
  EXPECT_FALSE(registry.AddHistogram("h2", "h", {1, 1}).ok());
  EXPECT_FALSE(registry.AddHistogram("h3", "h", {std::nan(""), 1}).ok());
  EXPECT_FALSE(registry.AddHistogram("h4", "h", {-std::numeric_limits<double>::infinity()}).ok());
  Result<HistogramFamily*> le = registry.AddHistogram("h5", "h", {1}, {"le"});
  ASSERT_FALSE(le.ok());
  EXPECT_TRUE(Contains(le.status().message(), "\"le\" is reserved"));
  // Failed registrations took no names.
  EXPECT_TRUE(registry.AddHistogram("h1", "h", {0.5, 1}).ok());
}

TEST(MetricsRegistryTest, FamiliesRenderInRegistrationOrder) {
  MetricsRegistry registry;
  Must(registry.AddGauge("zeta", "Last letter."));
  Must(registry.AddCounter("alpha", "First letter."));
  EXPECT_EQ(registry.Render(),
            "# HELP zeta Last letter.\n"
            "# TYPE zeta gauge\n"
            "zeta 0\n"
            "# HELP alpha First letter.\n"
            "# TYPE alpha counter\n"
            "alpha 0\n");
}

TEST(MetricsRegistryTest, EscapesHelpAndLabelValues) {
  MetricsRegistry registry;
  // Help escapes backslash and newline only; a double quote stays as it is.
  GaugeFamily* paths =
      Must(registry.AddGauge("paths", "Files under C:\\data,\nper \"path\".", {"path"}));
  paths->With({"a\\b \"quoted\"\nnext"}).Set(1);
  EXPECT_EQ(registry.Render(),
            "# HELP paths Files under C:\\\\data,\\nper \"path\".\n"
            "# TYPE paths gauge\n"
            "paths{path=\"a\\\\b \\\"quoted\\\"\\nnext\"} 1\n");
}

TEST(MetricsRegistryTest, RejectsBadAndDuplicateNames) {
  MetricsRegistry registry;
  for (const char* bad : {"", "1st", "has-dash", "has space", "caf\xc3\xa9"}) {
    Result<CounterFamily*> r = registry.AddCounter(bad, "h");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_TRUE(Contains(r.status().message(), "\"" + std::string(bad) + "\"")) << bad;
  }
  for (const char* good : {"_x", "job:rate5m", "A9"}) {
    EXPECT_TRUE(registry.AddCounter(good, "h").ok()) << good;
  }
  int n = 0;
  for (const char* bad : {"", "9a", "a:b", "a-b", "__reserved"}) {
    Result<GaugeFamily*> r = registry.AddGauge("g" + std::to_string(n++), "h", {bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(Contains(r.status().message(), "label name \"" + std::string(bad) + "\"")) << bad;
  }
  EXPECT_TRUE(
      registry.AddGauge("g_ok", "h", {"_private", "le"}).ok());  // le is fine off histograms
  EXPECT_FALSE(registry.AddGauge("g_twice", "h", {"queue", "queue"}).ok());

  Result<GaugeFamily*> again = registry.AddGauge("g_ok", "h");
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(Contains(again.status().message(), "\"g_ok\" is already registered"));
  EXPECT_FALSE(registry.AddCounter("_x", "h").ok());  // same name, other type
}

TEST(MetricsRegistryTest, HistogramSeriesNamesAreTaken) {
  MetricsRegistry registry;
  Must(registry.AddHistogram("latency", "h", {1}));
  EXPECT_FALSE(registry.AddCounter("latency_count", "h").ok());
  EXPECT_FALSE(registry.AddGauge("latency_sum", "h").ok());
  EXPECT_FALSE(registry.AddGauge("latency_bucket", "h").ok());
  Must(registry.AddCounter("queue_wait_sum", "h"));
  Result<HistogramFamily*> clash = registry.AddHistogram("queue_wait", "h", {1});
  ASSERT_FALSE(clash.ok());
  EXPECT_TRUE(Contains(clash.status().message(), "\"queue_wait_sum\" is already registered"));
  EXPECT_TRUE(registry.AddGauge("queue_wait", "h").ok());  // the failure reserved nothing
}

TEST(MetricsRegistryTest, WrongNumberOfLabelValuesIsNeverExported) {
  MetricsRegistry registry;
  CounterFamily* binds = Must(registry.AddCounter("binds", "h", {"queue"}));
  CounterFamily* plain = Must(registry.AddCounter("plain", "h"));
  EXPECT_TRUE(binds->With({}).Inc().ok());  // detached: takes the update, exports nothing
  EXPECT_TRUE(binds->With({"a", "b"}).Inc().ok());
  EXPECT_TRUE(binds->Inc().ok());  // the family's own Inc() is for families without labels
  EXPECT_TRUE(plain->With({"x"}).Inc().ok());
  EXPECT_EQ(registry.Render(),
            "# HELP binds h\n"
            "# TYPE binds counter\n"
            "# HELP plain h\n"
            "# TYPE plain counter\n"
            "plain 0\n");
  Result<Counter*> r = binds->TryWith({"a", "b"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "metric binds: 2 label values given for 1 label names (queue)");
  EXPECT_FALSE(plain->TryWith({"x"}).ok());
}

TEST(MetricsRegistryTest, ConcurrentUpdatesSumExactly) {
  MetricsRegistry registry;
  CounterFamily* ops = Must(registry.AddCounter("ops_total", "h", {"worker"}));
  GaugeFamily* level = Must(registry.AddGauge("level", "h"));
  HistogramFamily* sizes = Must(registry.AddHistogram("sizes", "h", {10}));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Counter& mine = ops->With({"w" + std::to_string(t)});
      for (int i = 0; i < kPerThread; ++i) {
        (void)mine.Inc();
        (void)ops->With({"shared"}).Inc();  // creation and lookup race on one child
        level->Add(i % 2 == 0 ? 1 : -1);
        sizes->Observe(i % 20);  // half in le="10", half above
      }
    });
  }
  // Scrapes while the writers run must not disturb them.
  std::thread scraper([&] {
    for (int i = 0; i < 50; ++i) EXPECT_FALSE(registry.Render().empty());
  });
  for (std::thread& th : threads) th.join();
  scraper.join();

  EXPECT_EQ(ops->With({"shared"}).Value(), kThreads * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(ops->With({"w" + std::to_string(t)}).Value(), kPerThread);
  }
  EXPECT_EQ(level->With({}).Value(), 0);
  Histogram::Snapshot snap = sizes->With({}).Collect();
  EXPECT_EQ(snap.count, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(snap.cumulative_counts,
            (std::vector<uint64_t>{kThreads * kPerThread * 11 / 20, kThreads * kPerThread}));
  // Each thread observes 0..19 a thousand times: 190 per round.
  EXPECT_EQ(snap.sum, 190.0 * kThreads * kPerThread / 20);
}

}  // namespace
}  // namespace gantry
