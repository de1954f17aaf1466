// A `gantry serve` process for the daemon's integration tests: started with a
// configuration of the test's own, killed or stopped at will, its log kept for messages.
// The binary is $GANTRY_BINARY when set (`make test` sets it to the sanitizer build for a
// second run), else the one built beside the tests; a sanitizer report in the daemon's
// log fails the test that ran it.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>

namespace gantry::testing {

class DaemonProcess {
 public:
  // Writes `config_yaml` beside the log and starts the daemon against the test server.
  DaemonProcess(const std::string& name, const std::string& config_yaml,
                const std::string& identity);
  ~DaemonProcess();  // stops it (SIGTERM, then SIGKILL)
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  void Kill();  // SIGKILL: no chance to release anything
  void Stop();  // SIGTERM and wait
  bool running();
  std::string Log() const;
  const std::string& identity() const { return identity_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::string identity_;
};

// The gantry binary the tests run: $GANTRY_BINARY, else the one built with them.
std::string GantryBinary();
// The first sanitizer report (AddressSanitizer, LeakSanitizer, UBSan) in a log, from the
// line it starts on; "" when there is none.
std::string SanitizerReport(const std::string& log);

// A daemon configuration for tests: its own scheduler name, and short leader election
// times when `lease` is not empty (else leader election is off).
std::string DaemonConfig(const std::string& scheduler_name, const std::string& lease = "");

// The daemon's page port, from its log ("page on 127.0.0.1:0 (port N)"), or 0 when it has
// not said yet (a configuration with `pageAddress: 127.0.0.1:0`).
int PagePort(const DaemonProcess& daemon);
// GET http://127.0.0.1:port/path: the status and body; status 0 when nothing answered.
std::pair<int, std::string> HttpGet(int port, const std::string& path);

}  // namespace gantry::testing
