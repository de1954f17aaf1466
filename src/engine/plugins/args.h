// Reading a plugin's arguments: each is consumed once, and any left over is an error,
// so a misspelt argument is never silently ignored.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/config.h"
#include "model/status.h"

namespace gantry {

class PluginArgs {
 public:
  explicit PluginArgs(const PluginConfig& config) : config_(config) {}

  // Reads a non-negative integer argument (a scalar), or keeps *out when absent.
  Status Int(const std::string& key, int64_t* out);
  // The names of the arguments not read yet (for plugins that take free-form keys, like
  // resource weights), in name order.
  std::vector<std::string> Rest() const;
  // Marks a key as read.
  void Take(const std::string& key) { taken_.insert(key); }
  // An error naming the first argument nobody read.
  Status CheckAllTaken() const;

 private:
  const PluginConfig& config_;
  std::set<std::string> taken_;
};

}  // namespace gantry
