// Kubernetes quantities (model/quantity.h): ParseQuantity and ParseQuantityExact on any
// text, and the arithmetic on what they return.
//
// Checks: the two parsers agree where both accept; Exact accepts nothing the other
// refuses; an error quotes the text; whatever is accepted formats (both ways) and parses
// back to itself; CheckedAdd/CheckedMul/Saturating* match 128-bit arithmetic, and so do
// ResourceVector's saturating Add and Subtract and its CheckedAddInPlace.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "model/quantity.h"
#include "model/resources.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry {
namespace {

using Wide = __int128;

Milli Clamp(Wide v) {
  if (v > std::numeric_limits<Milli>::max()) return std::numeric_limits<Milli>::max();
  if (v < std::numeric_limits<Milli>::min()) return std::numeric_limits<Milli>::min();
  return static_cast<Milli>(v);
}

bool Fits(Wide v) {
  return v >= std::numeric_limits<Milli>::min() && v <= std::numeric_limits<Milli>::max();
}

bool Printable(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// Parses `text` both ways and checks what the two say; returns the value when accepted.
std::optional<Milli> CheckParse(std::string_view text) {
  const std::string shown(text);
  Result<Milli> loose = ParseQuantity(text);
  Result<Milli> exact = ParseQuantityExact(text);
  if (exact.ok()) {
    FUZZ_CHECK(loose.ok(), "ParseQuantityExact accepts \"" + shown + "\", ParseQuantity does not");
    FUZZ_CHECK(*loose == *exact, "\"" + shown + "\": ParseQuantity gives " +
                                     std::to_string(*loose) + "m, ParseQuantityExact " +
                                     std::to_string(*exact) + "m");
  }
  for (const Status* error : {&loose.status(), &exact.status()}) {
    if (error->ok()) continue;
    FUZZ_CHECK(!error->message().empty(), "an error without a message for \"" + shown + "\"");
    if (Printable(text)) {
      FUZZ_CHECK(error->message().find("\"" + shown + "\"") != std::string::npos,
                 "the error does not quote the text: " + error->message());
    }
  }
  if (!loose.ok()) return std::nullopt;
  const Milli value = *loose;
  for (bool binary : {false, true}) {
    const std::string formatted = FormatQuantity(value, binary);
    Result<Milli> back = ParseQuantityExact(formatted);
    FUZZ_CHECK(back.ok(), "\"" + shown + "\" is " + std::to_string(value) + "m, formatted as \"" +
                              formatted + "\", which does not parse: " + back.status().message());
    FUZZ_CHECK(*back == value, "\"" + shown + "\" is " + std::to_string(value) +
                                   "m, formatted as \"" + formatted + "\", which parses as " +
                                   std::to_string(*back) + "m");
  }
  return value;
}

void CheckArithmetic(Milli a, Milli b) {
  const std::string operands = std::to_string(a) + ", " + std::to_string(b);
  Milli sum = 0;
  const bool added = CheckedAdd(a, b, &sum);
  FUZZ_CHECK(added == Fits(Wide{a} + b), "CheckedAdd(" + operands + ") misjudges overflow");
  if (added) FUZZ_CHECK(sum == a + b, "CheckedAdd(" + operands + ")");
  Milli product = 0;
  const bool multiplied = CheckedMul(a, b, &product);
  FUZZ_CHECK(multiplied == Fits(Wide{a} * b), "CheckedMul(" + operands + ") misjudges overflow");
  if (multiplied) FUZZ_CHECK(Wide{product} == Wide{a} * b, "CheckedMul(" + operands + ")");
  FUZZ_CHECK(SaturatingAdd(a, b) == Clamp(Wide{a} + b), "SaturatingAdd(" + operands + ")");
  FUZZ_CHECK(SaturatingSub(a, b) == Clamp(Wide{a} - b), "SaturatingSub(" + operands + ")");

  ResourceVector va{{kCpu, a}, {kGpu, b}};
  const ResourceVector vb{{kCpu, b}, {kMemory, a}};
  ResourceVector sum_vector = va;
  sum_vector.Add(vb);
  FUZZ_CHECK(sum_vector.Get(kCpu) == Clamp(Wide{a} + b), "ResourceVector::Add(" + operands + ")");
  FUZZ_CHECK(sum_vector.Get(kMemory) == a && sum_vector.Get(kGpu) == b,
             "ResourceVector::Add changed other resources");
  ResourceVector difference = va;
  difference.Subtract(vb);
  FUZZ_CHECK(difference.Get(kCpu) == Clamp(Wide{a} - b),
             "ResourceVector::Subtract(" + operands + ")");
  FUZZ_CHECK(difference.Get(kMemory) == Clamp(-Wide{a}),
             "ResourceVector::Subtract of a missing resource (" + operands + ")");
  ResourceVector checked = va;
  const bool checked_ok = checked.CheckedAddInPlace(vb);
  FUZZ_CHECK(checked_ok == Fits(Wide{a} + b),
             "CheckedAddInPlace(" + operands + ") misjudges overflow");
  FUZZ_CHECK(checked_ok ? checked == sum_vector : checked == va,
             "CheckedAddInPlace(" + operands + ") gives " + checked.ToString());
}

}  // namespace
}  // namespace gantry

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string_view text = fuzz::AsText(data, size);
  const std::optional<Milli> whole = CheckParse(text);
  // Two quantities separated by a space: their sums and products.
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return 0;
  const std::optional<Milli> a = CheckParse(text.substr(0, space));
  const std::optional<Milli> b = CheckParse(text.substr(space + 1));
  if (a && b) CheckArithmetic(*a, *b);
  (void)whole;
  return 0;
}
