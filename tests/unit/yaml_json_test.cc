// YAML manifests to the API's JSON, with YAML 1.2's core schema for plain scalars.
#include "k8s/yaml_json.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

json Convert(const std::string& yaml) {
  return YamlToJson(YAML::Load(yaml));
}

// A file in a fresh temporary folder, removed with the fixture.
class YamlFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "gantry-yaml-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST(YamlToJson, PlainScalarsAreTyped) {
  json j = Convert(R"(
int: 42
negative: -7
plus: +3
zero: 0
float: 1.5
half: .5
exp: 1e3
bool_true: true
bool_false: false
capital: True
null_word: null
tilde: ~
empty:
text: hello world
version: 1.20.3
)");
  EXPECT_EQ(j["int"], json(42));
  EXPECT_TRUE(j["int"].is_number_integer());
  EXPECT_EQ(j["negative"], json(-7));
  EXPECT_EQ(j["plus"], json(3));
  EXPECT_EQ(j["zero"], json(0));
  EXPECT_TRUE(j["float"].is_number_float());
  EXPECT_DOUBLE_EQ(j["float"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["half"].get<double>(), 0.5);
  EXPECT_TRUE(j["exp"].is_number_float());
  EXPECT_DOUBLE_EQ(j["exp"].get<double>(), 1000.0);
  EXPECT_EQ(j["bool_true"], json(true));
  EXPECT_EQ(j["bool_false"], json(false));
  EXPECT_EQ(j["capital"], json(true));
  EXPECT_TRUE(j["null_word"].is_null());
  EXPECT_TRUE(j["tilde"].is_null());
  EXPECT_TRUE(j.contains("empty"));
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_EQ(j["text"], json("hello world"));
  EXPECT_EQ(j["version"], json("1.20.3"));  // two dots: not a number
}

TEST(YamlToJson, CoreSchemaLeavesYaml11WordsAsStrings) {
  // YAML 1.2's core schema has no yes/no/on/off booleans (YAML 1.1 had them).
  json j = Convert("a: yes\nb: no\nc: on\nd: off\ne: y\n");
  for (const char* key : {"a", "b", "c", "d", "e"}) EXPECT_TRUE(j[key].is_string()) << key;
  EXPECT_EQ(j["b"], json("no"));
}

TEST(YamlToJson, OctalAndHexadecimalIntegers) {
  // The core schema's int forms: 0o17 is 15, 0x1F is 31; 017 is decimal 17.
  json j = Convert("oct: 0o17\nhex: 0x1F\nleading_zero: 017\n");
  EXPECT_EQ(j["oct"], json(15));
  EXPECT_EQ(j["hex"], json(31));
  EXPECT_EQ(j["leading_zero"], json(17));
}

TEST(YamlToJson, NumbersTooLargeForJsonStayText) {
  json j = Convert("big: 99999999999999999999\nhuge: 1e400\n");
  EXPECT_EQ(j["big"], json("99999999999999999999"));
  EXPECT_EQ(j["huge"], json("1e400"));
}

TEST(YamlToJson, QuotedScalarsStayStrings) {
  json j = Convert(R"(
one: "1"
single: '2'
yes_true: "true"
nothing: "null"
empty: ""
float: '1.5'
)");
  EXPECT_EQ(j["one"], json("1"));
  EXPECT_EQ(j["single"], json("2"));
  EXPECT_EQ(j["yes_true"], json("true"));
  EXPECT_EQ(j["nothing"], json("null"));
  EXPECT_EQ(j["empty"], json(""));
  EXPECT_EQ(j["float"], json("1.5"));
}

TEST(YamlToJson, BlockScalarsAreStrings) {
  json j = Convert("literal: |\n  42\n  true\nfolded: >\n  7\n");
  EXPECT_EQ(j["literal"], json("42\ntrue\n"));
  EXPECT_EQ(j["folded"], json("7\n"));
}

TEST(YamlToJson, NestedMapsAndLists) {
  json j = Convert(R"(
metadata:
  name: p
  labels: {app: web, tier: "1"}
spec:
  containers:
  - name: a
    ports: [80, 443]
  - name: b
    args: []
    env: {}
  tolerations:
  - {key: k, operator: Exists}
)");
  json want = json::parse(R"({
    "metadata": {"name": "p", "labels": {"app": "web", "tier": "1"}},
    "spec": {
      "containers": [{"name": "a", "ports": [80, 443]},
                     {"name": "b", "args": [], "env": {}}],
      "tolerations": [{"key": "k", "operator": "Exists"}]}})");
  EXPECT_EQ(j, want);
  EXPECT_TRUE(j["spec"]["containers"][1]["args"].is_array());
  EXPECT_TRUE(j["spec"]["containers"][1]["env"].is_object());
}

TEST(YamlToJson, TopLevelListAndScalar) {
  EXPECT_EQ(Convert("- 1\n- two\n- [3]\n"), json::parse(R"([1, "two", [3]])"));
  EXPECT_EQ(Convert("7"), json(7));
}

TEST_F(YamlFileTest, DocumentsWithTheirFirstLines) {
  std::string path = Write("multi.yaml",
                           "# leading comment\n"  // 1
                           "---\n"                // 2
                           "a: 1\n"               // 3
                           "---\n"                // 4
                           "---\n"                // 5: empty document
                           "# only a comment\n"   // 6
                           "---\n"                // 7
                           "kind: Pod\n"          // 8
                           "metadata:\n"          // 9
                           "  name: x\n"          // 10
                           "---\n"                // 11
                           "\n"                   // 12
                           "- 1\n");              // 13
  auto docs = Must(LoadYamlDocuments(path));
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].line, 3);
  EXPECT_EQ(docs[0].object, json::parse(R"({"a": 1})"));
  EXPECT_EQ(docs[1].line, 8);
  EXPECT_EQ(docs[1].object, json::parse(R"({"kind": "Pod", "metadata": {"name": "x"}})"));
  EXPECT_EQ(docs[2].line, 13);
  EXPECT_EQ(docs[2].object, json::parse("[1]"));
}

TEST_F(YamlFileTest, SingleDocumentWithoutSeparator) {
  auto docs = Must(LoadYamlDocuments(Write("one.yaml", "\n\nschedulerName: gantry\n")));
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].line, 3);
}

TEST_F(YamlFileTest, EmptyAndCommentOnlyFilesHaveNoDocuments) {
  EXPECT_TRUE(Must(LoadYamlDocuments(Write("empty.yaml", ""))).empty());
  EXPECT_TRUE(Must(LoadYamlDocuments(Write("comments.yaml", "# a\n---\n# b\n"))).empty());
}

TEST_F(YamlFileTest, SyntaxErrorNamesFileLineAndColumn) {
  // The flow sequence opened with [ on line 2 is closed with } at column 11.
  std::string path = Write("bad.yaml", "ok: 1\nbad: [1, 2}\n");
  auto r = LoadYamlDocuments(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind(path + ":2:11: ", 0), 0u) << r.status().message();
}

TEST_F(YamlFileTest, SyntaxErrorInALaterDocument) {
  // The whole file is rejected; the } that ends a [ list is at line 5, column 6.
  std::string path = Write("later.yaml", "a: 1\n---\nb: 2\n---\nc: [1}\n");
  auto r = LoadYamlDocuments(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind(path + ":5:6: ", 0), 0u) << r.status().message();
}

TEST_F(YamlFileTest, MissingFile) {
  std::string path = (dir_ / "nope.yaml").string();
  auto r = LoadYamlDocuments(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace gantry::k8s
