// A Policy is a scheduler configuration made ready to run: checked once, its actions made
// and its plugins' arguments parsed into prototypes. Sessions share it (read-only) and
// copy the plugin prototypes for their own state, so that opening a session parses
// nothing and can not fail.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/action.h"
#include "engine/config.h"
#include "engine/plugin.h"
#include "model/status.h"

namespace gantry {

class Policy {
 public:
  // An error names the unknown action or plugin, or the plugin's wrong argument.
  static Result<Policy> Compile(const SchedulerConfig& config);

  Policy(Policy&&) noexcept = default;
  Policy& operator=(Policy&&) noexcept = default;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  const SchedulerConfig& config() const { return config_; }
  std::span<const std::unique_ptr<Action>> actions() const { return actions_; }
  // Never opened: a session copies each (Plugin::NewSessionCopy) before using it.
  std::span<const std::unique_ptr<Plugin>> plugin_prototypes() const { return plugins_; }
  // Whether jobs wait for an admitting action (enqueue) before they are placed.
  bool jobs_wait_for_admission() const { return jobs_wait_for_admission_; }

 private:
  Policy() = default;

  SchedulerConfig config_;
  std::vector<std::unique_ptr<Action>> actions_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  bool jobs_wait_for_admission_ = false;
};

}  // namespace gantry
