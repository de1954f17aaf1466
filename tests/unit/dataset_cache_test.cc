// The simulator's dataset caches (sim/dataset_cache.h), `gantry sim --datasets`
// (sim/dataset_workload.h), the replay's warm-up, and what the summary reports of it.
// Expected times are worked out by hand from the model's rules.
#include "sim/dataset_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/limits.h"
#include "sim/dataset_workload.h"
#include "sim/policies.h"
#include "sim/replay.h"
#include "sim/report_datasets.h"
#include "sim/sim_options.h"
#include "sim/summary.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

TaskSpec Reads(std::vector<std::string> datasets) {
  TaskSpec spec = CpuSpec(1000);
  spec.datasets = std::move(datasets);
  return spec;
}

// Three nodes: n0 caches ml/old by its list, n1 ml/label by Fluid's label, n2 nothing.
ClusterState ThreeNodes() {
  ClusterState c;
  AddCpuNode(c, "n0", 8000);
  Labels labels;
  labels.Set("fluid.io/s-ml-label", "true");
  AddCpuNode(c, "n1", 8000, labels);
  AddCpuNode(c, "n2", 8000);
  EXPECT_TRUE(c.SetCachedDatasets(0, {"ml/old"}).ok());
  // 100 GiB at 1 GiB/s: 100 s; ml/fixed: 30 s whatever its size; ml/unknown: the default.
  EXPECT_TRUE(c.SetDatasets({Info("ml/big", 100 * kGiB), Info("ml/fixed", 1, "", 30)}).ok());
  return c;
}

TEST(DatasetCacheTest, MissesFillHitsAreReadyAndLaterReadersWaitForTheRest) {
  ClusterState c = ThreeNodes();
  DatasetCache cache(c, DatasetCacheOptions{});
  EXPECT_EQ(cache.WarmupOf(c, "ml/big"), 100);
  EXPECT_EQ(cache.WarmupOf(c, "ml/fixed"), 30);
  EXPECT_EQ(cache.WarmupOf(c, "ml/unknown"), 300);
  // Cached when the run began, by the list or the label: ready.
  EXPECT_EQ(cache.Place(&c, Reads({"ml/old"}), 0, 0), 0);
  EXPECT_EQ(cache.Place(&c, Reads({"ml/label"}), 1, 0), 0);
  // Filled side by side: the longest.
  EXPECT_EQ(cache.Place(&c, Reads({"ml/big", "ml/fixed"}), 2, 10), 100);
  EXPECT_EQ(c.node(2).cached_datasets, (std::vector<std::string>{"ml/big", "ml/fixed"}));
  // 40 s later ml/fixed is ready and ml/big has 60 s to go.
  EXPECT_EQ(cache.Place(&c, Reads({"ml/big", "ml/fixed"}), 2, 50), 60);
  EXPECT_EQ(cache.Place(&c, Reads({"ml/big"}), 2, 200), 0);
  // No data, no wait, not counted.
  EXPECT_EQ(cache.Place(&c, CpuSpec(1000), 2, 200), 0);
  const DatasetStats& s = cache.stats();
  EXPECT_EQ(s.tasks, 5);
  EXPECT_EQ(s.reads, 7);
  EXPECT_EQ(s.hits, 4);     // old, label, fixed at 50, big at 200
  EXPECT_EQ(s.filling, 1);  // big at 50
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.warmup_s, 160);
  EXPECT_NEAR(s.hit_pct(), 100.0 * 4 / 7, 1e-9);
}

TEST(DatasetCacheTest, ACapacityDropsTheLeastRecentlyReadNeverThePinnedOrInUse) {
  ClusterState c = ThreeNodes();
  ASSERT_TRUE(
      c.SetDatasets({Info("ml/a", 40 * kGiB), Info("ml/b", 40 * kGiB), Info("ml/c", 40 * kGiB)})
          .ok());
  DatasetCacheOptions options;
  options.capacity_bytes = 100 * kGiB;
  DatasetCache cache(c, options);
  EXPECT_EQ(cache.Place(&c, Reads({"ml/a"}), 0, 0), 40);
  EXPECT_EQ(cache.Place(&c, Reads({"ml/b"}), 0, 1), 40);
  EXPECT_EQ(cache.Place(&c, Reads({"ml/a"}), 0, 100), 0);   // a read again: b is older
  EXPECT_EQ(cache.Place(&c, Reads({"ml/c"}), 0, 200), 40);  // 120 GiB: b goes
  EXPECT_EQ(c.node(0).cached_datasets, (std::vector<std::string>{"ml/a", "ml/c", "ml/old"}));
  EXPECT_EQ(cache.stats().dropped, 1);
  EXPECT_EQ(cache.Place(&c, Reads({"ml/b"}), 0, 300), 40);  // a goes (c read later)
  EXPECT_EQ(c.node(0).cached_datasets, (std::vector<std::string>{"ml/b", "ml/c", "ml/old"}));
}

