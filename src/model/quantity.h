// Kubernetes resource quantities as exact 64-bit fixed point in thousandths.
//
// Every amount in Gantry (CPU, memory bytes, GPUs, extended resources) is an int64 count
// of milli-units, never a double: sums and comparisons are exact and runs are
// reproducible. The largest amount is INT64_MAX milli-units (about 9.2e15 units, 8 PiB of
// memory); parsing anything larger is an error, never a wrap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/status.h"

namespace gantry {

using Milli = int64_t;  // an amount in thousandths of a unit

inline constexpr Milli kMilliMax = INT64_MAX;  // where sums saturate

constexpr Milli kMilliPerUnit = 1000;

// Parses a Kubernetes quantity string: an optionally signed decimal number ("2", "1.5",
// ".5", "+3") followed by at most one suffix, which is a binary SI suffix (Ki Mi Gi Ti Pi
// Ei), a decimal SI suffix (n u m k M G T P E), or a decimal exponent (e3, E-2). Returns
// the amount in milli-units. Amounts finer than a milli-unit round up, as Kubernetes'
// MilliValue() does ("1n" is 1m). Errors quote the text.
Result<Milli> ParseQuantity(std::string_view text);
// The same, refusing amounts finer than a milli-unit instead of rounding them up ("1e-9"
// or "0.0005" as a share of a GPU is an error, not 0.001). Errors quote the text.
Result<Milli> ParseQuantityExact(std::string_view text);

// Formats milli-units the short way a person reads them: "2", "500m", "1.5" is "1500m".
// With binary=true, whole amounts that are multiples of 1024 use Ki..Ei ("64Gi").
std::string FormatQuantity(Milli milli, bool binary = false);

// Checked arithmetic on milli-units. Each returns false (and leaves *out unchanged) when
// the exact result does not fit in int64.
bool CheckedAdd(Milli a, Milli b, Milli* out);
bool CheckedMul(Milli a, int64_t b, Milli* out);
// a + b and a - b clamped to [INT64_MIN, INT64_MAX].
Milli SaturatingAdd(Milli a, Milli b);
Milli SaturatingSub(Milli a, Milli b);

}  // namespace gantry
