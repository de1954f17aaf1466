// `gantry explain`, `gantry queues`, `gantry top`: ask the running scheduler's page API
// (daemon/page_server.h), through the API server's service proxy (the Service `gantry`,
// port `page`) or straight at --server (a port-forward), and print the answer for a person.
// Also a kubectl plugin: linked as `kubectl-gantry`, `kubectl gantry explain ...` works.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace gantry {

struct ClusterViewOptions {
  std::string target;      // explain: NAMESPACE/NAME
  std::string server;      // http://127.0.0.1:PORT; empty: the service proxy
  std::string kubeconfig;  // for the service proxy
  std::string scheduler_namespace = "gantry-system";
  std::string service = "gantry";  // its port named "page" serves the page
  std::string output = "text";     // text | json
};

struct ClusterViewCommands {
  CLI::App* explain = nullptr;
  CLI::App* queues = nullptr;
  CLI::App* top = nullptr;
  ClusterViewOptions options;
};

// Adds the three subcommands to `app`. REQUIRES: `commands` outlives the parse.
void AddClusterViewCommands(CLI::App& app, ClusterViewCommands* commands);
// Runs the one parsed, or returns -1 when none of them was.
int RunClusterView(const ClusterViewCommands& commands);

// "kubectl-gantry" when the program runs as the kubectl plugin, else "gantry".
std::string ProgramName(const char* argv0);

}  // namespace gantry
