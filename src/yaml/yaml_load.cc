#include "yaml/yaml_load.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <istream>
#include <streambuf>
#include <unordered_map>

#include "model/limits.h"
#include "yaml/yaml_scan.h"

namespace gantry {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

std::string At(const std::string& source, int64_t line, int64_t column) {
  return source + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// An istream over the text without copying it (the text may be up to 1 GiB).
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());
    setg(begin, begin, begin + text.size());
  }
};

// Thrown out of yaml-cpp's parser by the event handler to stop it.
struct Refusal {
  Status status;
};

// The exact checks, on yaml-cpp's events (before it builds a tree): depth and size with
// aliases expanded (yaml-cpp shares an aliased node, so a small file can describe an
// enormous tree that our readers then walk), duplicate and non-scalar keys, cycles.
class EventCheck : public YAML::EventHandler {
 public:
  EventCheck(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 reads a document that starts with ',' as an empty one, without moving,
    // again and again: a file like ",a: 1" was an endless list of empty documents.
    if (mark.pos == last_document_ && mark.pos >= 0) {
      const auto at = static_cast<size_t>(mark.pos);
      Refuse(mark, "not valid YAML: unexpected " +
                       QuoteForMessage(at < text_.size() ? text_.substr(at, 1) : "") +
                       " where a document starts");
    }
    last_document_ = mark.pos;
    anchors_.clear();  // anchors are per document
    stack_.clear();
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor, "~"); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf(mark, anchor, value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor == 0 || anchor > anchors_.size()) return;  // yaml-cpp refuses unknown aliases
    const Anchor& a = anchors_[anchor - 1];
    if (!a.complete) {
      Refuse(mark, "alias *" + a.name + " is inside the node it names (a cycle)");
    }
    Child(mark, a.is_scalar ? &a.scalar : nullptr);
    Count(mark, a.size);
    aliased_ += a.size;
    if (aliased_ > 100 && nodes_ > 1000 &&
        aliased_ * 1000 > nodes_ * AllowedAliasPermille(nodes_)) {
      Refuse(mark, YamlAliasesMessage(aliased_, nodes_) + ", alias *" + a.name + " expanded");
    }
    if (static_cast<int64_t>(stack_.size()) + a.height > kMaxYamlDepth) {
      Refuse(mark, YamlDepthMessage() + ", alias *" + a.name + " expanded");
    }
    if (!stack_.empty()) stack_.back().height = std::max(stack_.back().height, a.height);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, true);
  }
  void OnMapEnd() override { Close(); }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }

 private:
  struct Anchor {
    std::string name;
    bool complete = false;
    int64_t size = 0;    // nodes, aliases in it expanded
    int64_t height = 0;  // levels of lists and mappings in it
    bool is_scalar = false;
    std::string scalar;  // its value, when it is one (for keys that are aliases)
  };
  struct Frame {
    bool is_map = false;
    YAML::anchor_t anchor = 0;
    int64_t first = 0;   // nodes_ before it
    int64_t height = 0;  // of its deepest child
    int64_t children = 0;
    std::unordered_map<std::string, int64_t> keys;  // key -> line, for mappings
  };

  [[noreturn]] void Refuse(const YAML::Mark& mark, const std::string& what) const {
    throw Refusal{Status::Invalid(At(source_, mark.line + 1, mark.column + 1) + ": " + what)};
  }

  void Count(const YAML::Mark& mark, int64_t n) {
    nodes_ += n;
    if (nodes_ > kMaxYamlNodes) Refuse(mark, YamlNodesMessage());
  }

  // A node starts inside the innermost open collection; every other one in a mapping is a
  // key. `scalar` is its text when it is a single value.
  void Child(const YAML::Mark& mark, const std::string* scalar) {
    if (stack_.empty()) return;
    Frame& parent = stack_.back();
    if (parent.is_map && parent.children % 2 == 0) {
      if (scalar == nullptr)
        Refuse(mark, "a mapping's key must be a single value, not a list or mapping");
      auto [it, inserted] = parent.keys.emplace(*scalar, mark.line + 1);
      if (!inserted) {
        Refuse(mark, "duplicate key " + QuoteForMessage(*scalar) + " (first at line " +
                         std::to_string(it->second) + ")");
      }
    }
    ++parent.children;
  }

  Anchor& Define(YAML::anchor_t anchor) {
    if (anchors_.size() < anchor) anchors_.resize(anchor);
    Anchor& a = anchors_[anchor - 1];
    a = Anchor{};
    a.name = std::move(anchor_name_);
    anchor_name_.clear();
    return a;
  }

  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& value) {
    Child(mark, &value);
    Count(mark, 1);
    if (anchor != 0) {
      Anchor& a = Define(anchor);
      a.complete = true;
      a.size = 1;
      a.is_scalar = true;
      a.scalar = value;
    }
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    Child(mark, nullptr);
    Count(mark, 1);
    if (anchor != 0) Define(anchor);
    Frame frame;
    frame.is_map = is_map;
    frame.anchor = anchor;
    frame.first = nodes_ - 1;
    stack_.push_back(std::move(frame));
    if (static_cast<int64_t>(stack_.size()) > kMaxYamlDepth) Refuse(mark, YamlDepthMessage());
  }

  void Close() {
    if (stack_.empty()) return;
    const int64_t height = stack_.back().height + 1;
    const int64_t size = nodes_ - stack_.back().first;
    const YAML::anchor_t anchor = stack_.back().anchor;
    stack_.pop_back();
    if (!stack_.empty()) stack_.back().height = std::max(stack_.back().height, height);
    if (anchor != 0) {
      Anchor& a = anchors_[anchor - 1];
      a.complete = true;
      a.size = size;
      a.height = height;
    }
  }

  std::string_view text_;
  const std::string& source_;
  int last_document_ = -1;  // where the last document started
  int64_t nodes_ = 0;       // in the whole file
  int64_t aliased_ = 0;     // of them, reached through an alias
  std::vector<Anchor> anchors_;
  std::vector<Frame> stack_;
  std::string anchor_name_;  // of the anchor on the next node
};

