// What-if on the real cluster (issue 14). `gantry snapshot` lists the live cluster as the
// daemon sees it and writes it in the scenario format: the scenario parser reads it back
// with the nodes, queues, gangs, running and pending pods created here, and `gantry sim
// --snapshot` replays it under two policies. And the daemon's workload profile: after a
// history of 2-GPU arrivals the daemon (fgd) puts a 1-GPU pod where `gantry schedule` puts
// it on the same cluster with that profile, and where it does not without the profile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/device_objects.h"
#include "sim/scenario_reader.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

json Pod(const std::string& ns, const std::string& name, const std::string& scheduler, int gpus,
         const std::string& node_selector_value, const std::string& node_name = "") {
  json limits = json::object();
  if (gpus > 0) limits["nvidia.com/gpu"] = std::to_string(gpus);
  json requests = limits;
  requests["cpu"] = "1";
  json spec = {{"schedulerName", scheduler},
               {"nodeSelector", {{"gantry-test", node_selector_value}}},
               {"containers",
                {{{"name", "main"},
                  {"image", "busybox"},
                  {"resources", {{"requests", requests}, {"limits", limits}}}}}}};
  if (!node_name.empty()) spec["nodeName"] = node_name;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", spec}};
}

std::string TempDir(const std::string& name) {
  const std::string dir = Env().dir() + "/" + name;
  std::filesystem::create_directories(dir);
  return dir;
}

