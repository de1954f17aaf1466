// JSON as text for messages (k8s/json_text.h): JsonPrefix writes what JsonText would, cut at
// its bound, without writing the rest.
#include "k8s/json_text.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

TEST(JsonPrefix, IsThePrefixOfTheWholeTextAtEveryBound) {
  const json value = json::parse(
      R"({"a":[1,2.5,"x\"y",null,true,{"b":{}}],"c\u00e9":"\u00e9\u00e9","d":[],"e":{"f":[[]]}})");
  const std::string whole =
      R"({"a":[1,2.5,"x\"y",null,true,{"b":{}}],"cé":"éé","d":[],"e":{"f":[[]]}})";
  ASSERT_EQ(JsonText(value), whole);
  for (size_t bound = 0; bound <= whole.size() + 2; ++bound) {
    EXPECT_EQ(JsonPrefix(value, bound), whole.substr(0, bound)) << "bound " << bound;
  }
}

TEST(JsonPrefix, ReplacesWhatIsNotUtf8AsJsonTextDoes) {
  const json value = {{"name", std::string("n\xff")}};
  EXPECT_EQ(JsonPrefix(value, 100), "{\"name\":\"n\xEF\xBF\xBD\"}");
}

TEST(JsonPrefix, DoesNotWriteOutAHugeObject) {
  json big = json::array();
  for (int i = 0; i < 2'000'000; ++i) big.push_back(i);
  const json object = {{"items", big}, {"last", "x"}};
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(JsonPrefix(object, 12), "{\"items\":[0,");
  // 1000 whole dumps of 2 million numbers take tens of seconds; prefixes take microseconds.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

}  // namespace
}  // namespace gantry::k8s
