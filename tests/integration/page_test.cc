// The live page (issue 14) in a real browser: the daemon on the real API server with GPU
// nodes (whole, shared and MIG GPUs, one node cordoned, two topology levels), three queues,
// bound pods and pending ones whose reasons are known; headless Chromium (Debian's, from
// scripts/setup.sh) loads the page, and the test reads the DOM it built from the JSON and
// saves a screenshot. Also: the page's listener is on the loopback interface by default,
// and the two listeners serve only their own paths.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/integration/daemon_process.h"
#include "tests/integration/dra_objects.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

constexpr char kTest[] = "page";

TestEnv& Env() {
  return TestEnv::Get();
}

void MustCreate(const json& object) {
  auto created = Env().Apply(object);
  ASSERT_TRUE(created.ok()) << created.status().message();
}

void GpuNode(const std::string& name, int gpus, const std::string& zone, const std::string& rack) {
  std::map<std::string, std::string> labels = {
      {"gantry-test", kTest}, {"page-zone", zone}, {"page-rack", rack}};
  if (gpus > 0) labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
  auto node = Env().CreateNode(name, gpus, "64", "512Gi", labels);
  ASSERT_TRUE(node.ok()) << node.status().message();
}

// Two A100-80GB GPUs cut into 7 x 1g.10gb each (the GPU operator's mixed strategy).
void MigNode(const std::string& name, const std::string& zone, const std::string& rack) {
  MustCreate({{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata",
               {{"name", name},
                {"labels",
                 {{"gantry-test", kTest},
                  {"kubernetes.io/hostname", name},
                  {"page-zone", zone},
                  {"page-rack", rack},
                  {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                  {"nvidia.com/mig.strategy", "mixed"}}}}}});
  json resources = {
      {"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/mig-1g.10gb", "14"}};
  auto patched = Env().Call(
      "PATCH", "/api/v1/nodes/" + name + "/status",
      {{"status",
        {{"capacity", resources},
         {"allocatable", resources},
         {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}},
      "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.status().message();
}

void Queue(const std::string& name, int weight, int gpu_capability = 0) {
  json spec = {{"weight", weight}, {"reclaimable", true}};
  if (gpu_capability > 0) spec["capability"] = {{"nvidia.com/gpu", gpu_capability}};
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "Queue"},
              {"metadata", {{"name", name}}},
              {"spec", spec}});
}

// What a test pod asks for.
struct PodShape {
  std::string queue;
  std::string node;  // pinned by hostname; "" for any of the test's nodes
  int gpus = 0;
  std::string fraction = {};     // gantry.dev/gpu-fraction
  std::string mig_profile = {};  // one nvidia.com/mig-<profile>
  std::string group = {};        // a Volcano PodGroup
};

void Pod(const std::string& name, const PodShape& shape) {
  json requests = {{"cpu", "1"}, {"memory", "4Gi"}};
  json limits = json::object();
  if (shape.gpus > 0) {
    requests["nvidia.com/gpu"] = std::to_string(shape.gpus);
    limits["nvidia.com/gpu"] = std::to_string(shape.gpus);
  }
  if (!shape.mig_profile.empty()) {
    requests["nvidia.com/mig-" + shape.mig_profile] = "1";
    limits["nvidia.com/mig-" + shape.mig_profile] = "1";
  }
  json annotations = {{"gantry.dev/queue", shape.queue}};
  if (!shape.fraction.empty()) annotations["gantry.dev/gpu-fraction"] = shape.fraction;
  if (!shape.group.empty()) annotations["scheduling.k8s.io/group-name"] = shape.group;
  json selector = {{"gantry-test", kTest}};
  if (!shape.node.empty()) selector["kubernetes.io/hostname"] = shape.node;
  MustCreate({{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", kTest}, {"annotations", annotations}}},
              {"spec",
               {{"schedulerName", std::string("gantry-") + kTest},
                {"nodeSelector", selector},
                {"containers",
                 {{{"name", "main"},
                   {"image", "registry.k8s.io/pause:3.10"},
                   {"resources", {{"requests", requests}, {"limits", limits}}}}}}}}});
}

// On node `page-dra` (no GPUs in its allocatable), two devices of driver page.example.com
// published by a ResourceSlice, and a pod whose claim `page/dra-claim` asks for one of them.
void DraNodeAndPod() {
  auto node =
      Env().CreateNode("page-dra", 0, "8", "16Gi",
                       {{"gantry-test", kTest}, {"page-zone", "zone-2"}, {"page-rack", "rack-3"}});
  ASSERT_TRUE(node.ok()) << node.status().message();
  MustCreate(Slice("page-dra-devices", "page.example.com", "page-dra",
                   {Device("dev-0"), Device("dev-1")}));
  MustCreate(DeviceClass("page.example.com", "device.driver == \"page.example.com\""));
  MustCreate(
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "ResourceClaim"},
       {"metadata", {{"name", "dra-claim"}, {"namespace", kTest}}},
       {"spec",
        {{"devices",
          {{"requests",
            {{{"name", "dev"}, {"exactly", {{"deviceClassName", "page.example.com"}}}}}}}}}}});
  MustCreate({{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "dra-1"},
                {"namespace", kTest},
                {"annotations", {{"gantry.dev/queue", "page-research"}}}}},
              {"spec",
               {{"schedulerName", std::string("gantry-") + kTest},
                {"nodeSelector", {{"gantry-test", kTest}, {"kubernetes.io/hostname", "page-dra"}}},
                {"resourceClaims", {{{"name", "dev"}, {"resourceClaimName", "dra-claim"}}}},
                {"containers",
                 {{{"name", "main"},
                   {"image", "registry.k8s.io/pause:3.10"},
                   {"resources", {{"claims", {{{"name", "dev"}}}}}}}}}}}});
}

