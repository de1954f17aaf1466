// Throughput side by side on one real API server (make bench-k8s): 5,000 nodes with 8
// GPUs, then the same number of pending pods for each of
//   - a plain loop that binds without scheduling (the ceiling),
//   - gantry serve,
//   - the upstream kube-scheduler built from the same Kubernetes version (client QPS
//     raised as its perf suite does),
// each measured by a watch on its namespace: bound pods over the time from the first
// bind seen to the last. Then more pods, to report gantry's peak memory (VmHWM) with the
// cluster at 5,000 nodes and 50,000 pods.
//
// With --claims true, as kube-scheduler's scheduler_perf DRA workloads
// (SchedulingWithResourceClaim): the nodes publish their devices through a ResourceSlice
// each (no extended resource), and every pod has a ResourceClaim of one device. The ceiling
// then also makes the claim writes kube-scheduler's PreBind makes (the delete-protection
// finalizer, then status.allocation and status.reservedFor), so it is the bind rate the
// claim writes allow; the plain bind ceiling is measured first in the same run.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "k8s/client.h"
#include "k8s/credentials.h"
#include "node_labels.h"

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using gantry::k8s::Client;

struct Options {
  int nodes = 5000;
  int pods = 10000;
  int total_pods = 50000;
  int workers = 16;
  std::string dir = "/tmp/gantry-bench-k8s";
  bool kube_scheduler = true;
  // This share of the measured pods carries required pod anti-affinity on the node: the
  // ones of each hundred that carry it may not share a node (scheduler_perf's
  // anti-affinity pods, in groups).
  int anti_affinity_percent = 0;
  // Pods ask for a device through a ResourceClaim instead of nvidia.com/gpu.
  bool claims = false;
};

constexpr const char* kDriver = "gpu.example.com";
constexpr const char* kDraApi = "/apis/resource.k8s.io/v1";

// Devices each node publishes with --claims: room for every phase's pods (the ceiling's,
// gantry's and kube-scheduler's stay bound, holding theirs).
int DevicesPerNode(const Options& o) {
  return std::max(8, (3 * o.pods + o.nodes - 1) / o.nodes);
}

std::string Sh(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, p)) out += buffer;
  if (pclose(p) != 0) {
    std::fprintf(stderr, "bench-k8s: failed: %s\n%s\n", command.c_str(), out.c_str());
    std::exit(1);
  }
  return out;
}

void ParallelFor(int n, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i; (i = next++) < n;) fn(i);
    });
  }
  for (std::thread& t : pool) t.join();
}

void Must(const gantry::Result<gantry::k8s::Response>& r, const std::string& what) {
  if (!r.ok()) {
    std::fprintf(stderr, "bench-k8s: %s: %s\n", what.c_str(), r.status().message().c_str());
    std::exit(1);
  }
  if (!r->ok() && r->status != 409) {
    std::fprintf(stderr, "bench-k8s: %s: %s\n", what.c_str(), r->Describe().c_str());
    std::exit(1);
  }
}

