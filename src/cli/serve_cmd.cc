// gantry serve: the scheduler daemon.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "cli/commands.h"
#include "daemon/cluster_api.h"
#include "daemon/config.h"
#include "daemon/explain_api.h"
#include "daemon/http_server.h"
#include "daemon/metrics.h"
#include "daemon/page_server.h"
#include "daemon/scheduler.h"
#include "k8s/credentials.h"
#include "k8s/leader_election.h"

namespace gantry {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop = true;
}

// sigaction with SA_ONSTACK, not std::signal: once Go code runs in this process (src/dra/,
// upstream's CEL), a signal may land on a Go thread, whose stack is a small goroutine stack;
// Go requires every non-Go handler to run on the alternate signal stack (os/signal, "Go
// programs that use cgo"). SA_RESTART keeps std::signal's glibc behaviour.
void Handle(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_ONSTACK | SA_RESTART;
  sigaction(signal, &action, nullptr);
}

std::string DefaultIdentity() {
  const char* pod = std::getenv("POD_NAME");
  std::string base;
  if (pod && *pod) {
    base = pod;
  } else {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    base = host;
  }
  // A suffix, so that a restarted replica is not mistaken for its former self.
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%08x", rd());
  return base + suffix;
}

}  // namespace

int RunServe(const ServeOptions& o) {
  DaemonConfig config;
  if (Status st = LoadDaemonConfig(o.config, &config); !st.ok()) {
    std::fprintf(stderr, "gantry serve: %s\n", st.message().c_str());
    return 2;
  }
  if (!o.listen.empty()) config.listen_address = o.listen;
  if (o.no_leader_elect) config.leader_election.enabled = false;
  auto credentials = k8s::FindCredentials(o.kubeconfig);
  if (!credentials.ok()) {
    std::fprintf(stderr, "gantry serve: %s\n", credentials.status().message().c_str());
    return 2;
  }
  k8s::ClientOptions client_options;
  client_options.timeout_s = std::min(10.0, config.leader_election.renew_deadline_s / 2);
  client_options.max_attempts = 4;
  client_options.user_agent = "gantry/" + config.scheduler_name;
  auto client = k8s::Client::Create(*credentials, client_options);
  if (!client.ok()) {
    std::fprintf(stderr, "gantry serve: %s\n", client.status().message().c_str());
    return 2;
  }
  const std::string identity = o.identity.empty() ? DefaultIdentity() : o.identity;

  Handle(SIGTERM, OnSignal);
  Handle(SIGINT, OnSignal);
  Handle(SIGPIPE, SIG_IGN);

  auto policy = Policy::Compile(config.engine);
  if (!policy.ok()) {  // the configuration was checked when read: this is a bug
    std::fprintf(stderr, "gantry serve: engine configuration: %s\n",
                 policy.status().message().c_str());
    return 2;
  }
  MetricsRegistry metrics;
  ClusterViewBoard views;  // the live page's view of the cluster, published by the scheduler
  Scheduler scheduler(config, std::move(policy).value(), **client, metrics, identity);
  StatusServer server(
      metrics,
      [&] {
        return scheduler.alive() ? ProbeResult::Pass()
                                 : ProbeResult::Fail("scheduling loop stalled");
      },
      [&] {
        return scheduler.synced() ? ProbeResult::Pass() : ProbeResult::Fail("informers not synced");
      });
  if (Status st = server.Start(config.listen_address); !st.ok()) {
    std::fprintf(stderr, "gantry serve: %s\n", st.message().c_str());
    return 2;
  }
  std::fprintf(stderr, "gantry: %s serving %s on %s (listening on port %d), leader election %s\n",
               identity.c_str(), config.scheduler_name.c_str(), credentials->server.c_str(),
               server.port(), config.leader_election.enabled ? "on" : "off");
  // The page is an aid, not the scheduler's work: when its port cannot be had, the
  // scheduler runs on without it and says so.
  PageServer page;  // routes are registered before it starts: one line each, below
  if (!config.page_address.empty()) {
    scheduler.PublishViews(&views);
    RegisterClusterApi(page, views);
    RegisterExplainApi(page, scheduler.explain_board());
    if (Status st = page.Start(config.page_address); !st.ok()) {
      std::fprintf(stderr, "gantry: %s; the page is off\n", st.message().c_str());
    } else {
      std::fprintf(stderr, "gantry: page on %s (port %d)\n", config.page_address.c_str(),
                   page.port());
    }
  }

  std::thread elector_thread;
  std::unique_ptr<k8s::Client> elector_client_owned;
  std::unique_ptr<k8s::LeaderElector> elector;
  if (config.leader_election.enabled) {
    k8s::LeaderElectionOptions le;
    le.lease_namespace = config.leader_election.namespace_;
    le.lease_name = config.leader_election.name;
    le.identity = identity;
    auto ms = [](double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); };
    le.lease_duration = ms(config.leader_election.lease_duration_s);
    le.renew_deadline = ms(config.leader_election.renew_deadline_s);
    le.retry_period = ms(config.leader_election.retry_period_s);
    k8s::LeaderCallbacks callbacks;
    callbacks.on_started_leading = [&] {
      std::fprintf(stderr, "gantry: %s is the leader\n", identity.c_str());
      scheduler.SetLeader(true);
    };
    callbacks.on_stopped_leading = [&] {
      scheduler.SetLeader(false);
      if (g_stop.load()) return;
      // Binds already sent may still land; a fresh start from the API server's view is
      // the only safe way back, as kube-scheduler does.
      std::fprintf(stderr, "gantry: %s lost the lease; exiting\n", identity.c_str());
      std::_Exit(1);
    };
    // Its own client, failing fast: a request must not outlast the renew deadline.
    k8s::ClientOptions elector_options = client_options;
    elector_options.timeout_s = std::max(0.5, config.leader_election.renew_deadline_s / 4);
    elector_options.max_attempts = 1;
    auto elector_client = k8s::Client::Create(*credentials, elector_options);
    if (!elector_client.ok()) {
      std::fprintf(stderr, "gantry serve: %s\n", elector_client.status().message().c_str());
      return 2;
    }
    elector_client_owned = std::move(elector_client).value();
    elector = std::make_unique<k8s::LeaderElector>(*elector_client_owned, le, callbacks);
    elector_thread = std::thread([&] { elector->Run(g_stop); });
  } else {
    scheduler.SetLeader(true);
  }

  scheduler.Run(g_stop);
  if (elector_thread.joinable()) elector_thread.join();
  page.Stop();
  server.Stop();
  std::fprintf(stderr, "gantry: stopped after %lld cycles\n",
               static_cast<long long>(scheduler.cycles()));
  return 0;
}

}  // namespace gantry
