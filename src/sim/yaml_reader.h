// Reading typed values out of YAML with errors that say where: "FILE:LINE:COL: FIELD: what".
// The tree comes from ParseYamlNode (yaml/yaml_load.h), which has bounded its size and
// depth and refused duplicate keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>

#include "model/cluster.h"
#include "model/labels.h"
#include "model/resources.h"
#include "model/status.h"
#include "yaml/yaml_load.h"

namespace gantry {

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }
  Status Error(const YAML::Node& node, const std::string& field, const std::string& what) const;

  // A mapping whose keys are all among `known` (an unknown key is an error listing them).
  Status Map(const YAML::Node& node, const std::string& field,
             std::initializer_list<const char*> known) const;
  Status List(const YAML::Node& node, const std::string& field) const;
  Status String(const YAML::Node& node, const std::string& field, std::string* out) const;
  // A name of a node, job, queue or role: not empty, at most kMaxNameLength bytes.
  Status Name(const YAML::Node& node, const std::string& field, std::string* out) const;
  // A plain decimal integer (not quoted) in [min, max].
  Status Int(const YAML::Node& node, const std::string& field, int64_t min, int64_t max,
             int64_t* out) const;
  // A plain true or false.
  Status Bool(const YAML::Node& node, const std::string& field, bool* out) const;
  // A Kubernetes quantity ("500m", "64Gi", 2), in milli-units, non-negative. Exact refuses
  // amounts finer than a milli-unit (for shares of a GPU) instead of rounding them up.
  Status Quantity(const YAML::Node& node, const std::string& field, Milli* out,
                  bool exact = false) const;
  // {cpu: "2", memory: 8Gi, ...}; names are checked and interned as coming from `names`.
  Status Resources(const YAML::Node& node, const std::string& field, NameSource names,
                   ResourceVector* out) const;
  // Keys of at most kMaxLabelKeyLength bytes, values of at most kMaxLabelValueLength.
  Status LabelMap(const YAML::Node& node, const std::string& field, Labels* out) const;
  Status Taints(const YAML::Node& node, const std::string& field, std::vector<Taint>* out) const;
  Status Tolerations(const YAML::Node& node, const std::string& field,
                     std::vector<Toleration>* out) const;
  // A label key: not empty, at most kMaxLabelKeyLength bytes; a value: at most
  // kMaxLabelValueLength bytes.
  Status LabelKey(const YAML::Node& node, const std::string& field, std::string* out) const;
  Status LabelValue(const YAML::Node& node, const std::string& field, std::string* out) const;

 private:
  std::string source_;
};

// For messages about a format's limits: "VALUE (the limit on WHAT)".
std::string LimitText(int64_t value, const char* what);
// The decimal digits of n >= 0 (the length of a name made of a prefix and a number).
size_t DigitCount(int64_t n);

}  // namespace gantry
