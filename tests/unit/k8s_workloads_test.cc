// Services and the controllers default topology spreading reads (k8s/workloads.h), and a
// pod's controller owner reference: decoded as kube-scheduler's helper.DefaultSelector
// reads them, with errors that name the object and the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "k8s/objects.h"
#include "k8s/workloads.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

Labels L(std::vector<std::pair<std::string, std::string>> pairs) {
  return Labels(std::move(pairs));
}

json Object(const std::string& name, json spec) {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec", std::move(spec)}};
}

std::string Error(const Status& s) {
  return s.ok() ? "(ok)" : s.message();
}

TEST(ParseService, ReadsTheSelectorMap) {
  auto s = Must(ParseService(Object("web", {{"selector", {{"app", "web"}, {"tier", "fe"}}}})));
  EXPECT_EQ(s.meta.Key(), "ml/web");
  EXPECT_EQ(s.selector, L({{"app", "web"}, {"tier", "fe"}}));
  // No selector (an ExternalName or headless Service for endpoints made by hand).
  EXPECT_TRUE(Must(ParseService(Object("ext", {{"type", "ExternalName"}}))).selector.empty());
  EXPECT_TRUE(Must(ParseService(Object("null", {{"selector", nullptr}}))).selector.empty());
}

TEST(ParseService, ErrorsNameTheServiceAndTheField) {
  EXPECT_EQ(Error(ParseService(Object("web", {{"selector", {{"app", 3}}}})).status()),
            "service ml/web: spec.selector.app: expected a string, got 3");
  EXPECT_EQ(Error(ParseService(Object("web", {{"selector", json::array({"app"})}})).status()),
            "service ml/web: spec.selector: expected a map of strings, got [\"app\"]");
  EXPECT_TRUE(Contains(
      Error(ParseService(Object("web", {{"selector", {{std::string(400, 'k'), "v"}}}})).status()),
      "service ml/web: spec.selector: a key of 400 bytes"));
  EXPECT_TRUE(Contains(
      Error(
          ParseService(Object("web", {{"selector", {{"app", std::string(2000, 'v')}}}})).status()),
      "service ml/web: spec.selector.app: a value of 2000 bytes"));
  EXPECT_TRUE(Contains(Error(ParseService(json{{"spec", json::object()}}).status()),
                       "service: object without metadata.name"));
}

TEST(ParseSpreadOwner, ReplicaSetAndStatefulSetSelectorsAreLabelSelectors) {
  const json selector = {
      {"matchLabels", {{"app", "web"}}},
      {"matchExpressions",
       json::array({{{"key", "pod-template-hash"}, {"operator", "In"}, {"values", {"abc"}}}})}};
  for (SpreadOwnerKind kind : {SpreadOwnerKind::kReplicaSet, SpreadOwnerKind::kStatefulSet}) {
    auto owner = Must(ParseSpreadOwner(Object("web-abc", {{"selector", selector}}), kind));
    EXPECT_EQ(owner.kind, kind);
    ASSERT_TRUE(owner.selector.has_value());
    EXPECT_EQ(owner.selector->match_labels, L({{"app", "web"}}));
    ASSERT_EQ(owner.selector->match_expressions.size(), 1u);
    EXPECT_EQ(owner.selector->match_expressions[0].key, "pod-template-hash");
    EXPECT_EQ(owner.selector->match_expressions[0].op, SelectorRequirement::Op::kIn);
  }
  // No selector: nothing (kube-scheduler's LabelSelectorAsSelector(nil) is Nothing, whose
  // requirements it does not add).
  EXPECT_FALSE(Must(ParseSpreadOwner(Object("bare", json::object()), SpreadOwnerKind::kReplicaSet))
                   .selector.has_value());
}

TEST(ParseSpreadOwner, ReplicationControllerSelectorIsAMap) {
  auto rc = Must(ParseSpreadOwner(Object("old", {{"selector", {{"app", "old"}}}}),
                                  SpreadOwnerKind::kReplicationController));
  ASSERT_TRUE(rc.selector.has_value());
  EXPECT_EQ(rc.selector->match_labels, L({{"app", "old"}}));
  EXPECT_TRUE(rc.selector->match_expressions.empty());
  EXPECT_FALSE(Must(ParseSpreadOwner(Object("none", json::object()),
                                     SpreadOwnerKind::kReplicationController))
                   .selector.has_value());
}

