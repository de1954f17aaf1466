#include "sim/scenario_groups.h"

#include "model/limits.h"
#include "model/quote.h"

namespace gantry {
namespace {

int32_t IndexOf(const std::vector<TaskGroup>& groups, const std::string& name) {
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace

Status ParseJobGroups(const YamlReader& r, const YAML::Node& groups, const std::string& field,
                      std::vector<TaskGroup>* out) {
  GANTRY_RETURN_IF_ERROR(r.List(groups, field));
  if (groups.size() == 0) return r.Error(groups, field, "must name at least the root group");
  out->clear();
  for (size_t i = 0; i < groups.size(); ++i) {
    const YAML::Node& g = groups[i];
    const std::string f = field + "[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(g, f, {"name", "parent", "minMember", "minGroups"}));
    TaskGroup group;
    if (!g["name"]) return r.Error(g, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(r.Name(g["name"], f + ".name", &group.name));
    if (IndexOf(*out, group.name) >= 0) {
      return r.Error(g["name"], f + ".name", QuoteForMessage(group.name) + " is defined twice");
    }
    if (i == 0 && g["parent"]) return r.Error(g["parent"], f + ".parent", "the root has none");
    if (i > 0) {
      if (!g["parent"]) return r.Error(g, f + ".parent", "required (only the first is the root)");
      std::string parent;
      GANTRY_RETURN_IF_ERROR(r.Name(g["parent"], f + ".parent", &parent));
      group.parent = IndexOf(*out, parent);
      if (group.parent < 0) {
        return r.Error(g["parent"], f + ".parent",
                       "no group " + QuoteForMessage(parent) + " before this one");
      }
    }
    if (static_cast<bool>(g["minMember"]) == static_cast<bool>(g["minGroups"])) {
      return r.Error(g, f, "needs one of minMember (a group of tasks) and minGroups (of groups)");
    }
    group.leaf = static_cast<bool>(g["minMember"]);
    const char* key = group.leaf ? "minMember" : "minGroups";
    int64_t min = 1;
    GANTRY_RETURN_IF_ERROR(r.Int(g[key], f + "." + key, 1, kMaxTasksPerJob, &min));
    group.min = static_cast<int32_t>(min);
    out->push_back(std::move(group));
  }
  if (Status valid = ValidateGroupTree(*out); !valid.ok()) {
    return r.Error(groups, field, valid.message());
  }
  return Status::Ok();
}

Status ParseTaskGroup(const YamlReader& r, const YAML::Node& task, const std::string& field,
                      const std::vector<TaskGroup>& groups, int32_t* out) {
  *out = -1;
  const YAML::Node& g = task["group"];
  if (!g) {
    if (groups.empty()) return Status::Ok();
    return r.Error(task, field + ".group", "required: the job has groups");
  }
  std::string name;
  GANTRY_RETURN_IF_ERROR(r.Name(g, field + ".group", &name));
  if (groups.empty()) return r.Error(g, field + ".group", "the job has no groups");
  *out = IndexOf(groups, name);
  if (*out < 0) return r.Error(g, field + ".group", "no group " + QuoteForMessage(name));
  if (!groups[static_cast<size_t>(*out)].leaf) {
    return r.Error(g, field + ".group",
                   QuoteForMessage(name) + " holds groups (minGroups), not tasks");
  }
  return Status::Ok();
}

}  // namespace gantry
