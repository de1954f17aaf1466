#include "k8s/timestamp.h"

#include <string>

namespace gantry::k8s {
namespace {

// Days from 1970-01-01 to the date, in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

int64_t DaysInMonth(int64_t year, int64_t month) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// The value as messages quote it: printable, at most 64 bytes of it.
std::string Quoted(std::string_view text) {
  constexpr size_t kMax = 64;
  std::string out = "\"";
  for (char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f && c != '"') ? c : '?';
  return out + (text.size() > kMax ? "...\"" : "\"");
}

}  // namespace

Result<int64_t> ParseRfc3339(std::string_view text) {
  size_t at = 0;
  bool ok = true;
  // `count` digits at the cursor, as a number.
  auto digits = [&](size_t count) -> int64_t {
    int64_t v = 0;
    for (size_t i = 0; i < count; ++i, ++at) {
      if (at >= text.size() || text[at] < '0' || text[at] > '9') {
        ok = false;
        return 0;
      }
      v = v * 10 + (text[at] - '0');
    }
    return v;
  };
  auto expect = [&](char a, char b) {
    if (at < text.size() && (text[at] == a || text[at] == b)) {
      ++at;
    } else {
      ok = false;
    }
  };
  const int64_t year = digits(4);
  expect('-', '-');
  const int64_t month = digits(2);
  expect('-', '-');
  const int64_t day = digits(2);
  expect('T', 't');
  const int64_t hour = digits(2);
  expect(':', ':');
  const int64_t minute = digits(2);
  expect(':', ':');
  const int64_t second = digits(2);
  if (ok && at < text.size() && text[at] == '.') {
    ++at;
    const size_t begin = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    ok = at > begin && at - begin <= 9;
  }
  int64_t offset_s = 0;
  if (ok && at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (ok && at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int64_t sign = text[at++] == '+' ? 1 : -1;
    const int64_t offset_h = digits(2);
    expect(':', ':');
    const int64_t offset_m = digits(2);
    ok = ok && offset_h <= 23 && offset_m <= 59;
    offset_s = sign * (offset_h * 3600 + offset_m * 60);
  } else {
    ok = false;
  }
  if (!ok || at != text.size()) {
    return Status::Invalid("expected an RFC 3339 time like 2024-05-01T12:00:00Z, got " +
                           Quoted(text));
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return Status::Invalid(Quoted(text) + " is not a date and time that exists");
  }
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_s;
}

}  // namespace gantry::k8s
