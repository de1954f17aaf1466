#include "cli/cluster_view_cmd.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "explain/explanation_json.h"
#include "k8s/client.h"

namespace gantry {
namespace {

using nlohmann::json;

constexpr int kStandbyRetries = 5;

struct Answer {
  long status = 0;
  json body;
};

// GETs `api_path` ("/api/queues") from the scheduler's page: at --server, else through
// the API server's proxy to the Service's port named "page".
Result<Answer> Fetch(const ClusterViewOptions& o, const std::string& api_path) {
  k8s::Credentials credentials;
  std::string path = api_path;
  if (!o.server.empty()) {
    credentials.server = o.server;
    credentials.source = "--server";
  } else {
    auto found = k8s::FindCredentials(o.kubeconfig);
    if (!found.ok()) return found.status();
    credentials = *found;
    path = "/api/v1/namespaces/" + o.scheduler_namespace + "/services/" + o.service +
           ":page/proxy" + api_path;
  }
  k8s::ClientOptions options;
  options.timeout_s = 10;
  options.max_attempts = 2;
  auto client = k8s::Client::Create(credentials, options);
  if (!client.ok()) return client.status();
  // Through the service proxy the answer may come from the standby replica, which does
  // not schedule and answers 503: ask again, a few times.
  auto response = (*client)->Get(path);
  for (int attempt = 1; attempt < kStandbyRetries && response.ok() && response->status == 503;
       ++attempt) {
    response = (*client)->Get(path);
  }
  if (!response.ok()) {
    return Status::IoError("cannot reach the scheduler (" + credentials.source +
                           "): " + response.status().message());
  }
  Answer out;
  out.status = response->status;
  out.body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (out.body.is_discarded()) {
    std::string start = response->body.substr(0, 200);
    return Status::IoError("the answer from " + credentials.server + path + " (HTTP " +
                           std::to_string(response->status) + ") is not JSON: " + start);
  }
  return out;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double Num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

// 4, 2.5, 0.125: a number as short as it is exact to the thousandth.
std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// An amount of `resource` in a map of amounts (base units), or "-" when the map is null.
std::string AmountIn(const json& amounts, const char* resource) {
  if (!amounts.is_object()) return "-";
  return Short(Num(amounts, resource));
}

int Fail(const std::string& program, const std::string& message, int code) {
  std::fprintf(stderr, "%s: %s\n", program.c_str(), message.c_str());
  return code;
}

int RunExplain(const std::string& program, const ClusterViewOptions& o) {
  const size_t slash = o.target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == o.target.size() ||
      o.target.find('/', slash + 1) != std::string::npos) {
    return Fail(program,
                "explain: expected NAMESPACE/NAME (a pod or a PodGroup), got \"" + o.target + "\"",
                2);
  }
  auto answer = Fetch(o, "/api/explain/" + o.target);
  if (!answer.ok()) return Fail(program, answer.status().message(), 2);
  const json& j = answer->body;
  if (answer->status != 200) {
    return Fail(
        program,
        "explain " + o.target + ": " +
            (Str(j, "error").empty() ? "HTTP " + std::to_string(answer->status) : Str(j, "error")),
        1);
  }
  if (o.output == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const std::string kind = Str(j, "kind") == "PodGroup" ? "PodGroup" : "pod";
  std::string name = kind + " " + o.target;
  const std::string job = Str(j, "job");
  if (kind == "pod" && !job.empty() && job != o.target) name += " (gang " + job + ")";
  const std::string state = Str(j, "state");
  if (state == "pending") {
    std::cout << ExplanationText(j, name);
  } else if (state == "bound" || state == "binding") {
    std::cout << name << " is not pending: " << (state == "bound" ? "bound" : "being bound")
              << " to node " << Str(j, "node") << ".\n";
  } else if (state == "finished") {
    std::cout << name << " is not pending: it has finished (" << Str(j, "phase") << ").\n";
  } else if (state == "deleting") {
    std::cout << name << " is not pending: it is being deleted.\n";
  } else {
    std::cout << name << " is not pending";
    if (j.contains("running")) {
      std::cout << ": " << static_cast<int64_t>(Num(j, "running")) << " of "
                << static_cast<int64_t>(Num(j, "pods")) << " pods running";
    }
    std::cout << ".\n";
  }
  return 0;
}

int RunQueues(const std::string& program, const ClusterViewOptions& o) {
  auto answer = Fetch(o, "/api/queues");
  if (!answer.ok()) return Fail(program, answer.status().message(), 2);
  const json& j = answer->body;
  if (answer->status != 200) return Fail(program, "queues: " + Str(j, "error"), 1);
  if (o.output == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%-20s %6s %9s %9s %9s %9s %9s %9s %8s %8s\n", "QUEUE", "WEIGHT", "GPU-DESV",
              "GPU-ALLOC", "GPU-PEND", "CPU-DESV", "CPU-ALLOC", "CPU-PEND", "JOBS-PND", "TASKS-RN");
  for (const json& q : j.value("queues", json::array())) {
    const json deserved = q.value("deserved", json());
    const json allocated = q.value("allocated", json::object());
    const json pending = q.value("pending", json::object());
    std::printf("%-20s %6s %9s %9s %9s %9s %9s %9s %8s %8s\n", Str(q, "name").c_str(),
                Short(Num(q, "weight")).c_str(), AmountIn(deserved, "nvidia.com/gpu").c_str(),
                AmountIn(allocated, "nvidia.com/gpu").c_str(),
                AmountIn(pending, "nvidia.com/gpu").c_str(), AmountIn(deserved, "cpu").c_str(),
                AmountIn(allocated, "cpu").c_str(), AmountIn(pending, "cpu").c_str(),
                Short(Num(q, "pendingJobs")).c_str(), Short(Num(q, "runningTasks")).c_str());
  }
  return 0;
}

int RunTop(const std::string& program, const ClusterViewOptions& o) {
  auto answer = Fetch(o, "/api/cluster");
  if (!answer.ok()) return Fail(program, answer.status().message(), 2);
  const json& j = answer->body;
  if (answer->status != 200) return Fail(program, "top: " + Str(j, "error"), 1);
  if (o.output == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const json summary = j.value("summary", json::object());
  std::printf("%s nodes, %s GPUs: %s allocated, %s free, %s fragmented\n\n",
              Short(Num(summary, "nodes")).c_str(), Short(Num(summary, "gpus")).c_str(),
              Short(Num(summary, "gpusAllocated")).c_str(), Short(Num(summary, "gpusFree")).c_str(),
              Short(Num(summary, "fragmentedGpus")).c_str());
  std::printf("%-24s %-16s %-12s %9s %9s %11s %6s\n", "NODE", "DOMAIN", "GPU-MODEL", "GPU-USED",
              "GPU-FREE", "CPU-USED", "PODS");
  for (const json& d : j.value("domains", json::array())) {
    const std::string domain = Str(d, "path").empty() ? "-" : Str(d, "path");
    for (const json& n : d.value("nodes", json::array())) {
      double used_milli = 0;
      int64_t free = 0, total = 0;
      for (const json& g : n.value("gpus", json::array())) {
        ++total;
        used_milli += Num(g, "usedMilli");
        if (Str(g, "state") == "free") ++free;
      }
      const json cpu = n.value("cpu", json::object());
      std::string name = Str(n, "name") + (n.value("unschedulable", false) ? " (cordoned)" : "");
      std::printf("%-24s %-16s %-12s %9s %9s %11s %6s\n", name.c_str(), domain.c_str(),
                  Str(n, "gpuModel").empty() ? "-" : Str(n, "gpuModel").c_str(),
                  (Short(used_milli / 1000) + "/" + std::to_string(total)).c_str(),
                  std::to_string(free).c_str(),
                  (Short(Num(cpu, "used")) + "/" + Short(Num(cpu, "allocatable"))).c_str(),
                  Short(Num(n, "tasks")).c_str());
    }
  }
  return 0;
}

void AddConnection(CLI::App* cmd, ClusterViewOptions* o) {
  cmd->add_option("--server", o->server,
                  "The scheduler's page at this URL (http://127.0.0.1:PORT, a port-forward) "
                  "instead of the API server's service proxy");
  cmd->add_option("--kubeconfig", o->kubeconfig, "kubeconfig (default: $KUBECONFIG, in-cluster)");
  cmd->add_option("--scheduler-namespace", o->scheduler_namespace,
                  "Namespace of the scheduler's Service")
      ->capture_default_str();
  cmd->add_option("--service", o->service, "The scheduler's Service (its port named page)")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace

std::string ProgramName(const char* argv0) {
  std::string name = argv0 == nullptr ? "" : argv0;
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  return name == "kubectl-gantry" ? "kubectl-gantry" : "gantry";
}

void AddClusterViewCommands(CLI::App& app, ClusterViewCommands* c) {
  c->explain = app.add_subcommand(
      "explain", "Why a pod or PodGroup is pending, asked of the running scheduler");
  c->explain->add_option("target", c->options.target, "NAMESPACE/NAME (a pod or a PodGroup)")
      ->required();
  AddConnection(c->explain, &c->options);
  c->queues = app.add_subcommand(
      "queues", "The running scheduler's queues: deserved, allocated and pending GPUs and CPUs");
  AddConnection(c->queues, &c->options);
  c->top = app.add_subcommand("top", "The running scheduler's nodes and their GPU use");
  AddConnection(c->top, &c->options);
}

int RunClusterView(const ClusterViewCommands& c) {
  const std::string program = ProgramName(c.explain->get_parent()->get_name().c_str());
  if (c.explain->parsed()) return RunExplain(program, c.options);
  if (c.queues->parsed()) return RunQueues(program, c.options);
  if (c.top->parsed()) return RunTop(program, c.options);
  return -1;
}

}  // namespace gantry
