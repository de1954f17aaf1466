// RFC 3339 times, as the API server writes metadata.creationTimestamp
// ("2024-05-01T12:00:00Z"), read into seconds since 1970-01-01T00:00:00Z.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/status.h"

namespace gantry::k8s {

// The range Kubernetes (Go's time package) writes: years 0000 to 9999.
inline constexpr int64_t kMinTimestampSeconds = -62167219200;  // 0000-01-01T00:00:00Z
inline constexpr int64_t kMaxTimestampSeconds = 253402300799;  // 9999-12-31T23:59:59Z

// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), 'T' and 'Z' in either case; the fraction
// (1 to 9 digits) is dropped, so the result is the whole second the time falls in. Refused,
// with the value quoted: anything else, and dates or times that do not exist (2023-02-29,
// 24:00:00, a leap second). Results lie in [kMinTimestampSeconds - 1 day, kMaxTimestampSeconds
// + 1 day] (an offset may move a time across the ends of the years' range).
Result<int64_t> ParseRfc3339(std::string_view text);

}  // namespace gantry::k8s
