// An informer whose watch cannot resume (410 Gone) lists again and reports what changed
// meanwhile. To make that certain, the test changes etcd behind the API server's back
// while the server is down (a deletion no watch will ever report) and compacts etcd's
// history, so no server can serve a watch from the informer's old resourceVersion.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "k8s/informer.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

std::string Base64(const std::string& text) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < text.size(); i += 3) {
    uint32_t v = (uint8_t(text[i]) << 16) | (uint8_t(text[i + 1]) << 8) | uint8_t(text[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (i + 1 == text.size()) {
    uint32_t v = uint8_t(text[i]) << 16;
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == text.size()) {
    uint32_t v = (uint8_t(text[i]) << 16) | (uint8_t(text[i + 1]) << 8);
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

// etcd's JSON gateway (/v3/kv/...), for what the Kubernetes API cannot do.
class Etcd {
 public:
  explicit Etcd(const std::string& url) {
    k8s::Credentials credentials;
    credentials.server = url;
    credentials.source = "etcd " + url;
    auto client = k8s::Client::Create(credentials);
    EXPECT_TRUE(client.ok()) << client.status().message();
    if (client.ok()) client_ = std::move(client).value();
  }
  Result<json> Post(const std::string& path, const json& body) {
    auto response = client_->Request("POST", path, body.dump());
    if (!response.ok()) return response.status();
    if (!response->ok()) return Status::Failed("etcd " + path + ": " + response->Describe());
    return json::parse(response->body);
  }
  // Deletes a key; returns how many keys went.
  Result<int64_t> Delete(const std::string& key) {
    auto answer = Post("/v3/kv/deleterange", {{"key", Base64(key)}});
    if (!answer.ok()) return answer.status();
    return std::stoll(answer->value("deleted", "0"));
  }
  // Forgets every revision before the current one.
  Status CompactAll() {
    auto range = Post("/v3/kv/range", {{"key", Base64("/")}, {"count_only", true}});
    if (!range.ok()) return range.status();
    int64_t revision = std::stoll((*range)["header"].value("revision", "0"));
    auto compacted = Post("/v3/kv/compaction", {{"revision", revision}, {"physical", true}});
    return compacted.ok() ? Status::Ok() : compacted.status();
  }

 private:
  std::unique_ptr<k8s::Client> client_;
};

TEST(InformerGoneTest, RelistsAfter410AndReportsWhatChangedMeanwhile) {
  TestEnv& env = TestEnv::Get();
  const std::string ns = "it-gone";
  const std::string path = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_TRUE(env.CreateNamespace(ns).ok());
  for (int i = 0; i < 10; ++i) {
    json cm = {{"metadata", {{"name", "cm-" + std::to_string(i)}}}, {"data", {{"v", "0"}}}};
    ASSERT_TRUE(env.Call("POST", path, cm).ok());
  }

  std::mutex mu;
  std::map<std::string, std::string> view;  // name -> resourceVersion
  std::set<std::pair<std::string, std::string>> seen;
  int adds = 0, modifies = 0, deletes = 0, duplicates = 0;
  k8s::InformerOptions options;
  options.retry_initial_s = 0.05;
  options.retry_max_s = 0.5;
  k8s::Informer informer(
      env.client(), path,
      [&](k8s::EventType type, const json& object) {
        std::lock_guard<std::mutex> lock(mu);
        std::string name = object["metadata"].value("name", "");
        std::string version = object["metadata"].value("resourceVersion", "");
        if (type == k8s::EventType::kDeleted) {
          deletes++;
          view.erase(name);
          return;
        }
        (type == k8s::EventType::kAdded ? adds : modifies)++;
        duplicates += !seen.insert({name, version}).second;
        view[name] = version;
      },
      options);
  std::atomic<bool> stop{false};
  std::thread thread([&] { informer.Run(stop); });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Joiner() {
      stop = true;
      thread.join();
    }
  } joiner{stop, thread};
  ASSERT_TRUE(TestEnv::WaitFor([&] { return informer.synced(); }, seconds(10)));
  ASSERT_EQ(informer.lists(), 1);

  ASSERT_TRUE(env.StopApiServer().ok());
  Etcd etcd(env.EnvValue("GANTRY_ETCD_URL"));
  auto deleted = etcd.Delete("/registry/configmaps/" + ns + "/cm-3");
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  ASSERT_EQ(*deleted, 1) << "the key layout of etcd is not /registry/<resource>/<ns>/<name>";
  Status compacted = etcd.CompactAll();
  ASSERT_TRUE(compacted.ok()) << compacted.message();
  Status started = env.StartApiServer();
  ASSERT_TRUE(started.ok()) << started.message();

  json fresh = {{"metadata", {{"name", "cm-new"}}}, {"data", {{"v", "0"}}}};
  ASSERT_TRUE(env.Call("POST", path, fresh).ok());

  auto list = env.Call("GET", path);
  ASSERT_TRUE(list.ok());
  std::map<std::string, std::string> truth;
  for (const json& item : (*list)["items"]) {
    truth[item["metadata"]["name"]] = item["metadata"]["resourceVersion"];
  }
  ASSERT_EQ(truth.size(), 10u);
  ASSERT_FALSE(truth.count("cm-3"));
  bool converged = TestEnv::WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return view == truth;
      },
      seconds(20));
  EXPECT_TRUE(converged) << "lists " << informer.lists() << ", last error "
                         << informer.last_error();
  EXPECT_GE(informer.lists(), 2) << "the informer never listed again";
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(adds, 11);
  EXPECT_EQ(modifies, 0);
  EXPECT_EQ(deletes, 1);  // cm-3, whose deletion only a relist can see
  EXPECT_EQ(duplicates, 0);
}

TEST(InformerGoneTest, WatchFromACompactedVersionIsAnswered410) {
  // What the informer relies on: the server refuses a watch from a version it no longer
  // has, either with HTTP 410 or with an ERROR event carrying code 410.
  TestEnv& env = TestEnv::Get();
  Etcd etcd(env.EnvValue("GANTRY_ETCD_URL"));
  for (int i = 0; i < 3; ++i) {
    json cm = {{"metadata", {{"name", "bump-" + std::to_string(i)}}}};
    ASSERT_TRUE(env.Call("POST", "/api/v1/namespaces/default/configmaps", cm).ok());
  }
  ASSERT_TRUE(etcd.CompactAll().ok());
  std::string first_line, error_body;
  std::atomic<bool> stop{false};
  auto status = env.client().Stream(
      "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1",
      [&](std::string_view line) {
        first_line = line;
        return false;
      },
      &stop, &error_body);
  ASSERT_TRUE(status.ok()) << status.status().message();
  if (*status == 410) return;
  ASSERT_EQ(*status, 200) << error_body;
  json event = json::parse(first_line, nullptr, false);
  ASSERT_TRUE(event.is_object()) << first_line;
  EXPECT_EQ(event.value("type", ""), "ERROR") << first_line;
  EXPECT_EQ(event["object"].value("code", 0), 410) << first_line;
}

}  // namespace
}  // namespace gantry::testing
