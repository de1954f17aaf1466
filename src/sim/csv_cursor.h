// The plumbing of the CSV readers (trace_csv.h): a cursor over the lines and cells of a
// CSV without quoting, its checks of one cell (integer, name, list of GPU models), and how
// a value is quoted in a message. Errors are "source:line:column: what".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/status.h"

namespace gantry::csv {

// `text` without a leading UTF-8 byte-order mark.
std::string_view WithoutByteOrderMark(std::string_view text);

// A value quoted for a message: control characters escaped, shortened when long (a 10 MB
// cell is not echoed whole).
std::string Shown(std::string_view value);

// Why `name` cannot be a name (node, pod, job, queue, GPU model): longer than
// kMaxNameLength or holding a control character. nullopt when it can.
std::optional<std::string> NameProblem(std::string_view name);

// "[min, max]".
std::string Range(int64_t min, int64_t max);

// The rows after the header (non-blank lines, as Cursor reads them), counted up to one
// past `limit`: a quick pass before parsing, so that a file past a row limit is refused at
// once (not after parsing millions of rows) and the parse can reserve.
struct RowCount {
  int64_t rows = 0;             // at most limit + 1
  int32_t line_past_limit = 0;  // the line of row limit + 1; 0 when rows <= limit
};
RowCount CountRows(std::string_view text, int64_t limit);

// Lines of comma-separated cells; blank lines skipped, "\r\n" taken as "\n".
class Cursor {
 public:
  // `text` must outlive the cursor (cells are views into it).
  Cursor(std::string_view text, std::string source)
      : text_(WithoutByteOrderMark(text)), source_(std::move(source)) {}

  // Advances to the next non-empty line; false at the end.
  bool Next();

  int32_t line() const { return line_no_; }
  std::string_view text() const { return line_; }  // the whole line
  size_t size() const { return count_; }
  // REQUIRES: i < size() <= kMaxCells (as after CheckWidth).
  std::string_view cell(size_t i) const { return cells_[i]; }
  const std::string& source() const { return source_; }

  Status Error(size_t column, const std::string& what) const;

  // The row has `want` columns (at most kMaxCells) and no quotes.
  Status CheckWidth(size_t want) const;
  Status CheckUnquoted() const;
  // Column `i` named `name` as an integer in [min, max].
  Status Int(size_t i, const std::string& name, int64_t min, int64_t max, int64_t* out) const;
  // Column `i` as a name (empty allowed: callers decide what empty means).
  Status Name(size_t i, const std::string& field, std::string* out) const;
  // Column `i` as GPU models "A|B": empty for none, else no empty entry.
  Status Models(size_t i, const std::string& field, std::vector<std::string>* out) const;

  // No format has more than 12 columns: a row with more is an error, and its cells are
  // counted, not kept (a line of a million commas must not make a million views).
  static constexpr size_t kMaxCells = 16;

 private:
  void Split(std::string_view line);

  std::string_view text_;
  std::string source_;
  size_t pos_ = 0;
  int32_t line_no_ = 0;  // a file of at most kMaxInputFileBytes has fewer than 2^31 lines
  std::string_view line_;
  size_t count_ = 0;
  std::vector<std::string_view> cells_;
};

// Names already seen in a file (views into its text) and the line of each.
class SeenNames {
 public:
  void Reserve(size_t names) { lines_.reserve(names); }
  // An error at the cursor's row when `name` was seen before; else remembers it.
  Status Add(const Cursor& csv, const char* column, const char* noun, std::string_view name);

 private:
  std::unordered_map<std::string_view, int32_t> lines_;
};

}  // namespace gantry::csv
