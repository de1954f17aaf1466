#include "sim/csv_cursor.h"

#include <algorithm>
#include <charconv>

#include "model/limits.h"

namespace gantry::csv {

std::string_view WithoutByteOrderMark(std::string_view text) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    text.remove_prefix(kByteOrderMark.size());
  }
  return text;
}

std::string Shown(std::string_view value) {
  constexpr size_t kShown = 64;
  std::string out = "\"";
  for (size_t i = 0; i < std::min(value.size(), kShown); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (value.size() > kShown) out += "...";
  out += "\"";
  if (value.size() > kShown) out += " (" + std::to_string(value.size()) + " bytes)";
  return out;
}

std::optional<std::string> NameProblem(std::string_view name) {
  if (name.size() > kMaxNameLength) {
    return "the name is " + std::to_string(name.size()) + " bytes, longer than the limit of " +
           std::to_string(kMaxNameLength) + ": " + Shown(name);
  }
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      return "control characters are not allowed in a name: " + Shown(name);
    }
  }
  return std::nullopt;
}

std::string Range(int64_t min, int64_t max) {
  return "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

RowCount CountRows(std::string_view text, int64_t limit) {
  text = WithoutByteOrderMark(text);
  RowCount count;
  int64_t lines_seen = 0;  // non-blank, the header included
  int32_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const bool blank = end == pos || (end == pos + 1 && text[pos] == '\r');
    pos = end + 1;
    ++line_no;
    if (blank || ++lines_seen == 1) continue;
    if (++count.rows > limit) {
      count.line_past_limit = line_no;
      break;
    }
  }
  return count;
}

bool Cursor::Next() {
  while (pos_ < text_.size()) {
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++line_no_;
    if (line.empty()) continue;
    Split(line);
    return true;
  }
  return false;
}

void Cursor::Split(std::string_view line) {
  line_ = line;
  count_ = static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1;
  cells_.clear();
  if (count_ > kMaxCells) return;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      cells_.push_back(line.substr(start));
      break;
    }
    cells_.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

Status Cursor::Error(size_t column, const std::string& what) const {
  return Status::Invalid(source_ + ":" + std::to_string(line_no_) + ":" +
                         std::to_string(column + 1) + ": " + what);
}

Status Cursor::CheckWidth(size_t want) const {
  GANTRY_RETURN_IF_ERROR(CheckUnquoted());
  if (count_ != want) {
    return Error(0, "expected " + std::to_string(want) + " columns, got " + std::to_string(count_));
  }
  return Status::Ok();
}

Status Cursor::CheckUnquoted() const {
  const size_t quote = line_.find('"');
  if (quote == std::string_view::npos) return Status::Ok();
  const auto column = static_cast<size_t>(std::count(line_.begin(), line_.begin() + quote, ','));
  return Error(column,
               "quoted cells are not supported (the trace formats have none): " + Shown(line_));
}

Status Cursor::Int(size_t i, const std::string& name, int64_t min, int64_t max,
                   int64_t* out) const {
  std::string_view s = cells_[i];
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec == std::errc::invalid_argument || end != s.data() + s.size()) {
    return Error(i, name + ": expected an integer, got " + Shown(s));
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    return Error(i, name + ": " + (s.size() > 24 ? Shown(s) : std::string(s)) +
                        " is out of range " + Range(min, max));
  }
  *out = v;
  return Status::Ok();
}

Status Cursor::Name(size_t i, const std::string& field, std::string* out) const {
  if (auto problem = NameProblem(cells_[i])) return Error(i, field + ": " + *problem);
  *out = std::string(cells_[i]);
  return Status::Ok();
}

Status Cursor::Models(size_t i, const std::string& field, std::vector<std::string>* out) const {
  std::string_view s = cells_[i];
  out->clear();
  if (s.empty()) return Status::Ok();
  size_t start = 0;
  while (true) {
    size_t bar = s.find('|', start);
    if (bar == std::string_view::npos) bar = s.size();
    std::string_view model = s.substr(start, bar - start);
    if (model.empty()) return Error(i, field + ": an empty GPU model in " + Shown(s));
    if (auto problem = NameProblem(model)) return Error(i, field + ": " + *problem);
    out->emplace_back(model);
    if (bar == s.size()) break;
    start = bar + 1;
  }
  return Status::Ok();
}

Status SeenNames::Add(const Cursor& csv, const char* column, const char* noun,
                      std::string_view name) {
  auto [it, inserted] = lines_.emplace(name, csv.line());
  if (inserted) return Status::Ok();
  return csv.Error(0, std::string(column) + ": " + noun + " \"" + std::string(name) +
                          "\" is defined twice (first on line " + std::to_string(it->second) + ")");
}

}  // namespace gantry::csv
