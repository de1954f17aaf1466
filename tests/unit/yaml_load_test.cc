// The one way YAML is loaded (yaml/yaml_load.h): its limits on size, nesting and alias
// expansion, duplicate keys, byte-order marks, second documents, and typed scalars.
#include "yaml/yaml_load.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <string>

#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

std::string ErrorOf(std::string_view text) {
  auto r = ParseYamlNodes(text, "in.yaml");
  return r.ok() ? std::string("(ok)") : r.status().message();
}

bool Parses(std::string_view text) {
  return ParseYamlNodes(text, "in.yaml").ok();
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// `levels` mappings in each other, by indentation.
std::string BlockMappings(int levels) {
  std::string out;
  for (int i = 0; i < levels; ++i) out += std::string(2 * i, ' ') + "k" + std::to_string(i) + ":\n";
  return out + std::string(2 * levels, ' ') + "leaf\n";
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const std::string kDeeper = "nesting deeper than 100 levels";

TEST(ParseYamlNodes, DepthUpToTheLimitIsFine) {
  ASSERT_EQ(kMaxYamlDepth, 100);
  EXPECT_TRUE(Parses(Repeat("[", 100) + Repeat("]", 100))) << ErrorOf(Repeat("[", 100));
  EXPECT_TRUE(Parses(BlockMappings(99))) << ErrorOf(BlockMappings(99));
  EXPECT_TRUE(Parses(Repeat("- ", 100) + "x\n"));
}

TEST(ParseYamlNodes, DeeperFlowIsRefusedWhereItGoesTooDeep) {
  EXPECT_EQ(ErrorOf(Repeat("[", 101) + Repeat("]", 101)),
            "in.yaml:1:101: " + kDeeper + " of lists and mappings (the limit on YAML input)");
  EXPECT_TRUE(
      Contains(ErrorOf("a:\n  b: " + Repeat("{c: ", 99) + "1" + Repeat("}", 99)), "in.yaml:2:"));
  EXPECT_TRUE(Contains(ErrorOf("a:\n  b: " + Repeat("{c: ", 99) + "1" + Repeat("}", 99)), kDeeper));
}

TEST(ParseYamlNodes, DeeperBlocksAreRefused) {
  EXPECT_TRUE(Contains(ErrorOf(BlockMappings(101)), kDeeper));
  EXPECT_TRUE(Contains(ErrorOf(BlockMappings(101)), "in.yaml:101:"));
  EXPECT_TRUE(Contains(ErrorOf(Repeat("- ", 101) + "x\n"), "in.yaml:1:201: " + kDeeper));
  // A list that is a mapping's value at the key's own column: two levels a line.
  std::string compact;
  for (int i = 0; i < 60; ++i) {
    compact += std::string(2 * i, ' ') + "k:\n" + std::string(2 * i, ' ') + "- \n";
  }
  EXPECT_TRUE(Contains(ErrorOf(compact), kDeeper));
}

TEST(ParseYamlNodes, TenMegabytesOfBracketsAreRefusedAtOnce) {
  // yaml-cpp alone took 7 s and 2.4 GB to say "bad file".
  const std::string text(10'000'000, '[');
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ErrorOf(text),
            "in.yaml:1:101: " + kDeeper + " of lists and mappings (the limit on YAML input)");
  EXPECT_LT(SecondsSince(start), 1.0);
  const std::string braces(10'000'000, '{');
  EXPECT_TRUE(Contains(ErrorOf(braces), "in.yaml:1:101: " + kDeeper));
  std::string dashes = Repeat("- ", 5'000'000);
  EXPECT_TRUE(Contains(ErrorOf(dashes), kDeeper));
  std::string indented;
  for (int i = 0; i < 3000; ++i) indented += std::string(i, ' ') + "k:\n";
  EXPECT_TRUE(Contains(ErrorOf(indented), kDeeper));
}

TEST(ParseYamlNodes, BracketsThatAreTextDoNotCount) {
  const std::string many = Repeat("[", 300);
  EXPECT_TRUE(Parses("a: x" + many + "\n"));                    // inside a plain scalar
  EXPECT_TRUE(Parses("a: \"" + many + "\"\n"));                 // double-quoted
  EXPECT_TRUE(Parses("a: '" + many + "'\n"));                   // single-quoted
  EXPECT_TRUE(Parses("a: 1 # " + many + "\n"));                 // a comment
  EXPECT_TRUE(Parses("a: |\n  " + many + "\n  more\nb: 2\n"));  // a block scalar
  EXPECT_TRUE(Parses("- >\n  " + many + "\n- 2\n"));
  EXPECT_TRUE(Parses("a: plain\n  " + many + "\nb: 2\n"));          // a plain scalar goes on
  EXPECT_TRUE(Parses("a: \"two\n  lines " + many + "\"\nb: 1\n"));  // a quoted one too
  EXPECT_TRUE(Parses("a: it's\nb: " + many.substr(0, 50) + Repeat("]", 50) + "\n"));
}

// A 462-byte file of nested aliases, as in the report: each level doubles... ten times.
std::string BillionLaughs() {
  std::string text =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  const std::string names = "abcdefghi";
  for (size_t i = 1; i < names.size(); ++i) {
    const std::string prev = "*" + names.substr(i - 1, 1);
    text += names.substr(i, 1) + ": &" + names.substr(i, 1) + " [" + prev;
    for (int k = 0; k < 8; ++k) text += "," + prev;
    text += "]\n";
  }
  return text;
}

TEST(ParseYamlNodes, AliasesThatExpandPastTheLimitAreRefused) {
  const std::string text = BillionLaughs();
  EXPECT_LT(text.size(), 600u);
  auto start = std::chrono::steady_clock::now();
  const std::string e = ErrorOf(text);
  // Each level is 99.3% aliases: d's second *c (line 4) passes 99% of the 2,567 nodes so far.
  EXPECT_EQ(e,
            "in.yaml:4:11: 2549 of 2567 values, lists and mappings come from aliases, more than "
            "99% (the limit on aliases in one YAML file, as in Kubernetes), alias *c expanded");
  EXPECT_LT(SecondsSince(start), 2.0);
  // Fewer levels stay within it, and load.
  auto small = ParseYamlNodes("a: &a [1, 2]\nb: &b [*a, *a, *a]\nc: [*b, *b]\n", "in.yaml");
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ((*small)[0]["c"][1][2][1].as<int>(), 2);
}

// Kubernetes' rule (go-yaml's allowedAliasRatio): up to 99% of a small file's nodes may come
// from aliases. Here a list of 998 values (999 nodes) is used k times: the file has
// 1 + 1 + 999 + 1 + 1 + 999k nodes (mapping, a, the list, b, b's list, the copies), 999k of
// them aliased; 999k / (1003 + 999k) passes 0.99 from k = 100 on.
std::string ListUsedTimes(int k) {
  std::string text = "a: &a [" + Repeat("x, ", 997) + "x]\nb: [*a";
  for (int i = 1; i < k; ++i) text += ", *a";
  return text + "]\n";
}

TEST(ParseYamlNodes, AliasesMayMakeUpToNinetyNinePercentOfASmallFile) {
  auto ok = ParseYamlNodes(ListUsedTimes(99), "in.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0]["b"].size(), 99u);
  EXPECT_EQ(ErrorOf(ListUsedTimes(100)),
            "in.yaml:2:401: 99900 of 100903 values, lists and mappings come from aliases, more "
            "than 99% (the limit on aliases in one YAML file, as in Kubernetes), alias *a "
            "expanded");
}

TEST(ParseYamlNodes, MoreValuesThanTheLimitAreRefusedBeforeTheyAreRead) {
  std::string text = "[";
  text.reserve(20'000'010);
  for (int i = 0; i < 10'000'000; ++i) text += "0,";
  // The list is one node, so the 10,000,000th 0 (column 20,000,000) passes the limit.
  const std::string e = ErrorOf(text + "0]\n");
  EXPECT_EQ(e,
            "in.yaml:1:20000000: more than 10000000 values, lists and mappings, aliases expanded "
            "(the limit on one YAML file)");
}

TEST(ParseYamlNodes, AliasesCountTowardsDepth) {
  // 60 levels, named, then used 60 levels down: 120 when walked.
  const std::string deep = Repeat("[", 60) + Repeat("]", 60);
  const std::string text =
      "a: &deep " + deep + "\nb: " + Repeat("[", 59) + "*deep" + Repeat("]", 59) + "\n";
  const std::string e = ErrorOf(text);
  EXPECT_TRUE(Contains(e, "in.yaml:2:")) << e;
  EXPECT_TRUE(Contains(
      e, kDeeper + " of lists and mappings (the limit on YAML input), alias *deep expanded"))
      << e;
}

TEST(ParseYamlNodes, AnAliasInsideItsOwnNodeIsACycle) {
  EXPECT_EQ(ErrorOf("a: &x [1, *x]\n"),
            "in.yaml:1:11: alias *x is inside the node it names (a cycle)");
  EXPECT_TRUE(Contains(ErrorOf("a: &m\n  b: *m\n"), "alias *m is inside the node it names"));
}

TEST(ParseYamlNodes, DuplicateKeysAreRefusedWithBothLines) {
  EXPECT_EQ(ErrorOf("a: 1\nb: 2\na: 3\n"), "in.yaml:3:1: duplicate key \"a\" (first at line 1)");
  EXPECT_EQ(ErrorOf("x:\n  cpu: 1\n  memory: 2\n  cpu: 3\n"),
            "in.yaml:4:3: duplicate key \"cpu\" (first at line 2)");
  EXPECT_EQ(ErrorOf("{a: 1, a: 2}"), "in.yaml:1:8: duplicate key \"a\" (first at line 1)");
  // Readers look keys up by their text: 1 and "1" are the same key.
  EXPECT_TRUE(Contains(ErrorOf("1: a\n\"1\": b\n"), "duplicate key \"1\""));
  EXPECT_TRUE(Contains(ErrorOf("k: &k a\nlist:\n  a: 1\n  *k : 2\n"),
                       "duplicate key \"a\" (first at line 3)"));
  // The same key in different mappings, or documents, is fine.
  EXPECT_TRUE(Parses("a: {x: 1}\nb: {x: 2}\n---\na: 1\n"));
}

TEST(ParseYamlNodes, KeysAreSingleValues) {
  EXPECT_TRUE(
      Contains(ErrorOf("[1, 2]: x\n"), "in.yaml:1:1: a mapping's key must be a single value"));
  EXPECT_TRUE(Contains(ErrorOf("? {a: 1}\n: x\n"), "a mapping's key must be a single value"));
}

TEST(ParseYamlNodes, ByteOrderMarkIsSkipped) {
  auto docs = ParseYamlNodes(
      "\xEF\xBB\xBF"
      "a: 1\n",
      "in.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_TRUE((*docs)[0]["a"]);
  EXPECT_EQ((*docs)[0].begin()->first.Scalar(), "a");
  EXPECT_TRUE(Contains(ErrorOf(std::string_view("\xFF\xFE"
                                                "a\0:\0",
                                                6)),
                       "in.yaml: not UTF-8 text"));
}

TEST(ParseYamlNodes, TextThatIsNotUtf8IsRefusedWhereItStops) {
  // Found by the yaml_json fuzzer: a byte 0x95 became a JSON string that nlohmann::json
  // cannot write, and `gantry validate` terminated.
  EXPECT_EQ(ErrorOf("a: 1\nb: x\x95y\n"),
            "in.yaml:2:5: not printable UTF-8 text (byte 0x95); YAML files are printable "
            "Unicode, saved as UTF-8");
  // Control characters are not YAML either (a NUL in a plain scalar came out of yaml-cpp
  // as a byte 0x85: found by the fuzzer in CI); tab and line breaks are.
  EXPECT_TRUE(Contains(ErrorOf(std::string_view("a: p\0q\n", 7)), "in.yaml:1:5: not printable"));
  EXPECT_TRUE(Contains(ErrorOf("a: \x1b[31m\n"), "byte 0x1B"));
  EXPECT_TRUE(Contains(ErrorOf("a: \xC2\x80\n"), "not printable"));  // U+0080, a C1 control
  EXPECT_TRUE(Parses("a:\tb\r\nc: \xC2\x85 \xC2\xA0\n"));
  EXPECT_TRUE(
      Contains(ErrorOf("k: \xC0\xAF\n"), "in.yaml:1:4: not printable UTF-8"));  // overlong '/'
  EXPECT_TRUE(Contains(ErrorOf("k: \xED\xA0\x80\n"), "not printable UTF-8"));   // a surrogate
  EXPECT_TRUE(Contains(ErrorOf("k: \xE2\x82\n"), "not printable UTF-8"));       // cut short
  // Every well-formed character passes: two, three and four bytes long.
  EXPECT_TRUE(Parses("k: \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80\n"));
}

TEST(ParseYamlNodes, InputLargerThanTheLimitIsRefused) {
  // A view of untouched, unreserved pages: the check comes before any byte is read.
  const size_t size = static_cast<size_t>(kMaxInputFileBytes) + 1;
  void* pages = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  const std::string e = ErrorOf(std::string_view(static_cast<const char*>(pages), size));
  munmap(pages, size);
  EXPECT_EQ(
      e, "in.yaml: 1073741825 bytes is more than 1073741824 (1 GiB, the limit on an input file)");
  EXPECT_TRUE(CheckInputSize(kMaxInputFileBytes, "f").ok());
}

TEST(ParseYamlNodes, SyntaxErrorsSayWhere) {
  EXPECT_EQ(ErrorOf("a: [1, 2}\n"), "in.yaml:1:9: not valid YAML: illegal flow end");
}

TEST(ParseYamlNodes, ADocumentStartingWithACommaEnds) {
  // yaml-cpp 0.7 yields empty documents at the ',' for ever (found by mutating the files).
  EXPECT_EQ(ErrorOf(",a: 1\n"),
            "in.yaml:1:1: not valid YAML: unexpected \",\" where a document starts");
  EXPECT_EQ(ErrorOf("# c\na: 1\n---\n,name: x\n"),
            "in.yaml:4:1: not valid YAML: unexpected \",\" where a document starts");
}

TEST(ParseYamlNode, OneDocument) {
  auto one = ParseYamlNode("---\na: 1\n", "in.yaml");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)["a"].as<int>(), 1);
  // Nothing, comments, and empty documents after the one are no second document.
  EXPECT_TRUE(Must(ParseYamlNode("", "in.yaml")).IsNull());
  EXPECT_TRUE(Must(ParseYamlNode("# only\n", "in.yaml")).IsNull());
  EXPECT_TRUE(ParseYamlNode("a: 1\n---\n# nothing\n", "in.yaml").ok());
}

TEST(ParseYamlNode, ASecondDocumentIsAnError) {
  auto two = ParseYamlNode("a: 1\n---\nb: 2\n", "in.yaml");
  ASSERT_FALSE(two.ok());
  EXPECT_TRUE(Contains(two.status().message(), "in.yaml:3:1: a second YAML document"));
}

TEST(ReadYamlInt, OnlyPlainDecimalIntegers) {
  auto read = [](const std::string& text) {
    int64_t v = 0;
    Status st = ReadYamlInt(Must(ParseYamlNode("v: " + text, "in.yaml"))["v"], "in.yaml", "v", -100,
                            100, &v);
    return st.ok() ? std::to_string(v) : st.message();
  };
  EXPECT_EQ(read("3"), "3");
  EXPECT_EQ(read("+3"), "3");
  EXPECT_EQ(read("-0"), "0");
  EXPECT_EQ(read("007"), "7");
  EXPECT_EQ(read("\" 3\""),
            "in.yaml:1:4: v: expected an integer, got the string \" 3\" (a number "
            "in quotes is text; write it without quotes)");
  EXPECT_EQ(read("'3'"),
            "in.yaml:1:4: v: expected an integer, got the string \"3\" (a number in "
            "quotes is text; write it without quotes)");
  EXPECT_EQ(read("3.0"), "in.yaml:1:4: v: expected an integer, got \"3.0\"");
  EXPECT_EQ(read("0x3"), "in.yaml:1:4: v: expected an integer, got \"0x3\"");
  EXPECT_EQ(read("3 apples"), "in.yaml:1:4: v: expected an integer, got \"3 apples\"");
  EXPECT_EQ(read("101"), "in.yaml:1:4: v: must be between -100 and 100, got 101");
  EXPECT_EQ(read("99999999999999999999"),
            "in.yaml:1:4: v: must be between -100 and 100, got 99999999999999999999");
  EXPECT_EQ(read("[3]"), "in.yaml:1:4: v: expected an integer");
  const std::string digits(100'000, '9');
  EXPECT_TRUE(Contains(read(digits), "must be between -100 and 100, got \"9999"));
  EXPECT_TRUE(Contains(read(digits), "... (100000 bytes)"));
}

TEST(ReadYamlBool, OnlyPlainTrueOrFalse) {
  auto read = [](const std::string& text) {
    bool v = false;
    Status st = ReadYamlBool(Must(ParseYamlNode("v: " + text, "in.yaml"))["v"], "in.yaml", "v", &v);
    return st.ok() ? std::string(v ? "true" : "false") : st.message();
  };
  EXPECT_EQ(read("true"), "true");
  EXPECT_EQ(read("false"), "false");
  EXPECT_EQ(read("\"true\""), "in.yaml:1:4: v: expected true or false, got the string \"true\"");
  EXPECT_EQ(read("yes"), "in.yaml:1:4: v: expected true or false, got \"yes\"");
}

TEST(CoreSchemaNumbers, MatchedByHand) {
  for (const char* yes : {"0", "-1", "+12", "007"}) EXPECT_TRUE(IsYamlDecimalInt(yes)) << yes;
  for (const char* no : {"", "-", "+", "1.0", " 1", "1 ", "0x1", "1e3"}) {
    EXPECT_FALSE(IsYamlDecimalInt(no)) << no;
  }
  EXPECT_TRUE(IsYamlOctalInt("0o17"));
  EXPECT_FALSE(IsYamlOctalInt("0o"));
  EXPECT_FALSE(IsYamlOctalInt("0o8"));
  EXPECT_TRUE(IsYamlHexInt("0x1F"));
  EXPECT_FALSE(IsYamlHexInt("0x"));
  EXPECT_FALSE(IsYamlHexInt("0xG"));
  for (const char* yes : {"1", "1.5", ".5", "5.", "-1.5e3", "+.5E-3", "1e3", "0.0"}) {
    EXPECT_TRUE(IsYamlFloat(yes)) << yes;
  }
  for (const char* no : {"", ".", "-.", "e3", ".e3", "1e", "1e+", "1.2.3", "1,5", "inf", "1 "}) {
    EXPECT_FALSE(IsYamlFloat(no)) << no;
  }
  // Linear, without recursion: std::regex overflowed the stack on these.
  const std::string digits(1'000'000, '7');
  EXPECT_TRUE(IsYamlDecimalInt(digits));
  EXPECT_TRUE(IsYamlFloat(digits + "." + digits + "e" + digits));
}

TEST(QuoteForMessage, CutsAndEscapes) {
  EXPECT_EQ(QuoteForMessage("abc"), "\"abc\"");
  EXPECT_EQ(QuoteForMessage("a\"b\\c\n"), "\"a\\\"b\\\\c\\x0a\"");
  EXPECT_EQ(QuoteForMessage(std::string(100, 'x')),
            "\"" + std::string(64, 'x') + "\"... (100 bytes)");
}

}  // namespace
}  // namespace gantry
