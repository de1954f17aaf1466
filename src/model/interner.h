// Interned names: each distinct string gets a small dense id, once per process.
//
// Resource names and GPU models are compared in the hottest loops of the engine, so they
// are ids, not strings (as in Ray's scheduling core). An Interner only grows; ids are
// stable for the life of the process and never reused. It is thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gantry {

class Interner {
 public:
  Interner() = default;
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;

  // Returns the id of `name`, adding it if new.
  uint32_t Intern(std::string_view name);
  // Returns the id of `name` or -1 when it was never interned. Does not add.
  int64_t Find(std::string_view name) const;
  // REQUIRES: id was returned by Intern().
  const std::string& Name(uint32_t id) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::string> names_;  // deque: references stay valid as it grows
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace gantry