SimJob Job(const std::string& name, int64_t submit, int64_t duration, std::string dataset) {
  SimJob j;
  j.name = name;
  j.submit = submit;
  j.duration = duration;
  j.spec.role = "pod";
  j.spec.requests.Set(kCpu, 1000);
  j.spec.gpu.count = 8;
  if (!dataset.empty()) j.spec.datasets = {dataset};
  return j;
}

ClusterState GpuNodes(int count) {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < count; ++i)
    nodes.push_back(TraceNode{"n" + std::to_string(i), 64000, 262144, 8, "G1"});
  ClusterState c;
  EXPECT_TRUE(AddTraceNodes(nodes, &c).ok());
  EXPECT_TRUE(c.SetDatasets({Info("ml/a", 1, "", 100)}).ok());
  return c;
}

TEST(DatasetReplayTest, AWarmUpLengthensTheRunAndLocalityAvoidsTheSecond) {
  // Two nodes; job one fills n0's cache (100 s) and runs 1000 s; job two arrives at 2000,
  // when both nodes are free: with locality it goes to n0 and starts at once.
  const ClusterState nodes = GpuNodes(2);
  const std::vector<SimJob> jobs{Job("one", 0, 1000, "ml/a"), Job("two", 2000, 1000, "ml/a")};
  const SchedulerConfig with = Must(ReplayPolicyConfig("gantry", 100));
  const ReplayResult r = Must(RunReplay(nodes, jobs, with, 1, ReplayOptions{}));
  EXPECT_EQ(r.datasets.tasks, 2);
  EXPECT_EQ(r.datasets.misses, 1);
  EXPECT_EQ(r.datasets.hits, 1);
  EXPECT_EQ(r.datasets.warmup_s, 100);
  EXPECT_DOUBLE_EQ(r.jct_s.mean, (1100.0 + 1000.0) / 2);
  // Without the plugin the second job takes whichever node the tie-break gives it: it
  // pays as much warm-up or more.
  SchedulerConfig without = with;
  std::erase_if(without.plugins, [](const PluginConfig& p) { return p.name == "datalocality"; });
  const ReplayResult w = Must(RunReplay(nodes, jobs, without, 1, ReplayOptions{}));
  EXPECT_GE(w.datasets.warmup_s, r.datasets.warmup_s);
}

TEST(DatasetReplayTest, WithoutDatasetsNothingChanges) {
  const ClusterState nodes = GpuNodes(2);
  const std::vector<SimJob> jobs{Job("one", 0, 1000, ""), Job("two", 10, 500, "")};
  const ReplayResult r =
      Must(RunReplay(nodes, jobs, Must(ReplayPolicyConfig("gantry", 100)), 1, ReplayOptions{}));
  EXPECT_EQ(r.datasets.reads, 0);
  EXPECT_DOUBLE_EQ(r.jct_s.mean, 750.0);
  EXPECT_TRUE(DatasetsJson(r).is_null());
  EXPECT_EQ(DatasetsLine("gantry", 1, r), "");
}

TEST(DatasetWorkloadTest, ParsesItsKeysAndNamesWhatIsWrong) {
  const DatasetWorkloadOptions o = Must(ParseDatasetWorkload(
      "count=50,zipf=1.2,share=80,size=10Gi-2Ti,bandwidth=500Mi,cache=4Ti,seed=7"));
  EXPECT_EQ(o.count, 50);
  EXPECT_DOUBLE_EQ(o.zipf, 1.2);
  EXPECT_EQ(o.share_pct, 80);
  EXPECT_EQ(o.min_bytes, 10 * kGiB);
  EXPECT_EQ(o.max_bytes, 2048 * kGiB);
  EXPECT_EQ(o.cache.bandwidth_bytes_per_s, 500 << 20);
  EXPECT_EQ(o.cache.capacity_bytes, 4096 * kGiB);
  EXPECT_EQ(o.seed, 7u);
  struct Bad {
    const char* text;
    const char* why;
  };
  for (const Bad& b :
       {Bad{"zipf=1", "count= is required"}, Bad{"count=0", "count: expected an integer in [1, "},
        Bad{"count=5,count=6", "count is given twice"}, Bad{"count=5,zipf=nan", "zipf"},
        Bad{"count=5,size=2Ti-1Gi", "MIN <= MAX"}, Bad{"count=5,size=10XB", "unknown unit \"XB\""},
        Bad{"count=5,bandwidth=0", "less than 1 bytes"}, Bad{"count=5,share=101", "share"},
        Bad{"count=5,colour=red", "unknown key \"colour\""}, Bad{"count", "expected key=value"}}) {
    auto parsed = ParseDatasetWorkload(b.text);
    ASSERT_FALSE(parsed.ok()) << b.text;
    EXPECT_TRUE(Contains(parsed.status().message(), b.why)) << parsed.status().message();
  }
  SimOptions protocol;
  protocol.cluster = "nodes.csv";
  protocol.workload = "pods.csv";
  protocol.protocol = "fgd-atc23";
  protocol.datasets = "count=5";
  EXPECT_TRUE(
      Contains(ParseSimOptions(protocol).status().message(), "--datasets applies to replays only"));
}

