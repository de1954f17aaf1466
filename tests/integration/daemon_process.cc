#include "tests/integration/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/integration/testenv.h"

namespace gantry::testing {

std::string DaemonConfig(const std::string& scheduler_name, const std::string& lease) {
  std::string config = "schedulerName: " + scheduler_name +
                       "\n"
                       "schedulePeriod: 500ms\n"
                       "bindWorkers: 8\n"
                       "listenAddress: 127.0.0.1:0\n"
                       "pageAddress: \"\"\n";  // page_test.cc runs one
  if (lease.empty()) {
    config += "leaderElection: {enabled: false}\n";
  } else {
    config += "leaderElection: {enabled: true, namespace: default, name: " + lease +
              ", leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 300ms}\n";
  }
  config +=
      "engine:\n  actions: [enqueue, allocate, backfill]\n"
      "  plugins: [priority, gang, drf, proportion, predicates, binpack]\n";
  return config;
}

std::string GantryBinary() {
  const char* binary = std::getenv("GANTRY_BINARY");
  return binary != nullptr && *binary != '\0' ? binary : GANTRY_BINARY;
}

int PagePort(const DaemonProcess& daemon) {
  std::smatch m;
  const std::string log = daemon.Log();
  if (!std::regex_search(log, m, std::regex(R"(page on \S+ \(port (\d+)\))"))) return 0;
  return std::stoi(m[1]);
}

std::pair<int, std::string> HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(10);
  httplib::Result res = client.Get(path);
  if (!res) return {0, ""};
  return {res->status, res->body};
}

std::string SanitizerReport(const std::string& log) {
  static constexpr const char* kMarkers[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                             "SUMMARY: UndefinedBehaviorSanitizer",
                                             ": runtime error: "};
  size_t first = std::string::npos;
  for (const char* marker : kMarkers) first = std::min(first, log.find(marker));
  if (first == std::string::npos) return "";
  const size_t line_start = log.rfind('\n', first);
  const size_t from = line_start == std::string::npos ? 0 : line_start + 1;
  return log.substr(from, 6000);
}

DaemonProcess::DaemonProcess(const std::string& name, const std::string& config_yaml,
                             const std::string& identity)
    : identity_(identity) {
  const std::string dir = TestEnv::Get().dir();
  const std::string config_path = dir + "/" + name + ".yaml";
  std::ofstream(config_path) << config_yaml;
  log_path_ = dir + "/" + name + ".log";
  const std::string kubeconfig = TestEnv::Get().kubeconfig_path();
  const std::string binary = GantryBinary();
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(binary.c_str(), binary.c_str(), "serve", "--config", config_path.c_str(), "--kubeconfig",
          kubeconfig.c_str(), "--identity", identity.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
}

DaemonProcess::~DaemonProcess() {
  Stop();
  // A sanitizer build of the daemon (GANTRY_BINARY) reports into its log, at the fault or
  // at exit (leaks), and stops: whatever the test saw, the report fails it.
  const std::string report = SanitizerReport(Log());
  if (!report.empty()) {
    ADD_FAILURE() << "gantry serve (" << GantryBinary() << ") reported a sanitizer error in "
                  << log_path_ << ":\n"
                  << report;
  }
}

bool DaemonProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void DaemonProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void DaemonProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Kill();
}

std::string DaemonProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace gantry::testing
