// The Grafana dashboard (deploy/grafana/gantry.json) against the real daemon: every metric
// a panel or variable queries is a family that `gantry serve`'s /metrics exports, with
// samples, after a cycle on the real API server that bound GPU pods, evicted one (preempt)
// and left one pending. Renaming a metric, or dropping one, fails this test.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/dashboard/promql_names.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

std::string Config(const std::string& test) {
  return "schedulerName: gantry-" + test +
         "\n"
         "schedulePeriod: 500ms\n"
         "listenAddress: 127.0.0.1:0\n"
         "leaderElection: {enabled: false}\n"
         "engine:\n"
         "  actions: [enqueue, allocate, preempt, reclaim, backfill]\n"
         "  plugins: [priority, gang, drf, proportion, predicates, binpack]\n";
}

json Pod(const std::string& test, const std::string& name, int gpus,
         const std::string& priority_class) {
  json requests = {{"cpu", "500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", test}}},
      {"spec",
       {{"schedulerName", "gantry-" + test},
        {"nodeSelector", {{"gantry-test", test}}},
        {"priorityClassName", priority_class},
        {"containers",
         {{{"name", "main"},
           {"image", "busybox"},
           {"resources",
            {{"requests", requests}, {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}}};
}

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET http://127.0.0.1:PORT/metrics; "" when it fails.
std::string Scrape(int port) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return "";
  std::string body;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 5L);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  return rc == CURLE_OK && status == 200 ? body : "";
}

// The port `gantry serve` says it listens on, from its log; 0 until it has said it.
int ListenPort(const std::string& log) {
  std::smatch m;
  static const std::regex kPort("listening on port ([0-9]+)");
  return std::regex_search(log, m, kPort) ? std::stoi(m[1]) : 0;
}

// The value of a sample (its name and labels as rendered), or -1 when it is absent.
double Sample(const std::string& text, const std::string& series) {
  const size_t at = ("\n" + text).find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 1));
}

// Whether a family has a sample line (any labels, or a histogram's series).
bool HasSamples(const std::string& text, const std::string& family) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#") || !line.starts_with(family)) continue;
    const std::string rest = line.substr(family.size());
    if (rest.starts_with(" ") || rest.starts_with("{") || rest.starts_with("_bucket") ||
        rest.starts_with("_count")) {
      return true;
    }
  }
  return false;
}

// What the dashboard queries that the exposition does not export with samples: one line
// per missing name, saying where the dashboard asks for it.
std::vector<std::string> MissingMetrics(const json& dashboard, const std::string& exposition) {
  const std::set<std::string> families = ExposedFamilies(exposition);
  std::vector<std::string> missing;
  for (const DashboardQuery& q : DashboardQueries(dashboard)) {
    for (const std::string& name : PromqlMetricNames(q.expr)) {
      const std::string family = MetricFamilyOf(name, families);
      if (families.count(family) == 0) {
        missing.push_back(q.where + ": " + name + " is not a family /metrics exports");
      } else if (!HasSamples(exposition, family)) {
        missing.push_back(q.where + ": " + family + " has no samples");
      }
    }
  }
  return missing;
}

json ShippedDashboard() {
  std::ifstream in(std::string(GANTRY_SOURCE_DIR) + "/deploy/grafana/gantry.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(Dashboard, EveryQueriedMetricIsExportedAfterACycle) {
  const std::string test = "dashboard";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  ASSERT_TRUE(Env().CreateNode(test + "-node-0", 4, "32", "256Gi", {{"gantry-test", test}}).ok());
  for (const auto& [name, value] :
       {std::pair{test + "-low", 10}, std::pair{test + "-high", 1000}}) {
    auto pc = Env().Apply({{"apiVersion", "scheduling.k8s.io/v1"},
                           {"kind", "PriorityClass"},
                           {"metadata", {{"name", name}}},
                           {"value", value}});
    ASSERT_TRUE(pc.ok()) << pc.status().message();
  }
  DaemonProcess daemon(test, Config(test), "d-" + test);
  int port = 0;
  ASSERT_TRUE(TestEnv::WaitFor([&] { return (port = ListenPort(daemon.Log())) > 0; }, seconds(20)))
      << daemon.Log();
  // Tests share the API server: what other tests left (nodes, pods of other schedulers) is
  // in the gauges too, so they are read before this test's pods and compared to that.
  std::string before;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        before = Scrape(port);
        return Sample(before, "gantry_gpus_capacity") >= 4 &&
               before.find("gantry_gpu_devices{state=\"free\"}") != std::string::npos;
      },
      seconds(30), std::chrono::milliseconds(200)))
      << before << daemon.Log();
  const double allocated_before = Sample(before, "gantry_gpu_devices{state=\"allocated\"}");
  // Two GPU pods bound, filling the node; a third of higher priority evicts one of them; one
  // asks for more GPUs than any node has and stays pending.
  for (const char* name : {"low-0", "low-1"}) {
    ASSERT_TRUE(Env().Apply(Pod(test, name, 2, test + "-low")).ok());
  }
  ASSERT_TRUE(Env().Apply(Pod(test, "huge", 8, test + "-low")).ok());
  std::string metrics;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        metrics = Scrape(port);
        return Sample(metrics, "gantry_pods_scheduled_total") == 2 &&
               Sample(metrics, "gantry_gpu_devices{state=\"allocated\"}") == allocated_before + 4;
      },
      seconds(30), std::chrono::milliseconds(200)))
      << metrics << daemon.Log();
  ASSERT_TRUE(Env().Apply(Pod(test, "high", 2, test + "-high")).ok());
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        metrics = Scrape(port);
        return Sample(metrics, "gantry_evictions_total{result=\"evicted\",cause=\"preempt\"}") ==
                   1 &&
               Sample(metrics, "gantry_pending_pods_by_reason{reason=\"no_fit\"}") >= 1;
      },
      seconds(30), std::chrono::milliseconds(200)))
      << metrics << daemon.Log();
  // The gauges moved by what this test did: its node's 4 GPUs all taken, none shared. (The
  // fragmentation measure depends on every node and on the shapes seen, so its value is
  // checked by the unit test DashboardMetrics.AfterAKnownCycle; here, that it is exported.)
  EXPECT_EQ(Sample(metrics, "gantry_gpus_capacity"), Sample(before, "gantry_gpus_capacity"));
  EXPECT_EQ(Sample(metrics, "gantry_gpu_devices{state=\"free\"}"),
            Sample(before, "gantry_gpu_devices{state=\"free\"}") - 4);
  EXPECT_EQ(Sample(metrics, "gantry_gpu_devices{state=\"shared\"}"),
            Sample(before, "gantry_gpu_devices{state=\"shared\"}"));

  const json dashboard = ShippedDashboard();
  EXPECT_EQ(Join(MissingMetrics(dashboard, metrics)), "") << metrics;
  // The check can fail: a panel on a name no family has, or a family without samples yet.
  json renamed = {
      {"panels",
       {{{"title", "t"},
         {"targets",
          {{{"refId", "A"}, {"expr", "rate(gantry_cycle_seconds_bucket[5m]) + gantry_nodes"}}}}}}}};
  EXPECT_EQ(Join(MissingMetrics(renamed, metrics)),
            "panel \"t\" target A: gantry_cycle_seconds_bucket is not a family /metrics exports\n");
  EXPECT_EQ(Join(MissingMetrics(renamed, "# TYPE gantry_nodes gauge\n")),
            "panel \"t\" target A: gantry_cycle_seconds_bucket is not a family /metrics exports\n"
            "panel \"t\" target A: gantry_nodes has no samples\n");
}

}  // namespace
}  // namespace gantry::testing