int RunCommand(const std::string& command) {
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

constexpr int kNodes = 24;

TEST(Snapshot, TheLiveClusterInTheScenarioFormatAndReplayedByTwoPolicies) {
  const std::string ns = "snap";
  const std::string scheduler = "gantry-snap";
  ASSERT_TRUE(Env().EnsureGantryCrds().ok());
  ASSERT_TRUE(Env().CreateNamespace(ns).ok());
  // A few dozen nodes in three racks, each running some of ours (1 to 5 GPUs, fragmented).
  for (int i = 0; i < kNodes; ++i) {
    auto node = Env().CreateNode(
        "snap-node-" + std::to_string(i), 8, "64", "512Gi",
        {{"gantry-test", ns}, {"topology.gantry.dev/rack", "r" + std::to_string(i / 8)}});
    ASSERT_TRUE(node.ok()) << node.status().message();
  }
  auto queue = Env().Apply({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                            {"kind", "Queue"},
                            {"metadata", {{"name", "snap-q"}}},
                            {"spec", {{"weight", 3}}}});
  ASSERT_TRUE(queue.ok()) << queue.status().message();
  auto group = Env().Apply({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                            {"kind", "PodGroup"},
                            {"metadata", {{"name", "train"}, {"namespace", ns}}},
                            {"spec", {{"minMember", 2}, {"queue", "snap-q"}}}});
  ASSERT_TRUE(group.ok()) << group.status().message();
  // Bound: one of ours (4 GPUs on node 0), one of another scheduler's (2 GPUs on node 1),
  // and ours on the other nodes.
  ASSERT_TRUE(Env().Apply(Pod(ns, "bound", scheduler, 4, ns, "snap-node-0")).ok());
  ASSERT_TRUE(Env().Apply(Pod(ns, "theirs", "default-scheduler", 2, ns, "snap-node-1")).ok());
  for (int i = 2; i < kNodes; ++i) {
    ASSERT_TRUE(Env()
                    .Apply(Pod(ns, "run-" + std::to_string(i), scheduler, 1 + i % 5, ns,
                               "snap-node-" + std::to_string(i)))
                    .ok());
  }
  // Waiting besides the gang and the lone pod: 4-GPU batch pods and 1-GPU notebooks.
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Env().Apply(Pod(ns, "batch-" + std::to_string(i), scheduler, 4, ns)).ok());
  }
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(Env().Apply(Pod(ns, "notebook-" + std::to_string(i), scheduler, 1, ns)).ok());
  }
  // Pending: a gang of two 8-GPU pods, and a lone 1-GPU pod.
  for (const char* name : {"train-0", "train-1"}) {
    json pod = Pod(ns, name, scheduler, 8, ns);
    pod["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", "train"}};
    ASSERT_TRUE(Env().Apply(pod).ok());
  }
  ASSERT_TRUE(Env().Apply(Pod(ns, "lone", scheduler, 1, ns)).ok());

  const std::string dir = TempDir("snapshot-test");
  const std::string file = dir + "/snapshot.yaml";
  ASSERT_EQ(
      RunCommand(GantryBinary() + " snapshot --kubeconfig " + Env().kubeconfig_path() + " --out " +
                 file + " --scheduler-name " + scheduler + " 2>" + dir + "/snapshot.err"),
      0)
      << ReadAll(dir + "/snapshot.err");
  std::printf("gantry snapshot:\n%s", ReadAll(dir + "/snapshot.err").c_str());
  const ApiDeviceObjectReader device_objects;  // DRA objects other tests left
  auto parsed = LoadScenario(file, &device_objects);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << ReadAll(file);
  const ClusterState& c = parsed->cluster;
  for (int i = 0; i < kNodes; ++i) {
    const NodeId n = c.FindNode("snap-node-" + std::to_string(i));
    ASSERT_NE(n, kNone) << ReadAll(file);
    EXPECT_EQ(c.node(n).gpus.size(), 8u);
    EXPECT_EQ(*c.node(n).labels.Find("topology.gantry.dev/rack"), "r" + std::to_string(i / 8));
    // What runs there: 4 (ours), 2 (theirs), else 1 + i % 5 GPUs.
    EXPECT_EQ(c.node(n).used.Get(kGpu), 1000 * (i == 0 ? 4 : i == 1 ? 2 : 1 + i % 5)) << i;
  }
  const QueueId q = c.FindQueue("snap-q");
  ASSERT_NE(q, kNone) << ReadAll(file);
  EXPECT_EQ(c.queue(q).weight, 3);
  // The gang: pending, two 8-GPU tasks, minMember 2, in its queue.
  const JobId train = c.FindJob("vc|snap/train");
  ASSERT_NE(train, kNone) << ReadAll(file);
  EXPECT_EQ(c.job(train).min_member, 2);
  EXPECT_EQ(c.job(train).queue, q);
  ASSERT_EQ(c.job(train).tasks.size(), 2u);
  for (TaskId t : c.job(train).tasks) {
    EXPECT_EQ(c.task(t).state, TaskState::kPending);
    EXPECT_EQ(c.spec_of(t).gpu.count, 8);
  }
  // The bound pods run where they are bound, with their GPUs: ours in its job, theirs in
  // the other schedulers' queue.
  const JobId bound = c.FindJob("pod|snap/bound");
  ASSERT_NE(bound, kNone);
  const Task& bound_task = c.task(c.job(bound).tasks.at(0));
  EXPECT_EQ(bound_task.state, TaskState::kRunning);
  EXPECT_EQ(c.node(bound_task.node).name, "snap-node-0");
  EXPECT_EQ(bound_task.gpus.size(), 4u);
  const JobId theirs = c.FindJob("other|snap/theirs");
  ASSERT_NE(theirs, kNone) << ReadAll(file);
  EXPECT_EQ(c.queue(c.job(theirs).queue).name, "(other schedulers)");
  const Task& theirs_task = c.task(c.job(theirs).tasks.at(0));
  EXPECT_EQ(theirs_task.state, TaskState::kRunning);
  EXPECT_EQ(c.node(theirs_task.node).name, "snap-node-1");
  EXPECT_EQ(theirs_task.gpus.size(), 2u);
  const JobId lone = c.FindJob("pod|snap/lone");
  ASSERT_NE(lone, kNone);
  EXPECT_EQ(c.task(c.job(lone).tasks.at(0)).state, TaskState::kPending);
  // Arrivals: our pods created in the last hour, the gang as one job of two.
  bool saw_train = false, saw_lone = false, saw_theirs = false;
  for (const ScenarioArrival& a : parsed->snapshot.arrivals) {
    EXPECT_LE(a.at, 0);
    EXPECT_GE(a.at, -3600);
    if (a.job.name == "vc|snap/train") {
      saw_train = true;
      EXPECT_EQ(a.job.pods, 2);
      EXPECT_EQ(a.job.min_member, 2);
      EXPECT_EQ(a.job.queue, "snap-q");
      EXPECT_EQ(a.job.spec.gpu.count, 8);
    }
    saw_lone = saw_lone || a.job.name == "pod|snap/lone";
    saw_theirs = saw_theirs || a.job.name == "other|snap/theirs";
  }
  EXPECT_TRUE(saw_train) << ReadAll(file);
  EXPECT_TRUE(saw_lone) << ReadAll(file);
  EXPECT_FALSE(saw_theirs) << "another scheduler's pod is not our workload";
  // The profile: the shapes of our pods (4, 8 and 1 GPUs).
  EXPECT_GE(c.workload_profile().types.size(), 3u) << ReadAll(file);

  // Replayed under two policies: a report for each.
  const std::string out = dir + "/sim";
  ASSERT_EQ(RunCommand(GantryBinary() + " sim --snapshot " + file +
                       " --policy gantry,random --out " + out + " >" + dir + "/sim.txt 2>&1"),
            0)
      << ReadAll(dir + "/sim.txt");
  const std::string table = ReadAll(dir + "/sim.txt");
  std::printf("gantry sim --snapshot (%d nodes):\n%s", kNodes, table.c_str());
  EXPECT_NE(table.find("gantry "), std::string::npos) << table;
  EXPECT_NE(table.find("random "), std::string::npos) << table;
  const std::string summary = ReadAll(out + "/summary.json");
  EXPECT_NE(summary.find("\"cluster\": \"snapshot: "), std::string::npos) << summary;
  EXPECT_FALSE(ReadAll(out + "/report.html").empty());
  // For a person: GANTRY_SNAPSHOT_OUT=DIR keeps the snapshot and the report there.
  if (const char* keep = std::getenv("GANTRY_SNAPSHOT_OUT"); keep != nullptr && *keep != '\0') {
    std::filesystem::create_directories(keep);
    std::filesystem::copy(dir, keep,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
  }
}

