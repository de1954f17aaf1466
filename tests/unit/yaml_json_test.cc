// YAML manifests to the API's JSON, with YAML 1.2's core schema for plain scalars.
#include "k8s/yaml_json.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/input_file.h"
#include "model/limits.h"

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

TEST(YamlToJson, HugeScalarsDoNotCrash) {
  // std::regex recursed once a character and overflowed the stack on 100,000 digits.
  const std::string digits(100'000, '7');
  json j = Convert("int: " + digits + "\nneg: -" + digits + "\nhex: 0x" + digits + "\noct: 0o" +
                   digits + "\nfloat: 1." + std::string(100'000, '0') + "\nexp: 1e" + digits +
                   "\ntiny: 1e-" + digits + "\ntext: " + digits + "x\n");
  EXPECT_EQ(j["int"], json(digits));  // no int64: the text, as for 99999999999999999999
  EXPECT_EQ(j["neg"], json("-" + digits));
  EXPECT_EQ(j["hex"], json("0x" + digits));
  EXPECT_EQ(j["oct"], json("0o" + digits));
  EXPECT_TRUE(j["float"].is_number_float());
  EXPECT_DOUBLE_EQ(j["float"].get<double>(), 1.0);
  EXPECT_EQ(j["exp"], json("1e" + digits));
  EXPECT_EQ(j["tiny"], json("1e-" + digits));
  EXPECT_EQ(j["text"], json(digits + "x"));
}

TEST(YamlToJson, IntegersAtTheEdgesOfInt64) {
  json j = Convert(
      "max: 9223372036854775807\nmin: -9223372036854775808\nover: 9223372036854775808\n"
      "plus: +0\nhex_max: 0x7fffffffffffffff\nhex_over: 0x8000000000000000\n");
  EXPECT_EQ(j["max"], json(INT64_MAX));
  EXPECT_EQ(j["min"], json(INT64_MIN));
  EXPECT_EQ(j["over"], json("9223372036854775808"));
  EXPECT_EQ(j["plus"], json(0));
  EXPECT_EQ(j["hex_max"], json(INT64_MAX));
  EXPECT_EQ(j["hex_over"], json("0x8000000000000000"));
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

TEST_F(YamlFileTest, DuplicateKeysAreAnError) {
  // Kept the last before (JSON's object did), while yaml-cpp's lookups found the first.
  std::string path =
      Write("dup.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n");
  auto r = LoadYamlDocuments(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), path + ":5:3: duplicate key \"name\" (first at line 4)");
}

TEST_F(YamlFileTest, DeepNestingSaysSo) {
  // Said only "bad file" (yaml-cpp's DeepRecursion), after 2.4 GB and 7 s for 10 MB.
  std::string path = Write("deep.yaml", std::string(1'000'000, '['));
  auto r = LoadYamlDocuments(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind(path + ":1:101: nesting deeper than 100 levels", 0), 0u)
      << r.status().message();
}

TEST_F(YamlFileTest, HugeScalarInAFile) {
  std::string path = Write("digits.yaml", "replicas: " + std::string(100'000, '9') + "\n");
  auto docs = Must(LoadYamlDocuments(path));
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_TRUE(docs[0].object["replicas"].is_string());
}

TEST_F(YamlFileTest, FileLargerThanTheLimitIsRefusedUnread) {
  // A sparse file: its size is checked before a byte is read.
  std::string path = Write("huge.yaml", "");
  std::filesystem::resize_file(path, static_cast<uintmax_t>(kMaxInputFileBytes) + 1);
  auto start = std::chrono::steady_clock::now();
  auto r = LoadYamlDocuments(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.status().message(),
      path + ": 1073741825 bytes is more than 1073741824 (1 GiB, the limit on an input file)");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_FALSE(gantry::ReadInputFile(path).ok());
}

TEST(ParseYamlDocuments, TextWithLinesOfFields) {
  auto docs = Must(
      ParseYamlDocuments("a: 1\n---\nkind: Pod\nmetadata:\n  name: x\n  labels: {}\n", "in.yaml"));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].line, 3);
  EXPECT_EQ(docs[1].LineOf("/kind"), 3);
  EXPECT_EQ(docs[1].LineOf("/metadata"), 5);
  EXPECT_EQ(docs[1].LineOf("/metadata/name"), 5);
  EXPECT_EQ(docs[1].LineOf("/metadata/labels"), 6);
  EXPECT_EQ(docs[1].LineOf("/spec"), 3);  // absent: the document's line
  auto bad = ParseYamlDocuments("a: 1\na: 2\n", "in.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "in.yaml:2:1: duplicate key \"a\" (first at line 1)");
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