json GetPod(const std::string& name) {
  auto pod = Env().Call("GET", std::string("/api/v1/namespaces/") + kTest + "/pods/" + name);
  return pod.ok() ? *pod : json();
}

// The first number the daemon's log gives after `prefix`; 0 when none yet.
int PortFromLog(const std::string& log, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(pattern))) return 0;
  return std::stoi(m[1]);
}

// The local addresses (hex "0100007F" for 127.0.0.1) of the IPv4 sockets listening on
// `port`, from /proc/net/tcp.
std::vector<std::string> ListeningAddresses(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  char want[8];
  std::snprintf(want, sizeof want, "%04X", port);
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state == "0A" && local.substr(local.find(':') + 1) == want) {
      out.push_back(local.substr(0, local.find(':')));
    }
  }
  return out;
}

std::string Escape(const std::string& text) {  // as a DOM dump writes text
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// Runs Debian's Chromium headless on `url` with `args`; its stdout.
std::string Chromium(const std::string& args, const std::string& url) {
  static int runs = 0;
  const std::string profile = Env().dir() + "/chromium-profile-" + std::to_string(runs++);
  std::filesystem::remove_all(profile);
  const std::string command =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic "
      "--no-first-run --disable-background-networking --disable-component-update "
      "--disable-sync --user-data-dir=" +
      profile + " " + args + " " + url + " 2>>" + Env().dir() + "/chromium.log";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 65536> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

// The part of the DOM for one node: from its row to the next.
std::string NodeRow(const std::string& dom, const std::string& node) {
  const size_t at = dom.find("data-node=\"" + node + "\"");
  if (at == std::string::npos) return "";
  const size_t end = dom.find("data-node=\"", at + 1);
  return dom.substr(at, (end == std::string::npos ? dom.size() : end) - at);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Page, ABrowserShowsTheClusterTheQueuesAndWhyJobsWait) {
  ASSERT_EQ(std::system("command -v chromium >/dev/null"), 0)
      << "chromium is not installed: run scripts/setup.sh";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(kTest).ok());
  Queue("page-prod", 3);
  Queue("page-research", 2);
  Queue("page-dev", 1, /*gpu_capability=*/2);
  GpuNode("page-a1", 8, "zone-1", "rack-1");
  GpuNode("page-a2", 8, "zone-1", "rack-1");
  GpuNode("page-b1", 8, "zone-1", "rack-2");
  GpuNode("page-b2", 8, "zone-1", "rack-2");
  auto cordon = Env().Call("PATCH", "/api/v1/nodes/page-b2", {{"spec", {{"unschedulable", true}}}},
                           "application/merge-patch+json");
  ASSERT_TRUE(cordon.ok()) << cordon.status().message();
  MigNode("page-c1", "zone-2", "rack-3");
  GpuNode("page-c2", 4, "zone-2", "rack-3");
  GpuNode("page-cpu", 0, "zone-2", "rack-3");
  DraNodeAndPod();

  Pod("train-1", {"page-prod", "page-a1", 8});
  Pod("train-2", {"page-research", "page-a2", 4});
  Pod("notebook-1", {"page-research", "page-a2", 0, "0.5"});
  Pod("notebook-2", {"page-research", "page-a2", 0, "0.5"});
  Pod("notebook-3", {"page-dev", "page-b1", 0, "0.25"});
  Pod("infer-1", {"page-prod", "page-b1", 2});
  Pod("mig-1", {"page-dev", "page-c1", 0, "", "1g.10gb"});
  Pod("mig-2", {"page-dev", "page-c1", 0, "", "1g.10gb"});
  Pod("etl-1", {"page-research", "page-cpu"});
  // Waiting: no node has 16 GPUs; a gang of four 8-GPU pods (no four nodes are free);
  // four GPUs in a queue capped at two.
  Pod("too-big", {"page-research", "", 16});
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "allreduce"}, {"namespace", kTest}}},
              {"spec", {{"minMember", 4}, {"queue", "page-research"}}}});
  for (int i = 0; i < 4; ++i) {
    Pod("allreduce-" + std::to_string(i), {"page-research", "", 8, "", "", "allreduce"});
  }
  Pod("dev-big", {"page-dev", "", 4});

  // The shipped default for pageAddress (127.0.0.1:10260): the configuration names none.
  // Where another daemon on this machine holds that port (another checkout's tests), an
  // explicit loopback address with a free port instead: the binding is checked all the same.
  std::string config = DaemonConfig(std::string("gantry-") + kTest);
  const bool default_port_free = ListeningAddresses(10260).empty();
  config = std::regex_replace(config, std::regex("pageAddress: .*\n"),
                              default_port_free ? "" : "pageAddress: 127.0.0.1:0\n");
  if (!default_port_free) std::fprintf(stderr, "page test: port 10260 is taken; using port 0\n");
  config += "topologyKeys: [page-zone, page-rack]\n";
  DaemonProcess daemon(kTest, config, std::string("d-") + kTest);

  for (const char* bound : {"train-1", "train-2", "notebook-1", "notebook-2", "notebook-3",
                            "infer-1", "mig-1", "mig-2", "etl-1", "dra-1"}) {
    ASSERT_TRUE(TestEnv::WaitFor([&] { return GetPod(bound)["spec"].value("nodeName", "") != ""; },
                                 seconds(30)))
        << bound << "\n"
        << daemon.Log();
  }
  std::string too_big_reason;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        too_big_reason = PodScheduledMessage(GetPod("too-big"));
        return !too_big_reason.empty() && !PodScheduledMessage(GetPod("dev-big")).empty() &&
               !PodScheduledMessage(GetPod("allreduce-0")).empty();
      },
      seconds(30)))
      << daemon.Log();

  // Two listeners, each with its own paths; the page's on the loopback interface only.
  int status_port = 0, page_port = 0;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        const std::string log = daemon.Log();
        status_port = PortFromLog(log, "listening on port (\\d+)");
        page_port = PortFromLog(log, "page on \\S+ \\(port (\\d+)\\)");
        return status_port > 0 && page_port > 0;
      },
      seconds(10)))
      << daemon.Log();
  if (default_port_free) {
    EXPECT_EQ(page_port, 10260);
  }
  EXPECT_EQ(ListeningAddresses(page_port), std::vector<std::string>{"0100007F"});
  EXPECT_EQ(HttpGet(page_port, "/metrics").first, 404);
  EXPECT_EQ(HttpGet(page_port, "/healthz").first, 404);
  EXPECT_EQ(HttpGet(status_port, "/api/cluster").first, 404);
  EXPECT_EQ(HttpGet(status_port, "/").first, 404);
  EXPECT_EQ(HttpGet(status_port, "/metrics").first, 200);

  // The page's view has caught up with what the API server shows (it is published about
  // once a second).
  json pending;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto [status, body] = HttpGet(page_port, "/api/pending");
        if (status != 200) return false;
        pending = json::parse(body);
        for (const json& job : pending["jobs"]) {
          if (job["name"] == "page/too-big" && job["reason"] == too_big_reason) return true;
        }
        return false;
      },
      seconds(20)))
      << pending.dump(2) << "\nthe pod says: " << too_big_reason;

  const std::string url = "http://127.0.0.1:" + std::to_string(page_port) + "/";
  const std::string dom = Chromium("--virtual-time-budget=5000 --dump-dom", url);
  std::ofstream(Env().dir() + "/page-dom.html") << dom;
  ASSERT_TRUE(dom.find("data-loaded=") != std::string::npos)
      << "the page never loaded its JSON; DOM:\n"
      << dom.substr(0, 4000);
  EXPECT_NE(dom.find("id=\"error\" class=\"error\" hidden"), std::string::npos);

  // GPUs by node, each in its topology domain.
  EXPECT_NE(dom.find("data-domain=\"zone-1/rack-1\""), std::string::npos);
  EXPECT_NE(dom.find("data-domain=\"zone-2/rack-3\""), std::string::npos);
  const std::string a1 = NodeRow(dom, "page-a1");
  EXPECT_EQ(Count(a1, "data-state=\"whole\""), 8) << a1;
  const std::string a2 = NodeRow(dom, "page-a2");
  EXPECT_EQ(Count(a2, "data-state=\"whole\""), 4) << a2;
  const int a2_shared = Count(a2, "data-state=\"shared\"") + Count(a2, "data-state=\"fragmented\"");
  EXPECT_GE(a2_shared, 1) << a2;  // the two halves share a GPU or take one each
  EXPECT_LE(a2_shared, 2) << a2;
  EXPECT_EQ(Count(a2, "data-state=\"free\""), 4 - a2_shared) << a2;
  const std::string b1 = NodeRow(dom, "page-b1");
  EXPECT_EQ(Count(b1, "data-state=\"whole\""), 2) << b1;
  EXPECT_EQ(Count(b1, "data-state=\"fragmented\""), 1) << b1;
  EXPECT_EQ(Count(b1, "data-state=\"free\""), 5) << b1;
  const std::string b2 = NodeRow(dom, "page-b2");
  EXPECT_NE(b2.find("cordoned"), std::string::npos) << b2;
  EXPECT_EQ(Count(b2, "data-state=\"free\""), 8) << b2;
  const std::string c1 = NodeRow(dom, "page-c1");
  EXPECT_EQ(Count(c1, "data-state=\"mig\""), 2) << c1;
  EXPECT_EQ(Count(c1, "data-profile=\"1g.10gb\""), 14) << c1;
  EXPECT_EQ(Count(c1, "data-used=\"true\""), 2) << c1;
  EXPECT_NE(NodeRow(dom, "page-cpu").find("no GPUs"), std::string::npos);
  // The DRA node: its two devices, the one the claim holds named with it.
  const std::string dra = NodeRow(dom, "page-dra");
  EXPECT_EQ(Count(dra, "class=\"gpu dra "), 2) << dra;
  EXPECT_EQ(Count(dra, "data-claims=\"page/dra-claim\""), 1) << dra;
  EXPECT_EQ(Count(dra, "data-claims=\"\""), 1) << dra;
  EXPECT_NE(dra.find("data-device=\"page.example.com/page-dra/dev-"), std::string::npos) << dra;

  // Queues, pending jobs with their reasons.
  for (const char* queue : {"page-prod", "page-research", "page-dev"}) {
    EXPECT_NE(dom.find(std::string("data-queue=\"") + queue + "\""), std::string::npos) << queue;
  }
  EXPECT_NE(dom.find("data-job=\"page/too-big\""), std::string::npos);
  EXPECT_NE(dom.find(Escape(too_big_reason)), std::string::npos) << too_big_reason;
  EXPECT_NE(dom.find("data-job=\"page/allreduce\""), std::string::npos);
  EXPECT_NE(dom.find("data-job=\"page/dev-big\""), std::string::npos);

  // And a picture of it.
  const std::string png = Env().dir() + "/live-page.png";
  std::filesystem::remove(png);
  Chromium(
      "--virtual-time-budget=5000 --hide-scrollbars --window-size=1400,1000 --screenshot=" + png,
      url);
  ASSERT_TRUE(std::filesystem::exists(png))
      << "no screenshot; see " << Env().dir() << "/chromium.log";
  std::ifstream in(png, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(std::filesystem::file_size(png), 20000u) << png;
  std::fprintf(stderr, "page test: screenshot at %s\n", png.c_str());
}

}  // namespace
}  // namespace gantry::testing