TEST(ParseSpreadOwner, ErrorsNameTheObjectAndTheField) {
  const json bad_op = {
      {"matchExpressions", json::array({{{"key", "app"}, {"operator", "Gt"}, {"values", {"1"}}}})}};
  EXPECT_EQ(
      Error(ParseSpreadOwner(Object("web", {{"selector", bad_op}}), SpreadOwnerKind::kReplicaSet)
                .status()),
      "replicaset ml/web: spec.selector.matchExpressions[0].operator: \"Gt\" is not "
      "supported (In, NotIn, Exists, DoesNotExist)");
  EXPECT_EQ(
      Error(ParseSpreadOwner(Object("db", {{"selector", "app=db"}}), SpreadOwnerKind::kStatefulSet)
                .status()),
      "statefulset ml/db: spec.selector: expected a label selector, got \"app=db\"");
  EXPECT_EQ(Error(ParseSpreadOwner(Object("old", {{"selector", {{"app", true}}}}),
                                   SpreadOwnerKind::kReplicationController)
                      .status()),
            "replicationcontroller ml/old: spec.selector.app: expected a string, got true");
  const json long_value = {{"matchLabels", {{"app", std::string(2000, 'v')}}}};
  EXPECT_TRUE(Contains(Error(ParseSpreadOwner(Object("web", {{"selector", long_value}}),
                                              SpreadOwnerKind::kReplicaSet)
                                 .status()),
                       "replicaset ml/web: spec.selector: a value of 2000 bytes"));
}

json PodWithOwners(json owners) {
  return {{"metadata",
           {{"name", "p"},
            {"namespace", "ml"},
            {"uid", "uid-p"},
            {"creationTimestamp", "2025-01-01T00:00:00Z"},
            {"ownerReferences", std::move(owners)}}},
          {"spec", {{"containers", {{{"name", "c"}}}}}}};
}

json Ref(const std::string& api_version, const std::string& kind, const std::string& name,
         bool controller) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"name", name},
          {"uid", "uid-" + name},
          {"controller", controller}};
}

TEST(DecodePod, SpreadOwnerIsTheControllerOfAKindDefaultSpreadingReads) {
  auto owner = [](json owners) {
    return Must(ParsePod(PodWithOwners(std::move(owners)))).spread_owner;
  };
  EXPECT_EQ(owner({Ref("apps/v1", "ReplicaSet", "web-abc", true)}),
            (SpreadOwner{SpreadOwnerKind::kReplicaSet, "web-abc"}));
  EXPECT_EQ(owner({Ref("apps/v1", "StatefulSet", "db", true)}),
            (SpreadOwner{SpreadOwnerKind::kStatefulSet, "db"}));
  EXPECT_EQ(owner({Ref("v1", "ReplicationController", "old", true)}),
            (SpreadOwner{SpreadOwnerKind::kReplicationController, "old"}));
  // The controller only, whatever other owners it has.
  EXPECT_EQ(owner({Ref("v1", "ConfigMap", "cm", false), Ref("apps/v1", "ReplicaSet", "rs", true)}),
            (SpreadOwner{SpreadOwnerKind::kReplicaSet, "rs"}));
  // Not a controller, another kind, another version: none (kube-scheduler compares the
  // group, version and kind exactly).
  EXPECT_EQ(owner({Ref("apps/v1", "ReplicaSet", "rs", false)}), SpreadOwner{});
  EXPECT_EQ(owner({Ref("batch/v1", "Job", "job", true)}), SpreadOwner{});
  EXPECT_EQ(owner({Ref("apps/v1beta2", "ReplicaSet", "rs", true)}), SpreadOwner{});
  EXPECT_EQ(owner({Ref("apps/v1", "Deployment", "web", true)}), SpreadOwner{});
  EXPECT_EQ(owner(json("not a list")), SpreadOwner{});
}

}  // namespace
}  // namespace gantry::k8s