void CreateNodes(Client& c, const Options& o) {
  ParallelFor(o.nodes, 32, [&](int i) {
    std::string name = "node-" + std::to_string(i);
    json labels = json::object();
    for (const auto& [key, value] : gantry::bench::RealisticNodeLabels(i, name))
      labels[key] = value;
    json node = {
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", labels}}}};
    Must(c.Request("POST", "/api/v1/nodes", node.dump()), "create " + name);
    json resources = {{"cpu", "128"}, {"memory", "1Ti"}, {"pods", "110"}};
    if (!o.claims) resources["nvidia.com/gpu"] = "8";
    json status = {
        {"status",
         {{"capacity", resources},
          {"allocatable", resources},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
    Must(c.Request("PATCH", "/api/v1/nodes/" + name + "/status", status.dump(),
                   "application/merge-patch+json"),
         "status of " + name);
    if (o.claims) {
      json devices = json::array();
      for (int d = 0; d < DevicesPerNode(o); ++d) {
        devices.push_back(
            {{"name", "dev-" + std::to_string(d)}, {"attributes", {{"index", {{"int", d}}}}}});
      }
      json slice = {{"apiVersion", "resource.k8s.io/v1"},
                    {"kind", "ResourceSlice"},
                    {"metadata", {{"name", name + "-devices"}}},
                    {"spec",
                     {{"driver", kDriver},
                      {"nodeName", name},
                      {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                      {"devices", devices}}}};
      Must(c.Request("POST", std::string(kDraApi) + "/resourceslices", slice.dump()),
           "slice of " + name);
    }
  });
  if (o.claims) {
    json device_class = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "DeviceClass"},
        {"metadata", {{"name", kDriver}}},
        {"spec",
         {{"selectors",
           {{{"cel", {{"expression", std::string("device.driver == \"") + kDriver + "\""}}}}}}}}};
    Must(c.Request("POST", std::string(kDraApi) + "/deviceclasses", device_class.dump()),
         "device class");
  }
}

void CreateNamespace(Client& c, const std::string& ns) {
  json namespace_ = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  Must(c.Request("POST", "/api/v1/namespaces", namespace_.dump()), "namespace " + ns);
}

// What a pod asks for besides CPU and memory: GPUs of the device plugin, or (claims) one
// device through a ResourceClaim of its own, named as the pod.
struct PodAsk {
  int gpus = 0;
  bool claim = false;
  int anti_affinity_percent = 0;
};

// The pods' UIDs by index, for the ceiling's reservedFor (filled when `uids` is given).
void CreatePods(Client& c, const std::string& ns, int first, int count,
                const std::string& scheduler, const PodAsk& ask,
                std::vector<std::string>* uids = nullptr) {
  CreateNamespace(c, ns);
  if (uids != nullptr) uids->assign(first + count, "");
  ParallelFor(count, 32, [&](int k) {
    int i = first + k;
    const std::string name = "pod-" + std::to_string(i);
    json requests = {{"cpu", "100m"}, {"memory", "256Mi"}};
    json limits = json::object();
    if (ask.gpus > 0)
      requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = std::to_string(ask.gpus);
    json resources = {{"requests", requests}, {"limits", limits}};
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", {{"schedulerName", scheduler}}}};
    if (ask.claim) {
      json claim = {{"apiVersion", "resource.k8s.io/v1"},
                    {"kind", "ResourceClaim"},
                    {"metadata", {{"name", name}, {"namespace", ns}}},
                    {"spec",
                     {{"devices",
                       {{"requests",
                         {{{"name", "device"}, {"exactly", {{"deviceClassName", kDriver}}}}}}}}}}};
      Must(c.Request("POST", std::string(kDraApi) + "/namespaces/" + ns + "/resourceclaims",
                     claim.dump()),
           "create claim");
      pod["spec"]["resourceClaims"] = {{{"name", "device"}, {"resourceClaimName", name}}};
      resources["claims"] = {{{"name", "device"}}};
    }
    pod["spec"]["containers"] = {
        {{"name", "main"}, {"image", "busybox"}, {"resources", resources}}};
    const int anti_affinity_percent = ask.anti_affinity_percent;
    // Every (100 / percent)-th pod, spread over the index so that both kinds interleave.
    if (anti_affinity_percent > 0 && (i * anti_affinity_percent) % 100 < anti_affinity_percent) {
      const std::string group = "group-" + std::to_string(i / 100);
      pod["metadata"]["labels"] = {{"anti", group}};
      pod["spec"]["affinity"] = {{"podAntiAffinity",
                                  {{"requiredDuringSchedulingIgnoredDuringExecution",
                                    {{{"labelSelector", {{"matchLabels", {{"anti", group}}}}},
                                      {"topologyKey", "kubernetes.io/hostname"}}}}}}};
    }
    auto created = c.Request("POST", "/api/v1/namespaces/" + ns + "/pods", pod.dump());
    Must(created, "create pod");
    if (uids != nullptr) {
      (*uids)[i] = json::parse(created->body, nullptr, false)["metadata"].value("uid", "");
    }
  });
}

// Pods of one anti-affinity group that share a node: what neither scheduler may do.
int AntiAffinityViolations(Client& c, const std::string& ns) {
  auto list = c.Get("/api/v1/namespaces/" + ns + "/pods");
  Must(list, "list " + ns);
  std::map<std::pair<std::string, std::string>, int> on_node;
  int violations = 0;
  for (const json& p : json::parse(list->body)["items"]) {
    if (!p["metadata"].contains("labels") || !p["spec"].contains("nodeName")) continue;
    const auto key = std::make_pair(p["metadata"]["labels"].value("anti", ""),
                                    p["spec"]["nodeName"].get<std::string>());
    if (!key.first.empty() && on_node[key]++ > 0) violations++;
  }
  return violations;
}

// With claims: bound pods of `ns` whose claim is not allocated on their node and reserved
// for them, plus devices (of any namespace) that two claims' allocations share.
int ClaimViolations(Client& c, const std::string& ns) {
  auto claims = c.Get(std::string(kDraApi) + "/resourceclaims");
  auto pods = c.Get("/api/v1/namespaces/" + ns + "/pods");
  Must(claims, "list claims");
  Must(pods, "list " + ns);
  std::map<std::string, const json*> claim_of;                 // pod name in ns -> its claim
  std::map<std::pair<std::string, std::string>, int> holders;  // (pool, device) -> claims
  const json claim_list = json::parse(claims->body);
  int violations = 0;
  for (const json& claim : claim_list["items"]) {
    if (claim["metadata"]["namespace"] == ns) claim_of[claim["metadata"]["name"]] = &claim;
    const json& allocation = claim["status"].value("allocation", json::object());
    for (const json& r : allocation.value("devices", json::object()).value("results", json()))
      if (holders[{r.value("pool", ""), r.value("device", "")}]++ >= 1) violations++;
  }
  for (const json& p : json::parse(pods->body)["items"]) {
    if (!p["spec"].contains("nodeName")) continue;
    const std::string name = p["metadata"]["name"], node = p["spec"]["nodeName"];
    auto it = claim_of.find(name);
    bool ok = false;
    if (it != claim_of.end()) {
      const json& status = it->second->value("status", json::object());
      const json results = status.value("allocation", json::object())
                               .value("devices", json::object())
                               .value("results", json::array());
      const json reserved = status.value("reservedFor", json::array());
      ok = results.size() == 1 && results[0].value("pool", "") == node && reserved.size() == 1 &&
           reserved[0].value("uid", "") == p["metadata"].value("uid", "");
    }
    if (!ok) violations++;
  }
  return violations;
}

// Watches a namespace until `want` pods are bound; the times of the first and last bind.
class BindWatch {
 public:
  BindWatch(Client& c, const std::string& ns, int want) : c_(c), ns_(ns), want_(want) {
    auto list = c_.Get("/api/v1/namespaces/" + ns + "/pods?limit=1");
    Must(list, "list " + ns);
    version_ = json::parse(list->body)["metadata"]["resourceVersion"];
    thread_ = std::thread([this] { Run(); });
  }
  ~BindWatch() {
    stop_ = true;
    thread_.join();
  }
  bool Wait(double timeout_s) {
    auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < until) {
      if (bound() >= want_) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  int bound() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(seen_.size());
  }
  double PodsPerSecond() {
    std::lock_guard<std::mutex> lock(mu_);
    double span = std::chrono::duration<double>(last_ - first_).count();
    return span > 0 ? static_cast<double>(seen_.size() - 1) / span : 0;
  }
  Clock::time_point first() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_;
  }
  Clock::time_point last() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }

 private:
  void Run() {
    while (!stop_) {
      std::string path = "/api/v1/namespaces/" + ns_ +
                         "/pods?watch=1&allowWatchBookmarks=true&resourceVersion=" + version_;
      (void)c_.Stream(
          path,
          [this](std::string_view line) {
            json e = json::parse(line, nullptr, false);
            if (!e.is_object()) return true;
            const json& o = e["object"];
            if (o.contains("metadata") && o["metadata"].contains("resourceVersion")) {
              version_ = o["metadata"]["resourceVersion"];
            }
            if (e["type"] != "MODIFIED" && e["type"] != "ADDED") return true;
            if (!o["spec"].contains("nodeName")) return true;
            std::lock_guard<std::mutex> lock(mu_);
            if (seen_.insert(o["metadata"]["name"].get<std::string>()).second) {
              auto now = Clock::now();
              if (seen_.size() == 1) first_ = now;
              last_ = now;
            }
            return !stop_;
          },
          &stop_);
    }
  }
  Client& c_;
  std::string ns_;
  int want_;
  std::string version_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> seen_;
  Clock::time_point first_{}, last_{};
  std::thread thread_;
};

// What kube-scheduler's DynamicResources PreBind writes for a pod's claim before its bind:
// the finalizer (an update of the claim), then the allocation of `device` on `node` and the
// pod in reservedFor (an update of its status).
void WriteClaim(Client& c, const std::string& ns, const std::string& pod, const std::string& uid,
                const std::string& node, int device) {
  const std::string path = std::string(kDraApi) + "/namespaces/" + ns + "/resourceclaims/" + pod;
  json finalizer = {{"metadata", {{"finalizers", {"resource.kubernetes.io/delete-protection"}}}}};
  auto patched = c.Request("PATCH", path, finalizer.dump(), "application/merge-patch+json");
  Must(patched, "finalizer of claim " + pod);
  json status = {
      {"status",
       {{"allocation",
         {{"devices",
           {{"results",
             {{{"request", "device"},
               {"driver", kDriver},
               {"pool", node},
               {"device", "dev-" + std::to_string(device)}}}}}},
          {"nodeSelector",
           {{"nodeSelectorTerms",
             {{{"matchFields",
                {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}}}}},
        {"reservedFor", {{{"resource", "pods"}, {"name", pod}, {"uid", uid}}}}}}};
  Must(c.Request("PATCH", path + "/status", status.dump(), "application/merge-patch+json"),
       "allocation of claim " + pod);
}

void Bind(Client& c, const std::string& ns, const std::string& pod, const std::string& node) {
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", pod}, {"namespace", ns}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  Must(c.Request("POST", "/api/v1/namespaces/" + ns + "/pods/" + pod + "/binding", binding.dump()),
       "bind");
}

// Binds `pods` pods of `ns` without scheduling, with `workers` workers, each after its
// claim's writes when `claims`; the rate the watch saw.
double BindLoop(Client& c, const Options& o, const std::string& ns, bool claims,
                const std::vector<std::string>& uids) {
  BindWatch watch(c, ns, o.pods);
  ParallelFor(o.pods, o.workers, [&](int i) {
    const std::string name = "pod-" + std::to_string(i);
    const std::string node = "node-" + std::to_string(i % o.nodes);
    if (claims) WriteClaim(c, ns, name, uids[i], node, i / o.nodes);
    Bind(c, ns, name, node);
  });
  watch.Wait(120);
  return watch.PodsPerSecond();
}

int64_t PeakRssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

pid_t StartGantry(const Options& o, const std::string& binary) {
  const std::string config = o.dir + "/gantry.yaml";
  std::ofstream(config) << "schedulerName: gantry\nschedulePeriod: 1s\nbindWorkers: " << o.workers
                        << "\nlistenAddress: 127.0.0.1:0\nleaderElection: {enabled: false}\n";
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open((o.dir + "/gantry.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(binary.c_str(), binary.c_str(), "serve", "--config", config.c_str(), "--kubeconfig",
          (o.dir + "/kubeconfig").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string gantry_binary = GANTRY_BINARY;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--nodes") {
      o.nodes = std::stoi(v);
    } else if (k == "--pods") {
      o.pods = std::stoi(v);
    } else if (k == "--total-pods") {
      o.total_pods = std::stoi(v);
    } else if (k == "--dir") {
      o.dir = v;
    } else if (k == "--kube-scheduler") {
      o.kube_scheduler = v == "true";
    } else if (k == "--anti-affinity-percent") {
      o.anti_affinity_percent = std::stoi(v);
    } else if (k == "--claims") {
      o.claims = v == "true";
    } else if (k == "--gantry") {
      gantry_binary = v;
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--nodes N] [--pods N] [--total-pods N] [--dir DIR] "
          "[--kube-scheduler true|false] [--anti-affinity-percent P] [--claims true|false] "
          "[--gantry BINARY]\n",
          argv[0]);
      return 2;
    }
  }
  const std::string script = std::string(GANTRY_SOURCE_DIR) + "/scripts/k8s/testenv.sh";
  Sh(script + " stop " + o.dir + " >/dev/null 2>&1 || true");
  Sh("rm -rf " + o.dir + " && mkdir -p " + o.dir);
  Sh("GANTRY_K8S_KWOK=0 " + script + " start " + o.dir + " 2>&1");
  auto credentials = gantry::k8s::LoadKubeconfig(o.dir + "/kubeconfig");
  if (!credentials.ok())
    return std::fprintf(stderr, "%s\n", credentials.status().message().c_str()), 1;
  gantry::k8s::ClientOptions client_options;
  client_options.max_attempts = 8;
  auto client_or = Client::Create(*credentials, client_options);
  Client& c = **client_or;

  auto t0 = Clock::now();
  CreateNodes(c, o);
  std::fprintf(stderr, "bench-k8s: %d nodes in %.1f s\n", o.nodes,
               std::chrono::duration<double>(Clock::now() - t0).count());

  // 1. The ceiling: bind without scheduling, with as many workers as gantry binds with;
  // with claims, also the same again with each claim's writes before its bind.
  CreatePods(c, "ceiling", 0, o.pods, "nobody", PodAsk{.gpus = o.claims ? 0 : 1});
  const double ceiling = BindLoop(c, o, "ceiling", false, {});
  std::printf("bind_ceiling_pods_per_s=%.0f\n", ceiling);
  std::fflush(stdout);
  double claims_ceiling = 0;
  if (o.claims) {
    std::vector<std::string> uids;
    CreatePods(c, "ceiling-claims", 0, o.pods, "nobody", PodAsk{.claim = true}, &uids);
    claims_ceiling = BindLoop(c, o, "ceiling-claims", true, uids);
    std::printf("bind_with_claim_writes_ceiling_pods_per_s=%.0f\n", claims_ceiling);
    std::fflush(stdout);
  }
  const PodAsk measured{.gpus = o.claims ? 0 : 1,
                        .claim = o.claims,
                        .anti_affinity_percent = o.anti_affinity_percent};

  // 2. gantry.
  CreatePods(c, "gantry", 0, o.pods, "gantry", measured);
  double gantry_rate;
  pid_t gantry;
  {
    BindWatch watch(c, "gantry", o.pods);
    auto started = Clock::now();
    gantry = StartGantry(o, gantry_binary);
    bool all = watch.Wait(600);
    gantry_rate = watch.PodsPerSecond();
    std::fprintf(
        stderr,
        "bench-k8s: gantry bound %d/%d; first bind %.2f s after start, all %.2f s after start\n",
        watch.bound(), o.pods, std::chrono::duration<double>(watch.first() - started).count(),
        std::chrono::duration<double>(watch.last() - started).count());
    if (!all)
      std::fprintf(stderr, "bench-k8s: gantry did not bind every pod; see %s/gantry.log\n",
                   o.dir.c_str());
  }
  std::printf("gantry_pods_per_s=%.0f\n", gantry_rate);
  if (o.anti_affinity_percent > 0) {
    std::printf("gantry_anti_affinity_violations=%d\n", AntiAffinityViolations(c, "gantry"));
  }
  if (o.claims) std::printf("gantry_claim_violations=%d\n", ClaimViolations(c, "gantry"));
  std::fflush(stdout);

  // 3. kube-scheduler, same pods, QPS raised as in its scheduler_perf suite.
  const std::string kcfg = o.dir + "/kube-scheduler.yaml";
  std::ofstream(kcfg)
      << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "clientConnection:\n  kubeconfig: "
      << o.dir
      << "/kubeconfig\n  qps: 5000\n  burst: 5000\n"
         "leaderElection:\n  leaderElect: false\n";
  double kube_rate = 0;
  if (o.kube_scheduler) {
    CreatePods(c, "kube", 0, o.pods, "default-scheduler", measured);
    BindWatch watch(c, "kube", o.pods);
    auto started = Clock::now();
    Sh(script + " start-scheduler " + o.dir + " --config=" + kcfg + " 2>&1");
    bool all = watch.Wait(900);
    kube_rate = watch.PodsPerSecond();
    std::fprintf(stderr,
                 "bench-k8s: kube-scheduler bound %d/%d; first bind %.2f s after start, all %.2f s "
                 "after start\n",
                 watch.bound(), o.pods,
                 std::chrono::duration<double>(watch.first() - started).count(),
                 std::chrono::duration<double>(watch.last() - started).count());
    if (!all) std::fprintf(stderr, "bench-k8s: kube-scheduler did not bind every pod\n");
  }
  std::printf("kube_scheduler_pods_per_s=%.0f\n", kube_rate);
  if (o.kube_scheduler && o.anti_affinity_percent > 0) {
    std::printf("kube_scheduler_anti_affinity_violations=%d\n", AntiAffinityViolations(c, "kube"));
  }
  if (o.kube_scheduler && o.claims) {
    std::printf("kube_scheduler_claim_violations=%d\n", ClaimViolations(c, "kube"));
  }
  std::fflush(stdout);

  // 4. Memory: fill the cluster up to `total_pods` pods (CPU only, for gantry), then read
  // gantry's peak resident memory once it has bound them.
  int more = o.total_pods - (o.kube_scheduler ? 3 : 2) * o.pods - (o.claims ? o.pods : 0);
  if (more > 0) {
    // gantry binds these as they come: watch from before the first is created.
    CreateNamespace(c, "memory");
    BindWatch watch(c, "memory", more);
    CreatePods(c, "memory", 0, more, "gantry", PodAsk{});
    watch.Wait(600);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::printf("gantry_peak_rss_mib=%.0f\n", static_cast<double>(PeakRssKiB(gantry)) / 1024.0);
  std::printf("gantry_to_kube_scheduler_ratio=%.2f\n", kube_rate > 0 ? gantry_rate / kube_rate : 0);
  std::printf("gantry_to_ceiling_ratio=%.2f\n", ceiling > 0 ? gantry_rate / ceiling : 0);
  if (o.claims) {
    std::printf("gantry_to_claims_ceiling_ratio=%.2f\n",
                claims_ceiling > 0 ? gantry_rate / claims_ceiling : 0);
  }
  kill(gantry, SIGTERM);
  waitpid(gantry, nullptr, 0);
  Sh(script + " stop " + o.dir + " >/dev/null 2>&1");
  return 0;
}
