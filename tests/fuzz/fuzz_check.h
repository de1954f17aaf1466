// What the harnesses share: a check that turns a wrong result into a crash libFuzzer
// reports (with the input saved), and the rules every parser's errors follow.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/status.h"

namespace gantry::fuzz {

// Aborts with a message when `condition` is false: libFuzzer saves the input as a crash.
#define FUZZ_CHECK(condition, message)                                                 \
  do {                                                                                 \
    if (!(condition)) ::gantry::fuzz::Fail(__FILE__, __LINE__, #condition, (message)); \
  } while (0)

// GANTRY_FUZZ_IGNORE="text1,text2": a failed check whose condition or message contains
// one of them is let pass, to fuzz past a known finding while its fix is pending.
inline bool Ignored(const std::string& failure) {
  const char* ignore = std::getenv("GANTRY_FUZZ_IGNORE");
  if (ignore == nullptr) return false;
  std::string_view list(ignore);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty() && failure.find(item) != std::string::npos) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

inline void Fail(const char* file, int line, const char* condition, const std::string& message) {
  if (Ignored(std::string(condition) + " " + message)) return;
  std::fprintf(stderr, "\n==FUZZ CHECK FAILED== %s:%d: %s\n  %s\n", file, line, condition,
               message.c_str());
  std::abort();
}

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A refusal must say why and where: a message that names the input (`source`, the name
// the harness gave it), not an empty one.
inline void CheckErrorNamesSource(const Status& status, const std::string& source) {
  FUZZ_CHECK(!status.ok(), "expected an error");
  FUZZ_CHECK(!status.message().empty(), "an error without a message");
  FUZZ_CHECK(status.message().find(source) != std::string::npos,
             "the error does not name the input \"" + source + "\": " + status.message());
}

}  // namespace gantry::fuzz