// DRA's objects go into the snapshot as listed, and its pods name their claims: the
// scenario reads them back, and `gantry schedule` places the pod whose claim fits on the
// node whose slice has the device, and leaves the one whose claim cannot fit pending (a
// snapshot without the objects or the claims would fail one or the other).
TEST(Snapshot, DraObjectsAndClaimsAreWrittenAndReplayedByOneSession) {
  const std::string ns = "snapdra";
  const std::string scheduler = "gantry-snapdra";
  ASSERT_TRUE(
      Env()
          .Apply({{"apiVersion", "v1"},
                  {"kind", "Namespace"},
                  {"metadata",
                   {{"name", ns}, {"labels", {{"resource.kubernetes.io/admin-access", "true"}}}}}})
          .ok());
  for (const char* name : {"snapdra-plain-0", "snapdra-plain-1", "snapdra-dev"}) {
    auto node = Env().CreateNode(name, 0, "16", "64Gi", {{"gantry-test", ns}});
    ASSERT_TRUE(node.ok()) << node.status().message();
  }
  const std::string driver = "gpu.snapdra.example.com";
  ASSERT_TRUE(
      Env()
          .Apply({{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "DeviceClass"},
                  {"metadata", {{"name", "snapdra-gpu"}}},
                  {"spec",
                   {{"selectors",
                     {{{"cel", {{"expression", "device.driver == \"" + driver + "\""}}}}}}}}})
          .ok());
  ASSERT_TRUE(
      Env()
          .Apply(
              {{"apiVersion", "resource.k8s.io/v1"},
               {"kind", "ResourceSlice"},
               {"metadata", {{"name", "snapdra-dev-gpus"}}},
               {"spec",
                {{"driver", driver},
                 {"nodeName", "snapdra-dev"},
                 {"pool", {{"name", "snapdra-dev"}, {"generation", 1}, {"resourceSliceCount", 1}}},
                 {"devices", {{{"name", "gpu-0"}}}}}}})
          .ok());
  for (const auto& [claim, count] :
       std::vector<std::pair<std::string, int>>{{"one", 1}, {"two", 2}}) {
    ASSERT_TRUE(
        Env()
            .Apply(
                {{"apiVersion", "resource.k8s.io/v1"},
                 {"kind", "ResourceClaim"},
                 {"metadata", {{"name", claim}, {"namespace", ns}}},
                 {"spec",
                  {{"devices",
                    {{"requests",
                      {{{"name", "gpu"},
                        {"exactly", {{"deviceClassName", "snapdra-gpu"}, {"count", count}}}}}}}}}}})
            .ok());
    json pod = Pod(ns, "wants-" + claim, scheduler, 0, ns);
    pod["spec"]["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimName", claim}}};
    ASSERT_TRUE(Env().Apply(pod).ok());
  }

  const std::string dir = TempDir("snapshot-dra");
  const std::string file = dir + "/snapshot.yaml";
  ASSERT_EQ(
      RunCommand(GantryBinary() + " snapshot --kubeconfig " + Env().kubeconfig_path() + " --out " +
                 file + " --scheduler-name " + scheduler + " 2>" + dir + "/snapshot.err"),
      0)
      << ReadAll(dir + "/snapshot.err");
  const ApiDeviceObjectReader device_objects;
  auto parsed = LoadScenario(file, &device_objects);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << ReadAll(file);
  const ScenarioDevices& devices = parsed->devices;
  EXPECT_TRUE(std::any_of(devices.classes.begin(), devices.classes.end(),
                          [](const dra::DeviceClass& c) { return c.name == "snapdra-gpu"; }))
      << ReadAll(file);
  EXPECT_TRUE(std::any_of(devices.slices.begin(), devices.slices.end(),
                          [](const dra::ResourceSlice& s) { return s.name == "snapdra-dev-gpus"; }))
      << ReadAll(file);
  EXPECT_EQ(devices.claims.count("snapdra/one"), 1u) << ReadAll(file);
  EXPECT_EQ(devices.claims.count("snapdra/two"), 1u) << ReadAll(file);
  EXPECT_EQ(devices.admin_namespaces.count(ns), 1u) << ReadAll(file);
  const JobId one = parsed->cluster.FindJob("pod|snapdra/wants-one");
  ASSERT_NE(one, kNone) << ReadAll(file);
  EXPECT_EQ(parsed->cluster.spec_of(parsed->cluster.job(one).tasks.at(0)).resource_claims,
            std::vector<std::string>{"snapdra/one"});

  // One session over the snapshot, with what it must do.
  std::ofstream(file, std::ios::app)
      << "expect:\n  onNodes: {\"pod|snapdra/wants-one\": [snapdra-dev]}\n"
         "  placed: {\"pod|snapdra/wants-two\": 0}\n";
  EXPECT_EQ(RunCommand(GantryBinary() + " schedule --scenario " + file + " >" + dir +
                       "/schedule.txt 2>&1"),
            0)
      << ReadAll(dir + "/schedule.txt");
  std::printf("gantry schedule over the DRA snapshot:\n%s", ReadAll(dir + "/schedule.txt").c_str());
}

