// A plugin's argument as a configuration gives it: nothing (null), a scalar, a list or a
// mapping, parsed once by whoever read the configuration (yaml/scheduler_config_yaml.h
// reads it from YAML). The engine never sees the text it came from. Each value knows where
// it was written ("sched.yaml:3:14"), for messages; that is empty for a value made in code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/status.h"

namespace gantry {

class PluginArgument {
 public:
  enum class Kind : uint8_t { kNull, kScalar, kList, kMap };

  PluginArgument() = default;  // null
  // A scalar, as code writes one: {"weight", "2"}. Implicit so that a configuration made in
  // code reads like the YAML it stands for.
  PluginArgument(std::string text) : kind_(Kind::kScalar), text_(std::move(text)) {}  // NOLINT
  PluginArgument(const char* text) : PluginArgument(std::string(text)) {}             // NOLINT

  // `quoted`: written in quotes (a string, whatever it looks like). `where`: see above.
  static PluginArgument Scalar(std::string text, bool quoted, std::string where);
  static PluginArgument Null(std::string where);
  static PluginArgument List(std::vector<PluginArgument> items, std::string where);
  // A mapping's keys in the order written, each with where it was written.
  struct Key {
    std::string name;
    std::string where;
  };
  static PluginArgument Map(std::vector<Key> keys, std::vector<PluginArgument> values,
                            std::string where);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_map() const { return kind_ == Kind::kMap; }
  // A scalar's text; "" for anything else.
  const std::string& scalar() const { return text_; }
  bool quoted() const { return quoted_; }
  // A list's items or a mapping's values, in the order written; a mapping's keys beside.
  const std::vector<PluginArgument>& items() const { return items_; }
  const std::vector<Key>& keys() const { return keys_; }
  const std::string& where() const { return where_; }

  // The value in YAML's flow style, for messages: 3, [1, 2], {a: b}; "" for null.
  std::string Text() const;

 private:
  Kind kind_ = Kind::kNull;
  bool quoted_ = false;
  std::string text_;
  std::vector<PluginArgument> items_;
  std::vector<Key> keys_;
  std::string where_;
};

// Reading an argument's tree, with messages "WHERE: field: what" as the configuration
// readers write them; WHERE is the value's own place, or `source` for a value made in code.
Status ArgumentError(const std::string& source, const PluginArgument& at, const std::string& field,
                     const std::string& what);
// A plain (unquoted) decimal integer between min and max, as yaml/yaml_load.h's ReadYamlInt.
Status ReadArgumentInt(const PluginArgument& value, const std::string& source,
                       const std::string& field, int64_t min, int64_t max, int64_t* out);

}  // namespace gantry