std::string ExceptionMessage(const std::string& source, const YAML::Exception& e) {
  std::string where = e.mark.is_null() ? source : At(source, e.mark.line + 1, e.mark.column + 1);
  if (dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr)
    return where + ": " + YamlDepthMessage();
  return where + ": not valid YAML: " + e.msg;
}

// The offset of the first byte that is not part of a printable character in well-formed
// UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), or npos. YAML text is
// printable Unicode (YAML 1.2, c-printable: no control characters but tab and line
// breaks), and what a reader takes from it ends up in JSON, which holds only Unicode.
size_t FirstNotPrintableUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) return i;
      ++i;
      continue;
    }
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
    if (c == 0xC2) {
      length = 2;
      low = 0xA0;  // U+0080..U+009F are control characters (but U+0085, a line break)
    } else if (c >= 0xC3 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) == 0x85) low = 0x85;  // NEL
    for (size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

}  // namespace

Result<std::vector<YAML::Node>> ParseYamlNodes(std::string_view text, const std::string& source) {
  GANTRY_RETURN_IF_ERROR(CheckInputSize(static_cast<int64_t>(text.size()), source));
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark)
    text.remove_prefix(kByteOrderMark.size());
  // UTF-16 and UTF-32 start with a byte-order mark or have a zero byte among the first four;
  // yaml-cpp would convert them, but what is checked here is bytes of UTF-8.
  if (text.substr(0, 4).find('\0') != std::string_view::npos || text.substr(0, 2) == "\xFF\xFE" ||
      text.substr(0, 2) == "\xFE\xFF") {
    return Status::Invalid(source + ": not UTF-8 text (UTF-16 or UTF-32?); save it as UTF-8");
  }
  if (size_t bad = FirstNotPrintableUtf8(text); bad != std::string_view::npos) {
    const std::string_view before = text.substr(0, bad);
    const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    const size_t line_start =
        before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
    return Status::Invalid(source + ":" + std::to_string(line) + ":" +
                           std::to_string(bad - line_start + 1) +
                           ": not printable UTF-8 text (byte " + byte +
                           "); YAML files are printable Unicode, saved as UTF-8");
  }
  GANTRY_RETURN_IF_ERROR(ScanYamlText(text, source));
  std::vector<YAML::Node> documents;
  try {
    {
      ViewBuffer buffer(text);
      std::istream in(&buffer);
      YAML::Parser parser(in);
      EventCheck check(text, source);
      while (parser.HandleNextDocument(check)) {
      }
    }
    ViewBuffer buffer(text);
    std::istream in(&buffer);
    for (YAML::Node& doc : YAML::LoadAll(in)) {
      if (doc && !doc.IsNull()) documents.push_back(std::move(doc));
    }
  } catch (const Refusal& refusal) {
    return refusal.status;
  } catch (const YAML::Exception& e) {
    return Status::Invalid(ExceptionMessage(source, e));
  }
  return documents;
}

