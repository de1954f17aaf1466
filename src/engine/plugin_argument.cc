#include "engine/plugin_argument.h"

#include <charconv>

#include "model/quote.h"

namespace gantry {

PluginArgument PluginArgument::Scalar(std::string text, bool quoted, std::string where) {
  PluginArgument out(std::move(text));
  out.quoted_ = quoted;
  out.where_ = std::move(where);
  return out;
}

PluginArgument PluginArgument::Null(std::string where) {
  PluginArgument out;
  out.where_ = std::move(where);
  return out;
}

PluginArgument PluginArgument::List(std::vector<PluginArgument> items, std::string where) {
  PluginArgument out;
  out.kind_ = Kind::kList;
  out.items_ = std::move(items);
  out.where_ = std::move(where);
  return out;
}

PluginArgument PluginArgument::Map(std::vector<Key> keys, std::vector<PluginArgument> values,
                                   std::string where) {
  PluginArgument out;
  out.kind_ = Kind::kMap;
  out.keys_ = std::move(keys);
  out.items_ = std::move(values);
  out.where_ = std::move(where);
  return out;
}

std::string PluginArgument::Text() const {
  switch (kind_) {
    case Kind::kNull:
      return "";
    case Kind::kScalar:
      return text_;
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < items_.size(); ++i) out += (i ? ", " : "") + items_[i].Text();
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      for (size_t i = 0; i < items_.size(); ++i) {
        out += (i ? ", " : "") + keys_[i].name + ": " + items_[i].Text();
      }
      return out + "}";
    }
  }
  return "";
}

Status ArgumentError(const std::string& source, const PluginArgument& at, const std::string& field,
                     const std::string& what) {
  return Status::Invalid((at.where().empty() ? source : at.where()) + ": " + field + ": " + what);
}

Status ReadArgumentInt(const PluginArgument& value, const std::string& source,
                       const std::string& field, int64_t min, int64_t max, int64_t* out) {
  if (!value.is_scalar()) return ArgumentError(source, value, field, "expected an integer");
  const std::string& text = value.scalar();
  if (value.quoted()) {
    return ArgumentError(source, value, field,
                         "expected an integer, got the string " + QuoteForMessage(text) +
                             " (a number in quotes is text; write it without quotes)");
  }
  // [-+]?[0-9]+
  const size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  bool decimal = text.size() > sign;
  for (size_t i = sign; i < text.size() && decimal; ++i) decimal = text[i] >= '0' && text[i] <= '9';
  if (!decimal) {
    return ArgumentError(source, value, field, "expected an integer, got " + QuoteForMessage(text));
  }
  int64_t parsed = 0;
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(first, text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size() || parsed < min || parsed > max) {
    return ArgumentError(source, value, field,
                         "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                             ", got " + (text.size() <= 64 ? text : QuoteForMessage(text)));
  }
  *out = parsed;
  return Status::Ok();
}

}  // namespace gantry
