#include "yaml/yaml_scan.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/limits.h"

namespace gantry {

std::string YamlDepthMessage() {
  return "nesting deeper than " + std::to_string(kMaxYamlDepth) +
         " levels of lists and mappings (the limit on YAML input)";
}

std::string YamlNodesMessage() {
  return "more than " + std::to_string(kMaxYamlNodes) +
         " values, lists and mappings, aliases expanded (the limit on one YAML file)";
}

std::string YamlAliasesMessage(int64_t aliased, int64_t nodes) {
  return std::to_string(aliased) + " of " + std::to_string(nodes) +
         " values, lists and mappings come from aliases, more than " +
         std::to_string(AllowedAliasPermille(nodes) / 10) +
         "% (the limit on aliases in one YAML file, as in Kubernetes)";
}

int64_t AllowedAliasPermille(int64_t nodes) {
  if (nodes <= kYamlAliasRatioLowNodes) return kYamlAliasPermilleAtLow;
  if (nodes >= kYamlAliasRatioHighNodes) return kYamlAliasPermilleAtHigh;
  return kYamlAliasPermilleAtLow - (kYamlAliasPermilleAtLow - kYamlAliasPermilleAtHigh) *
                                       (nodes - kYamlAliasRatioLowNodes) /
                                       (kYamlAliasRatioHighNodes - kYamlAliasRatioLowNodes);
}

namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}
bool IsFlowIndicator(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

// Line by line: brackets outside quotes, comments and block scalars; the columns of block
// lists and mappings (a key, or a "- " entry, opens a level at its column; a list that is
// a mapping's value at the key's own column shares it, which is where it counts fewer).
class TextScan {
 public:
  TextScan(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Status Run() {
    size_t start = 0;
    while (true) {
      size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      GANTRY_RETURN_IF_ERROR(Line(line));
      if (end == text_.size()) break;
      start = end + 1;
    }
    return Status::Ok();
  }

 private:
  Status Line(std::string_view line) {
    size_t pos = 0;
    chain_ = false;
    parent_column_ = -1;
    last_was_plain_value_ = false;
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const bool blank = line.find_first_not_of(" \t") == std::string_view::npos;
    const bool marker = (line.substr(0, 3) == "---" || line.substr(0, 3) == "...") &&
                        (line.size() == 3 || IsBlank(line[3]));
    if (quote_ != 0) {
      pos = QuotedEnd(line, 0, quote_);
      if (pos == std::string_view::npos) return Status::Ok();
      quote_ = 0;
    } else if (in_block_scalar_) {
      if (!marker && (blank || static_cast<int>(indent) > block_scalar_parent_)) {
        return Status::Ok();
      }
      in_block_scalar_ = false;
    } else if (plain_may_continue_ && flow_ == 0 && !blank && !marker &&
               static_cast<int>(indent) > (block_.empty() ? -1 : block_.back()) &&
               line[indent] != '#') {
      return Status::Ok();  // the plain scalar of the line above goes on: text, whatever it holds
    }
    if (pos == 0) {
      if (blank) return Status::Ok();
      plain_may_continue_ = false;
      if (marker) {
        block_.clear();  // documents do not nest
        flow_ = 0;
        pos = 3;
        chain_ = line[0] == '-';
      } else if (line[0] == '%' && flow_ == 0) {
        return Status::Ok();  // a directive
      } else {
        pos = indent;
        if (flow_ == 0) {
          while (!block_.empty() && block_.back() >= static_cast<int>(indent)) block_.pop_back();
          chain_ = true;
        }
      }
    }
    GANTRY_RETURN_IF_ERROR(Tokens(line, pos));
    if (flow_ == 0 && quote_ == 0 && !in_block_scalar_) plain_may_continue_ = last_was_plain_value_;
    return Status::Ok();
  }

  Status Tokens(std::string_view line, size_t pos) {
    while (pos < line.size()) {
      const char c = line[pos];
      if (IsBlank(c)) {
        ++pos;
        continue;
      }
      if (c == '#' && (pos == 0 || IsBlank(line[pos - 1]))) break;  // a comment
      last_was_plain_value_ = false;
      const bool spaced = pos + 1 >= line.size() || IsBlank(line[pos + 1]);
      if (flow_ == 0 && (c == '-' || c == '?' || c == ':') && spaced) {
        // "- " opens a list entry, "? " a key, ": " its value: a node may start after it.
        if (chain_) GANTRY_RETURN_IF_ERROR(Push(static_cast<int>(pos)));
        parent_column_ = static_cast<int>(pos);
        ++pos;
        continue;
      }
      if (c == '"' || c == '\'') {
        GANTRY_RETURN_IF_ERROR(Count(pos));
        const size_t token = pos;
        pos = QuotedEnd(line, pos + 1, c);
        if (pos == std::string_view::npos) {
          quote_ = c;
          return Status::Ok();
        }
        GANTRY_RETURN_IF_ERROR(MaybeKey(line, token, &pos));
        continue;
      }
      if (c == '[' || c == '{') {
        GANTRY_RETURN_IF_ERROR(Count(pos));
        ++flow_;
        if (static_cast<int64_t>(block_.size()) + flow_ > kMaxYamlDepth)
          return Refuse(pos, YamlDepthMessage());
        chain_ = false;
        ++pos;
        continue;
      }
      if (c == ']' || c == '}') {
        if (flow_ > 0) --flow_;
        ++pos;
        continue;
      }
      if (flow_ > 0 && (c == ',' || c == ':')) {
        ++pos;
        continue;
      }
      if (flow_ == 0 && (c == '|' || c == '>')) {
        GANTRY_RETURN_IF_ERROR(Count(pos));
        in_block_scalar_ = true;  // its header, then lines indented more than its parent
        block_scalar_parent_ = parent_column_;
        return Status::Ok();
      }
      if (c == '&' || c == '!' || c == '*') {  // an anchor or tag (a property), or an alias
        const size_t token = pos;
        while (pos < line.size() && !IsBlank(line[pos]) &&
               !(flow_ > 0 && IsFlowIndicator(line[pos]))) {
          ++pos;
        }
        if (c == '*') {
          GANTRY_RETURN_IF_ERROR(Count(token));
          GANTRY_RETURN_IF_ERROR(MaybeKey(line, token, &pos));
        }
        continue;
      }
      // A plain scalar: up to ": ", " #", the end of the line, or in flow a flow indicator.
      GANTRY_RETURN_IF_ERROR(Count(pos));
      const size_t token = pos;
      while (pos < line.size()) {
        const char p = line[pos];
        const bool last = pos + 1 >= line.size();
        if (p == ':' &&
            (last || IsBlank(line[pos + 1]) || (flow_ > 0 && IsFlowIndicator(line[pos + 1])))) {
          break;
        }
        if (IsBlank(p) && !last && line[pos + 1] == '#') break;
        if (flow_ > 0 && IsFlowIndicator(p)) break;
        ++pos;
      }
      const bool key = pos < line.size() && line[pos] == ':';
      GANTRY_RETURN_IF_ERROR(MaybeKey(line, token, &pos));
      last_was_plain_value_ = !key && flow_ == 0;
    }
    return Status::Ok();
  }

  // After a scalar: a ':' makes it a key, whose column opens a block mapping at the start of
  // a line (or after "- "), and whose value a block scalar on this line belongs to.
  Status MaybeKey(std::string_view line, size_t token, size_t* pos) {
    size_t p = *pos;
    while (p < line.size() && IsBlank(line[p])) ++p;
    if (p < line.size() && line[p] == ':' && flow_ == 0 &&
        (p + 1 >= line.size() || IsBlank(line[p + 1]))) {
      if (chain_) GANTRY_RETURN_IF_ERROR(Push(static_cast<int>(token)));
      parent_column_ = static_cast<int>(token);
      *pos = p + 1;
    }
    chain_ = false;
    return Status::Ok();
  }

  Status Push(int column) {
    while (!block_.empty() && block_.back() >= column) block_.pop_back();
    block_.push_back(column);
    if (static_cast<int64_t>(block_.size()) + flow_ > kMaxYamlDepth) {
      return Refuse(static_cast<size_t>(column), YamlDepthMessage());
    }
    return Status::Ok();
  }

  Status Count(size_t column) {
    if (++values_ > kMaxYamlNodes) return Refuse(column, YamlNodesMessage());
    return Status::Ok();
  }

  Status Refuse(size_t column, const std::string& what) const {
    return Status::Invalid(source_ + ":" + std::to_string(line_no_) + ":" +
                           std::to_string(column + 1) + ": " + what);
  }

  // The position after the quote that closes a scalar opened with `quote`, or npos when it
  // goes on past this line.
  static size_t QuotedEnd(std::string_view line, size_t from, char quote) {
    for (size_t i = from; i < line.size(); ++i) {
      if (quote == '"' && line[i] == '\\') {
        ++i;  // an escaped character
      } else if (line[i] == quote) {
        if (quote == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
          ++i;  // '' is a quote inside single quotes
        } else {
          return i + 1;
        }
      }
    }
    return std::string_view::npos;
  }

  std::string_view text_;
  const std::string& source_;
  int64_t line_no_ = 0;
  int64_t values_ = 0;
  std::vector<int> block_;  // columns of the open block lists and mappings
  int64_t flow_ = 0;        // open [ and {
  char quote_ = 0;          // the quote of a scalar that goes on past its line
  bool in_block_scalar_ = false;
  int block_scalar_parent_ = -1;  // a block scalar's lines are indented more than this
  bool plain_may_continue_ = false;
  // Per line:
  bool chain_ = false;      // only indicators ("- ", "? ") so far: a block node may start
  int parent_column_ = -1;  // the key or entry a block scalar here belongs to
  bool last_was_plain_value_ = false;
};

}  // namespace

Status ScanYamlText(std::string_view text, const std::string& source) {
  return TextScan(text, source).Run();
}

}  // namespace gantry