Result<YAML::Node> ParseYamlNode(std::string_view text, const std::string& source) {
  auto documents = ParseYamlNodes(text, source);
  if (!documents.ok()) return documents.status();
  if (documents->empty()) return YAML::Node(YAML::NodeType::Null);
  if (documents->size() > 1) {
    const YAML::Mark mark = (*documents)[1].Mark();
    return Status::Invalid(At(source, mark.line + 1, mark.column + 1) +
                           ": a second YAML document (this file holds one; remove the \"---\" "
                           "line and what follows, or make it a separate file)");
  }
  return std::move((*documents)[0]);
}

std::string YamlWhere(const std::string& source, const YAML::Node& node, const std::string& field) {
  const YAML::Mark mark = node.Mark();
  std::string out = source;
  if (mark.line >= 0) out = At(source, mark.line + 1, mark.column + 1);
  return out + ": " + field;
}

Status YamlError(const std::string& source, const YAML::Node& node, const std::string& field,
                 const std::string& what) {
  return Status::Invalid(YamlWhere(source, node, field) + ": " + what);
}

bool IsQuotedScalar(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() == "!";
}

Status ReadYamlInt(const YAML::Node& node, const std::string& source, const std::string& field,
                   int64_t min, int64_t max, int64_t* out) {
  if (!node.IsScalar()) return YamlError(source, node, field, "expected an integer");
  const std::string& text = node.Scalar();
  if (IsQuotedScalar(node)) {
    return YamlError(source, node, field,
                     "expected an integer, got the string " + QuoteForMessage(text) +
                         " (a number in quotes is text; write it without quotes)");
  }
  if (!IsYamlDecimalInt(text)) {
    return YamlError(source, node, field, "expected an integer, got " + QuoteForMessage(text));
  }
  int64_t value = 0;
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(first, text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return YamlError(source, node, field,
                     "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                         ", got " + (text.size() <= 64 ? text : QuoteForMessage(text)));
  }
  *out = value;
  return Status::Ok();
}

Status ReadYamlBool(const YAML::Node& node, const std::string& source, const std::string& field,
                    bool* out) {
  if (!node.IsScalar()) return YamlError(source, node, field, "expected true or false");
  const std::string& text = node.Scalar();
  if (!IsQuotedScalar(node) && text == "true") {
    *out = true;
  } else if (!IsQuotedScalar(node) && text == "false") {
    *out = false;
  } else {
    return YamlError(source, node, field,
                     "expected true or false, got " +
                         std::string(IsQuotedScalar(node) ? "the string " : "") +
                         QuoteForMessage(text));
  }
  return Status::Ok();
}

namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// The digits at the start of `text` from `pos`; returns how many.
size_t Digits(std::string_view text, size_t pos) {
  size_t n = 0;
  while (pos + n < text.size() && IsDigit(text[pos + n])) ++n;
  return n;
}

size_t Sign(std::string_view text) {
  return !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
}

}  // namespace

bool IsYamlDecimalInt(std::string_view text) {
  const size_t sign = Sign(text);
  return text.size() > sign && Digits(text, sign) == text.size() - sign;
}

bool IsYamlOctalInt(std::string_view text) {
  return text.size() > 2 && text.substr(0, 2) == "0o" &&
         std::all_of(text.begin() + 2, text.end(), [](char c) { return c >= '0' && c <= '7'; });
}

bool IsYamlHexInt(std::string_view text) {
  return text.size() > 2 && text.substr(0, 2) == "0x" &&
         std::all_of(text.begin() + 2, text.end(), [](char c) {
           return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

bool IsYamlFloat(std::string_view text) {
  size_t pos = Sign(text);
  const size_t whole = Digits(text, pos);
  pos += whole;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t fraction = Digits(text, pos);
    if (whole == 0 && fraction == 0) return false;  // "." alone, or ".e3"
    pos += fraction;
  } else if (whole == 0) {
    return false;
  }
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    pos += Sign(text.substr(pos));
    const size_t exponent = Digits(text, pos);
    if (exponent == 0) return false;
    pos += exponent;
  }
  return pos == text.size();
}

}  // namespace gantry
