#include "model/quantity.h"

#include <limits>

#include "model/int128.h"

namespace gantry {
namespace {

constexpr Int128 kInt64Max = std::numeric_limits<int64_t>::max();
// Larger than any int64 amount times 1000 can need, small enough that one more decimal
// digit or a factor of 2^60 cannot overflow 128 bits before we check it.
constexpr Int128 kWorkingLimit = static_cast<Int128>(1) << 62 << 62 >> 4;  // 2^120

Status Bad(std::string_view text, std::string_view why) {
  return Status::Invalid("invalid quantity \"" + std::string(text) + "\": " + std::string(why));
}

Status Overflow(std::string_view text) {
  return Status::OutOfRange("quantity \"" + std::string(text) +
                            "\" is too large (the limit is 9223372036854775807 milli-units)");
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

struct Suffix {
  int pow10 = 0;
  int pow2 = 0;
};

// Returns false when `s` is not a suffix Kubernetes accepts.
bool ParseSuffix(std::string_view s, Suffix* out, bool* bad_exponent) {
  *bad_exponent = false;
  if (s.empty()) return true;
  if (s.size() == 2 && s[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    auto pos = kBinary.find(s[0]);
    if (pos == std::string_view::npos) return false;
    out->pow2 = 10 * static_cast<int>(pos + 1);
    return true;
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        out->pow10 = -9;
        return true;
      case 'u':
        out->pow10 = -6;
        return true;
      case 'm':
        out->pow10 = -3;
        return true;
      case 'k':
        out->pow10 = 3;
        return true;
      case 'M':
        out->pow10 = 6;
        return true;
      case 'G':
        out->pow10 = 9;
        return true;
      case 'T':
        out->pow10 = 12;
        return true;
      case 'P':
        out->pow10 = 15;
        return true;
      case 'E':
        out->pow10 = 18;
        return true;
      default:
        return false;
    }
  }
  if (s[0] == 'e' || s[0] == 'E') {
    size_t i = 1;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i == s.size()) return false;
    int exponent = 0;
    for (; i < s.size(); ++i) {
      if (!IsDigit(s[i])) return false;
      exponent = exponent * 10 + (s[i] - '0');
      if (exponent > 10000) {
        *bad_exponent = true;
        return false;
      }
    }
    out->pow10 = negative ? -exponent : exponent;
    return true;
  }
  return false;
}

// ParseQuantity; sets *rounded (when given) if the amount was rounded up to a milli-unit.
Result<Milli> ParseQuantityImpl(std::string_view text, bool* rounded) {
  if (text.empty()) return Bad(text, "empty");
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';

  // Digits: the mantissa, without leading zeros of the whole part or trailing zeros of
  // the fraction, so that only significant digits count against the working limit.
  Int128 mantissa = 0;
  int fraction_digits = 0;
  bool any_digit = false;
  bool in_fraction = false;
  int pending_zeros = 0;  // fraction zeros not yet known to be significant
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (in_fraction) return Bad(text, "more than one decimal point");
      in_fraction = true;
      continue;
    }
    if (!IsDigit(c)) break;
    any_digit = true;
    int digit = c - '0';
    if (in_fraction) {
      if (digit == 0) {
        ++pending_zeros;
        continue;
      }
      for (; pending_zeros > 0; --pending_zeros) {
        mantissa *= 10;
        ++fraction_digits;
        if (mantissa > kWorkingLimit) return Bad(text, "too many significant digits");
      }
      ++fraction_digits;
    }
    mantissa = mantissa * 10 + digit;
    if (mantissa > kWorkingLimit) {
      return in_fraction ? Bad(text, "too many significant digits") : Overflow(text);
    }
  }
  if (!any_digit) return Bad(text, "expected a number");

  Suffix suffix;
  bool bad_exponent = false;
  if (!ParseSuffix(text.substr(i), &suffix, &bad_exponent)) {
    if (bad_exponent) return Overflow(text);
    return Bad(text, "unknown suffix \"" + std::string(text.substr(i)) +
                         "\" (expected one of n u m k M G T P E Ki Mi Gi Ti Pi Ei, or an "
                         "exponent such as e3)");
  }

  // milli = mantissa * 2^pow2 * 10^(pow10 + 3 - fraction_digits), rounded up.
  Int128 value = mantissa;
  for (int k = 0; k < suffix.pow2; ++k) {
    value *= 2;
    if (value > kWorkingLimit) return Overflow(text);
  }
  int exponent = suffix.pow10 + 3 - fraction_digits;
  if (value != 0) {
    for (; exponent > 0; --exponent) {
      value *= 10;
      if (value > kWorkingLimit) return Overflow(text);
    }
    if (exponent < 0) {
      // Round up: any nonzero remainder below a milli-unit counts as one milli-unit.
      Int128 divisor = 1;
      bool tiny = false;
      for (; exponent < 0; ++exponent) {
        divisor *= 10;
        if (divisor > value) {
          tiny = true;
          break;
        }
      }
      if (rounded != nullptr) *rounded = tiny || value % divisor != 0;
      value = tiny ? 1 : (value + divisor - 1) / divisor;
    }
  }
  if (value > kInt64Max) return Overflow(text);
  auto milli = static_cast<Milli>(value);
  return negative ? -milli : milli;
}

}  // namespace

Result<Milli> ParseQuantity(std::string_view text) {
  return ParseQuantityImpl(text, nullptr);
}

Result<Milli> ParseQuantityExact(std::string_view text) {
  bool rounded = false;
  auto milli = ParseQuantityImpl(text, &rounded);
  if (milli.ok() && rounded) {
    return Bad(text, "finer than a thousandth (the smallest step is 0.001, or 1m)");
  }
  return milli;
}

std::string FormatQuantity(Milli milli, bool binary) {
  // The magnitude is unsigned: the most negative amount, INT64_MIN, has no positive int64.
  const std::string sign = milli < 0 ? "-" : "";
  const uint64_t magnitude =
      milli < 0 ? uint64_t{0} - static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  if (magnitude % kMilliPerUnit != 0) return sign + std::to_string(magnitude) + "m";
  uint64_t units = magnitude / kMilliPerUnit;
  if (binary && units != 0) {
    static constexpr const char* kSuffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int level = -1;
    while (level < 5 && units % 1024 == 0) {
      units /= 1024;
      ++level;
    }
    if (level >= 0) return sign + std::to_string(units) + kSuffixes[level];
  }
  return sign + std::to_string(units);
}

bool CheckedAdd(Milli a, Milli b, Milli* out) {
  Milli r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

bool CheckedMul(Milli a, int64_t b, Milli* out) {
  Milli r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

Milli SaturatingAdd(Milli a, Milli b) {
  Milli r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<Milli>::max() : std::numeric_limits<Milli>::min();
}

Milli SaturatingSub(Milli a, Milli b) {
  Milli r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<Milli>::max() : std::numeric_limits<Milli>::min();
}

}  // namespace gantry