TEST(DatasetWorkloadTest, PopularDatasetsAreReadMostAndJobsAreOtherwiseTheSame) {
  std::vector<SimJob> jobs;
  for (int i = 0; i < 2000; ++i) jobs.push_back(Job("j" + std::to_string(i), i, 10, ""));
  const std::vector<SimJob> before = jobs;
  ClusterState c = GpuNodes(1);
  DatasetWorkloadOptions o;
  o.count = 10;
  o.share_pct = 50;
  ASSERT_TRUE(AssignDatasets(o, &jobs, &c).ok());
  std::vector<int> reads(10, 0);
  int readers = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].submit, before[i].submit);
    EXPECT_EQ(TaskShape::Of(jobs[i].spec), TaskShape::Of(before[i].spec));
    if (jobs[i].spec.datasets.empty()) continue;
    ++readers;
    const std::string& d = jobs[i].spec.datasets[0];
    ++reads[static_cast<size_t>(std::stoi(d.substr(d.find('-') + 1)))];
  }
  EXPECT_NEAR(readers, 1000, 100);
  // Zipf 1 over 10: the first is read about 34% of the time, the tenth about 3.4%.
  EXPECT_GT(reads[0], 4 * reads[9]);
  EXPECT_EQ(c.datasets().all().size(), 11u);  // ml/a and sim/ds-0..9
  for (const DatasetInfo& d : c.datasets().all()) {
    if (d.name == "ml/a") continue;
    EXPECT_GE(d.size_bytes, o.min_bytes);
    EXPECT_LE(d.size_bytes, o.max_bytes);
  }
  // Deterministic for a seed.
  std::vector<SimJob> again = before;
  ClusterState c2 = GpuNodes(1);
  ASSERT_TRUE(AssignDatasets(o, &again, &c2).ok());
  for (size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(again[i].spec.datasets, jobs[i].spec.datasets);
  // Names the cluster's table has already are refused.
  EXPECT_TRUE(Contains(AssignDatasets(o, &again, &c2).message(), "describes sim/ds-0 already"));
}

TEST(DatasetReportTest, SummaryTableAndReportSayWhatLocalitySaved) {
  SimRun run;
  run.policy = "gantry";
  run.seed = 7;
  run.replay.pods = 10;
  run.replay.datasets = DatasetStats{8, 8, 6, 0, 2, 200, 0};
  run.replay.has_datasets_without_locality = true;
  run.replay.datasets_without_locality = DatasetStats{8, 8, 2, 0, 6, 800, 0};
  SimOptions options;
  options.generate = "pods=10";
  SimSettings settings;
  settings.policies = {"gantry"};
  settings.seeds = {7};
  const SimOutputs out = SummarizeSimRuns(options, settings, {run});
  const auto& d = out.summary["runs"][0]["datasets"];
  EXPECT_EQ(d["hit_pct"], 75.0);
  EXPECT_EQ(d["warmup_s"], 200);
  EXPECT_EQ(d["without_locality"]["hit_pct"], 25.0);
  EXPECT_EQ(d["warmup_saved_s"], 600);
  EXPECT_EQ(d["warmup_saved_pct"], 75.0);
  EXPECT_EQ(out.summary["by_policy"]["gantry"]["warmup_saved_s_mean"], 600.0);
  EXPECT_TRUE(Contains(out.table,
                       "datasets gantry seed 7: 8 task runs read data: 75.0% hits (0 filling, 2 "
                       "misses), warm-up 200 s; without datalocality 25.0% hits, warm-up 800 s: "
                       "locality saved 600 s (75.0%)"))
      << out.table;
  const std::string html = RenderDatasetsHtml(out.summary);
  EXPECT_TRUE(Contains(html, "Dataset locality: warm-up paid and saved"));
  EXPECT_TRUE(Contains(html, "<td>600</td>"));
  EXPECT_EQ(RenderDatasetsHtml(nlohmann::ordered_json::object()), "");
}

}  // namespace
}  // namespace gantry