// Two nodes of 8 GPUs: a with 6 in use, b with 5 (by another scheduler's pods).
void CreateFragmentedPair(const std::string& ns) {
  ASSERT_TRUE(Env().CreateNamespace(ns).ok());
  for (const char* suffix : {"-a", "-b"}) {
    auto node = Env().CreateNode(ns + suffix, 8, "64", "256Gi", {{"gantry-test", ns}});
    ASSERT_TRUE(node.ok()) << node.status().message();
  }
  ASSERT_TRUE(Env().Apply(Pod(ns, "fill-a", "default-scheduler", 6, ns, ns + "-a")).ok());
  ASSERT_TRUE(Env().Apply(Pod(ns, "fill-b", "default-scheduler", 5, ns, ns + "-b")).ok());
}

std::string FgdDaemonConfig(const std::string& scheduler, bool profile) {
  return "schedulerName: " + scheduler +
         "\nschedulePeriod: 500ms\nlistenAddress: 127.0.0.1:0\nleaderElection: {enabled: false}\n" +
         (profile ? "" : "workloadProfileHalfLife: 0\n") +
         "engine:\n  actions: [enqueue, allocate, backfill]\n"
         "  plugins: [priority, gang, drf, proportion, predicates, fgd]\n";
}

// The daemon's history: nine 2-GPU pods that fit nowhere (their selector matches no node),
// seen pending, then deleted; then the 1-GPU probe. Returns the probe's node.
std::string ProbeAfterHistory(const std::string& ns, bool profile) {
  const std::string scheduler = "gantry-" + ns;
  DaemonProcess daemon(ns, FgdDaemonConfig(scheduler, profile), "d-" + ns);
  for (int i = 0; i < 9; ++i) {
    EXPECT_TRUE(
        Env().Apply(Pod(ns, "past-" + std::to_string(i), scheduler, 2, ns + "-nowhere")).ok());
  }
  // Seen: each says why it waits.
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        for (int i = 0; i < 9; ++i) {
          auto p =
              Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/past-" + std::to_string(i));
          if (!p.ok() || PodScheduledMessage(*p).empty()) return false;
        }
        return true;
      },
      seconds(30)))
      << daemon.Log();
  for (int i = 0; i < 9; ++i) {
    EXPECT_TRUE(Env()
                    .Call("DELETE", "/api/v1/namespaces/" + ns + "/pods/past-" + std::to_string(i),
                          {{"gracePeriodSeconds", 0}})
                    .ok());
  }
  EXPECT_TRUE(Env().Apply(Pod(ns, "probe", scheduler, 1, ns)).ok());
  std::string node;
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/probe");
        node = p.ok() ? (*p)["spec"].value("nodeName", "") : "";
        return !node.empty();
      },
      seconds(30)))
      << daemon.Log();
  return node;
}

