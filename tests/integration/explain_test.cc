// `gantry explain` against a daemon on the real API server (issue 14): three kinds of
// pending job, asked through the real binary at the daemon's page (--server), and as the
// kubectl plugin (the binary linked as kubectl-gantry):
//   (a) a Volcano Queue's capability holds a pod that needs more GPUs than it allows;
//   (b) no node fits a pod: a selector, a taint and a node with too few free GPUs;
//   (c) a gang of three 8-GPU pods on two free 8-GPU nodes: one member short.
// And the answers for a bound pod and for a name gantry does not know.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

constexpr const char* kTest = "explain";
constexpr const char* kScheduler = "gantry-explain";

struct Output {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `program args` (a shell command line) and keeps what it printed.
Output RunCommand(const std::string& program, const std::string& args) {
  char dir_template[] = "/tmp/gantry-explain-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string command = "'" + program + "' " + args + " >" + dir + "/out 2>" + dir + "/err";
  Output r;
  const int status = std::system(command.c_str());
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(dir + "/out");
  r.err = Slurp(dir + "/err");
  std::remove((dir + "/out").c_str());
  std::remove((dir + "/err").c_str());
  rmdir(dir.c_str());
  return r;
}

json Pod(const std::string& name, int gpus, const std::string& selector,
         json annotations = json::object()) {
  json requests = {{"cpu", "500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", kTest}, {"annotations", annotations}}},
      {"spec",
       {{"schedulerName", kScheduler},
        {"nodeSelector", {{"gantry-test", selector}}},
        {"containers",
         {{{"name", "main"},
           {"image", "busybox"},
           {"resources",
            {{"requests", requests}, {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}}};
}

void MustCreate(const json& object) {
  auto r = Env().Apply(object);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

void MustCreateNode(const std::string& name, const std::string& selector) {
  auto r = Env().CreateNode(name, 8, "32", "256Gi", {{"gantry-test", selector}});
  ASSERT_TRUE(r.ok()) << r.status().message();
}

std::string DaemonConfigWithPage() {
  return std::string("schedulerName: ") + kScheduler +
         "\n"
         "schedulePeriod: 500ms\n"
         "bindWorkers: 4\n"
         "listenAddress: 127.0.0.1:0\n"
         "pageAddress: 127.0.0.1:0\n"
         "leaderElection: {enabled: false}\n"
         "engine:\n  actions: [enqueue, allocate, backfill]\n"
         "  plugins: [priority, gang, drf, proportion, predicates, binpack]\n";
}

// `gantry explain TARGET --server URL` until its output holds `want` (the daemon explains
// at most once a second), or the timeout; the last run.
Output ExplainUntil(const std::string& program, const std::string& target, const std::string& url,
                    const std::string& want) {
  Output last;
  TestEnv::WaitFor(
      [&] {
        last = RunCommand(program, "explain " + target + " --server " + url);
        return last.out.find(want) != std::string::npos;
      },
      seconds(30), std::chrono::milliseconds(300));
  return last;
}

TEST(Explain, ThreeKindsOfPendingJobInPlainWords) {
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(kTest).ok());
  // (b)'s nodes: one that will have 2 GPUs free, one tainted.
  MustCreateNode("explain-big-0", "explain");
  MustCreateNode("explain-tainted-0", "explain");
  auto tainted = Env().Call(
      "PATCH", "/api/v1/nodes/explain-tainted-0",
      {{"spec",
        {{"taints", {{{"key", "dedicated"}, {"value", "inference"}, {"effect", "NoSchedule"}}}}}}},
      "application/merge-patch+json");
  ASSERT_TRUE(tainted.ok()) << tainted.status().message();
  // (a) and (c)'s nodes: two free 8-GPU nodes.
  MustCreateNode("explain-gang-0", "explain-gang");
  MustCreateNode("explain-gang-1", "explain-gang");
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "Queue"},
              {"metadata", {{"name", "explain-capped"}}},
              {"spec", {{"weight", 1}, {"capability", {{"nvidia.com/gpu", 4}}}}}});

  DaemonProcess daemon(kTest, DaemonConfigWithPage(), "d-explain");
  int port = 0;
  ASSERT_TRUE(TestEnv::WaitFor([&] { return (port = PagePort(daemon)) > 0; }, seconds(20)))
      << daemon.Log();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::string gantry = GantryBinary();

  MustCreate(Pod("filler", 6, "explain"));
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = Env().Call("GET", std::string("/api/v1/namespaces/") + kTest + "/pods/filler");
        return p.ok() && (*p)["spec"].value("nodeName", "") == "explain-big-0";
      },
      seconds(20)))
      << daemon.Log();
  MustCreate(Pod("wide", 8, "explain"));
  MustCreate(Pod("capped", 8, "explain-gang", {{"gantry.dev/queue", "explain-capped"}}));
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "trio"}, {"namespace", kTest}}},
              {"spec", {{"minMember", 3}}}});
  for (int i = 0; i < 3; ++i) {
    MustCreate(Pod("trio-" + std::to_string(i), 8, "explain-gang",
                   {{"scheduling.k8s.io/group-name", "trio"}}));
  }

  // (a) The queue's capability.
  const Output capped = ExplainUntil(gantry, "explain/capped", url, "Queue limit: queue");
  EXPECT_EQ(capped.rc, 0) << capped.err;
  EXPECT_NE(capped.out.find("pod explain/capped is pending (1 pod not placed)."), std::string::npos)
      << capped.out;
  EXPECT_NE(capped.out.find("Queue limit: queue explain-capped uses 0 of its 4 nvidia.com/gpu "
                            "(capability); this job needs 8 more to start."),
            std::string::npos)
      << capped.out;
  EXPECT_NE(capped.out.find(
                "What it would take: queue explain-capped's limit on nvidia.com/gpu raised by 4."),
            std::string::npos)
      << capped.out;

  // (b) No node fits: the predicates with their node counts, the closest node.
  const Output wide = ExplainUntil(gantry, "explain/wide", url, "Closest nodes:");
  EXPECT_EQ(wide.rc, 0) << wide.err;
  EXPECT_NE(wide.out.find("Queue limit: none holds it."), std::string::npos) << wide.out;
  // Taints are looked at before selectors: other tests' tainted nodes count here too.
  EXPECT_NE(wide.out.find(" node(s): node(s) had untolerated taint(s)\n"), std::string::npos)
      << wide.out;
  EXPECT_NE(wide.out.find("  1 node(s): Insufficient free whole GPUs (nvidia.com/gpu)\n"),
            std::string::npos)
      << wide.out;
  EXPECT_NE(wide.out.find("Closest nodes:\n  explain-big-0: 2 GPUs free, needs 8\n"),
            std::string::npos)
      << wide.out;
  EXPECT_NE(wide.out.find("What it would take: 1 more node with 8 free GPUs."), std::string::npos)
      << wide.out;

  // (c) The gang, asked by its PodGroup and by one of its pods.
  const Output trio = ExplainUntil(gantry, "explain/trio", url, "Gang: needs 3");
  EXPECT_EQ(trio.rc, 0) << trio.err;
  EXPECT_NE(trio.out.find("PodGroup explain/trio is pending (3 pods not placed)."),
            std::string::npos)
      << trio.out;
  EXPECT_NE(
      trio.out.find(
          "Gang: needs 3 pods together (minMember), 0 running, room for 2 more now: 1 short."),
      std::string::npos)
      << trio.out;
  EXPECT_NE(trio.out.find("What it would take: 1 more node with 8 free GPUs."), std::string::npos)
      << trio.out;
  const Output member = ExplainUntil(gantry, "explain/trio-1", url, "Gang: needs 3");
  EXPECT_NE(member.out.find("pod explain/trio-1 (gang explain/trio) is pending"), std::string::npos)
      << member.out;

  // Not pending, and unknown.
  const Output filler = RunCommand(gantry, "explain explain/filler --server " + url);
  EXPECT_EQ(filler.rc, 0) << filler.err;
  EXPECT_EQ(filler.out, "pod explain/filler is not pending: bound to node explain-big-0.\n");
  const Output nope = RunCommand(gantry, "explain explain/nope --server " + url);
  EXPECT_EQ(nope.rc, 1);
  EXPECT_NE(nope.err.find("no pod or PodGroup explain/nope that gantry schedules"),
            std::string::npos)
      << nope.err;
  const Output bad = RunCommand(gantry, "explain nope --server " + url);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("expected NAMESPACE/NAME"), std::string::npos) << bad.err;

  // The kubectl plugin: the same binary, linked as kubectl-gantry.
  char dir_template[] = "/tmp/gantry-plugin-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string plugin = dir + "/kubectl-gantry";
  ASSERT_EQ(symlink(gantry.c_str(), plugin.c_str()), 0);
  const Output via_plugin = RunCommand(plugin, "explain explain/wide --server " + url);
  EXPECT_EQ(via_plugin.rc, 0) << via_plugin.err;
  EXPECT_NE(via_plugin.out.find("Closest nodes:\n  explain-big-0: 2 GPUs free, needs 8\n"),
            std::string::npos)
      << via_plugin.out;
  const Output help = RunCommand(plugin, "--help");
  EXPECT_NE(help.out.find("kubectl-gantry"), std::string::npos) << help.out;
  const Output queues = RunCommand(plugin, "queues --server " + url);
  EXPECT_EQ(queues.rc, 0) << queues.err;
  EXPECT_NE(queues.out.find("explain-capped"), std::string::npos) << queues.out;
  const Output top = RunCommand(plugin, "top --server " + url);
  EXPECT_EQ(top.rc, 0) << top.err;
  EXPECT_NE(top.out.find("explain-big-0"), std::string::npos) << top.out;
  std::remove(plugin.c_str());
  rmdir(dir.c_str());

  // The outputs, for the record (the note shows them).
  std::printf("---- gantry explain explain/capped\n%s", capped.out.c_str());
  std::printf("---- gantry explain explain/wide\n%s", wide.out.c_str());
  std::printf("---- gantry explain explain/trio\n%s", trio.out.c_str());
  std::printf("---- kubectl-gantry queues\n%s", queues.out.c_str());
  std::printf("---- kubectl-gantry top\n%s", top.out.c_str());
}

}  // namespace
}  // namespace gantry::testing
