// YAML to JSON (k8s/yaml_json.h): ParseYamlDocuments on any text, then what
// `gantry validate` does with each document: the object codecs, and ParseDaemonConfig on
// a ConfigMap's data.config.yaml.
//
// Checks: a refusal names the file; documents start on a line of the text, in order; each
// document's JSON can be written out (valid UTF-8) and reads back equal; then the object
// codecs' checks (tests/fuzz/object_checks.h).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/config.h"
#include "k8s/yaml_json.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/object_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-manifest.yaml";
  const std::string_view text = fuzz::AsText(data, size);
  auto docs = k8s::ParseYamlDocuments(text, source);
  if (!docs.ok()) {
    fuzz::CheckErrorNamesSource(docs.status(), source);
    return 0;
  }
  int previous_line = 0;
  for (const k8s::YamlDocument& doc : *docs) {
    FUZZ_CHECK(doc.line >= 1 && doc.line >= previous_line,
               "a document on line " + std::to_string(doc.line) + " after one on line " +
                   std::to_string(previous_line));
    previous_line = doc.line;
    std::string written;
    try {
      written = doc.object.dump();
    } catch (const nlohmann::json::exception& e) {
      FUZZ_CHECK(false, std::string("a document's JSON cannot be written: ") + e.what());
      continue;
    }
    const nlohmann::json back = nlohmann::json::parse(written, nullptr, false);
    FUZZ_CHECK(!back.is_discarded() && back == doc.object,
               "a document's JSON does not read back: " + written.substr(0, 200));
    fuzz::CheckObjectCodecs(doc.object);
    const nlohmann::json* config = nullptr;
    if (doc.object.is_object() && doc.object.contains("data") && doc.object["data"].is_object() &&
        doc.object["data"].contains("config.yaml")) {
      config = &doc.object["data"]["config.yaml"];
    }
    if (config != nullptr && config->is_string()) {
      DaemonConfig parsed;
      const std::string config_source = source + " data.config.yaml";
      Status st = ParseDaemonConfig(config->get<std::string>(), config_source, &parsed);
      if (!st.ok()) fuzz::CheckErrorNamesSource(st, config_source);
    }
  }
  return 0;
}