// The simulator's placement of the probe on the same cluster, with or without the profile
// the daemon kept (nine 2-GPU tasks and the probe itself): `gantry schedule` meets the
// scenario's expectation that it goes to `expected`.
int ScheduleExpecting(const std::string& ns, bool profile, const std::string& expected) {
  const std::string dir = TempDir("snapshot-profile");
  const std::string file = dir + "/" + ns + (profile ? "-profile" : "-none") + ".yaml";
  std::ofstream(file)
      << "config:\n  plugins: [priority, gang, drf, proportion, predicates, fgd]\n"
         "nodes:\n"
         "  - {name: " +
             ns +
             "-a, allocatable: {cpu: \"64\", memory: 256Gi}, gpus: {count: 8}}\n"
             "  - {name: " +
             ns + "-b, allocatable: {cpu: \"64\", memory: 256Gi}, gpus: {count: 8}}\n" +
             (profile ? "profile:\n"
                        "  - {count: 9000, task: {requests: {cpu: \"1\", nvidia.com/gpu: 2}}}\n"
                        "  - {count: 1000, task: {requests: {cpu: \"1\", nvidia.com/gpu: 1}}}\n"
                      : "") +
             "jobs:\n"
             "  - {name: fill-a, tasks: [{requests: {cpu: \"1\", nvidia.com/gpu: 6}}]}\n"
             "  - {name: fill-b, tasks: [{requests: {cpu: \"1\", nvidia.com/gpu: 5}}]}\n"
             "  - {name: probe, tasks: [{requests: {cpu: \"1\", nvidia.com/gpu: 1}}]}\n"
             "running:\n"
             "  - {job: fill-a, node: " +
             ns +
             "-a, gpus: [0, 1, 2, 3, 4, 5]}\n"
             "  - {job: fill-b, node: " +
             ns +
             "-b, gpus: [0, 1, 2, 3, 4]}\n"
             "expect:\n  onNodes: {probe: [" +
             expected + "]}\n";
  return RunCommand(GantryBinary() + " schedule --scenario " + file + " >" + file + ".out 2>&1");
}

TEST(Snapshot, TheDaemonPacksByTheShapesItSawArriveAsTheSimulatorDoes) {
  const std::string with = "snapprof";
  CreateFragmentedPair(with);
  const std::string placed = ProbeAfterHistory(with, /*profile=*/true);
  // fgd against 2-GPU tasks keeps a's pair whole (hand-computed: see
  // tests/scenario/profile_fgd_keeps_pairs_whole.yaml), and so does the simulator.
  EXPECT_EQ(placed, with + "-b");
  EXPECT_EQ(ScheduleExpecting(with, true, with + "-b"), 0);

  // The same history, with the profile off: fgd scores both alike, the lowest node takes it.
  const std::string without = "snapnone";
  CreateFragmentedPair(without);
  const std::string placed_without = ProbeAfterHistory(without, /*profile=*/false);
  EXPECT_EQ(placed_without, without + "-a");
  EXPECT_EQ(ScheduleExpecting(without, false, without + "-a"), 0);
}

}  // namespace
}  // namespace gantry::testing
