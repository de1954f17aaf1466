#include "model/datasets.h"

#include <algorithm>
#include <array>
#include <limits>

#include "model/int128.h"

namespace gantry {
namespace {

// The text in quotes for a message: at most 80 bytes of it, other bytes than printable
// ASCII as \xNN, so that hostile input neither floods a message nor breaks its line.
std::string Quote(std::string_view text) {
  static constexpr size_t kShown = 80;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > kShown) out += "...";
  return out + "\"";
}

bool Alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// A DNS-1123 label (dots = false) or subdomain (dots = true) of at most `max` bytes.
const char* DnsProblem(std::string_view s, size_t max, bool dots) {
  if (s.empty()) return "is empty";
  if (s.size() > max) return dots ? "is longer than 253 bytes" : "is longer than 63 bytes";
  for (char c : s) {
    if (!Alnum(c) && c != '-' && !(dots && c == '.')) {
      return dots ? "may hold only lowercase letters, digits, '-' and '.'"
                  : "may hold only lowercase letters, digits and '-'";
    }
  }
  if (!Alnum(s.front()) || !Alnum(s.back())) return "must begin and end with a letter or digit";
  return nullptr;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct SizeUnit {
  std::string_view name;
  int64_t bytes;
};
constexpr int64_t kKi = 1024;
constexpr int64_t kK = 1000;
constexpr std::array<SizeUnit, 27> kSizeUnits = {{
    {"", 1},
    {"B", 1},
    {"Ki", kKi},
    {"Mi", kKi* kKi},
    {"Gi", kKi* kKi* kKi},
    {"Ti", kKi* kKi* kKi* kKi},
    {"Pi", kKi* kKi* kKi* kKi* kKi},
    {"Ei", kKi* kKi* kKi* kKi* kKi* kKi},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
    {"EiB", kKi* kKi* kKi* kKi* kKi* kKi},
    {"k", kK},
    {"K", kK},
    {"M", kK* kK},
    {"G", kK* kK* kK},
    {"T", kK* kK* kK* kK},
    {"P", kK* kK* kK* kK* kK},
    {"E", kK* kK* kK* kK* kK* kK},
    {"KB", kK},
    {"MB", kK* kK},
    {"GB", kK* kK* kK},
    {"TB", kK* kK* kK* kK},
    {"PB", kK* kK* kK* kK* kK},
    {"EB", kK* kK* kK* kK* kK* kK},
}};

}  // namespace

Status CheckDatasetName(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    return Status::Invalid("dataset " + Quote(name) + " is not namespace/name");
  }
  const std::string_view ns = name.substr(0, slash), rest = name.substr(slash + 1);
  if (const char* why = DnsProblem(ns, 63, /*dots=*/false)) {
    return Status::Invalid("dataset " + Quote(name) + ": its namespace " + why);
  }
  if (const char* why = DnsProblem(rest, 253, /*dots=*/true)) {
    return Status::Invalid("dataset " + Quote(name) + ": its name " + why);
  }
  return Status::Ok();
}

Status NormalizeDatasetList(std::vector<std::string>* names, size_t max) {
  for (const std::string& name : *names) GANTRY_RETURN_IF_ERROR(CheckDatasetName(name));
  std::sort(names->begin(), names->end());
  names->erase(std::unique(names->begin(), names->end()), names->end());
  if (names->size() > max) {
    return Status::OutOfRange(std::to_string(names->size()) + " datasets; the limit is " +
                              std::to_string(max));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ParseDatasetList(std::string_view text,
                                                  std::string_view default_namespace, size_t max) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view entry = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) {
      return Status::Invalid("an empty entry in " + Quote(text) +
                             " (datasets are namespace/name, separated by commas)");
    }
    // Checked as it goes, so that a long hostile list costs no more than the limit.
    if (names.size() >= max) {
      return Status::OutOfRange("more than " + std::to_string(max) + " datasets (the limit)");
    }
    std::string name = entry.find('/') == std::string_view::npos && !default_namespace.empty()
                           ? std::string(default_namespace) + "/" + std::string(entry)
                           : std::string(entry);
    GANTRY_RETURN_IF_ERROR(CheckDatasetName(name));
    names.push_back(std::move(name));
  }
  GANTRY_RETURN_IF_ERROR(NormalizeDatasetList(&names, max));
  return names;
}

std::string FluidCacheLabel(std::string_view dataset, std::string_view uid) {
  const size_t slash = dataset.find('/');
  if (slash == std::string_view::npos) return "";
  std::string key(kFluidCacheLabelPrefix);
  key.append(dataset.substr(0, slash)).append("-").append(dataset.substr(slash + 1));
  if (key.size() < kFluidLabelNameLimit) return key;
  if (uid.empty()) return "";
  return std::string(kFluidCacheLabelPrefix) + std::string(uid);
}

bool NodeCachesDataset(const Labels& labels, const std::vector<std::string>& cached,
                       std::string_view dataset, std::string_view fluid_label) {
  if (std::binary_search(cached.begin(), cached.end(), dataset)) return true;
  if (fluid_label.empty()) return false;
  const std::string* value = labels.Find(fluid_label);
  return value != nullptr && *value == "true";
}

Result<int64_t> ParseDatasetSize(std::string_view text) {
  const std::string_view s = Trim(text);
  auto bad = [&](const std::string& why) {
    return Status::Invalid("dataset size " + Quote(text) + ": " + why);
  };
  // The number: digits, optionally a point and more digits; at most 18 significant ones.
  size_t i = 0;
  Int128 mantissa = 0;
  int64_t scale = 1;  // 10^(digits after the point)
  int digits = 0;
  bool point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++digits > 18) return bad("too many digits");
    mantissa = mantissa * 10 + (c - '0');
    if (point) scale *= 10;
  }
  if (digits == 0) return bad("not a number of bytes (e.g. 200Gi or 52.18GiB)");
  const std::string_view unit = Trim(s.substr(i));
  for (const SizeUnit& u : kSizeUnits) {
    if (u.name != unit) continue;
    const Int128 bytes = (mantissa * u.bytes * 2 + scale) / (Int128{2} * scale);  // nearest
    if (bytes > std::numeric_limits<int64_t>::max()) return bad("more bytes than 2^63 - 1");
    return static_cast<int64_t>(bytes);
  }
  return bad("unknown unit " + Quote(unit) +
             " (known: B, Ki, Mi, Gi, Ti, Pi, Ei, KiB, MiB, GiB, TiB, PiB, EiB, k, K, M, G, T, "
             "P, E, KB, MB, GB, TB, PB, EB)");
}

}  // namespace gantry
