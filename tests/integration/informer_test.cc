// The informer against a real kube-apiserver: paged lists, watch events, a server restart
// in the middle of a watch, a relist after 410 Gone, and CRD resources that appear later.
#include "k8s/informer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "k8s/objects.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct Event {
  k8s::EventType type;
  std::string key;
  std::string version;
};

// What the informer told its consumer: every event in order, and the resulting view.
class Recorder {
 public:
  void Handle(k8s::EventType type, const json& object) {
    std::string name = object["metadata"].value("name", "");
    std::string version = object["metadata"].value("resourceVersion", "");
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({type, name, version});
    if (type == k8s::EventType::kDeleted) {
      view_.erase(name);
    } else {
      view_[name] = version;
    }
  }
  k8s::EventHandler Handler() {
    return [this](k8s::EventType type, const json& object) { Handle(type, object); };
  }
  std::vector<Event> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::map<std::string, std::string> view() const {
    std::lock_guard<std::mutex> lock(mu_);
    return view_;
  }
  size_t Count(k8s::EventType type) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const Event& e : events_) n += e.type == type;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
  std::map<std::string, std::string> view_;  // name -> resourceVersion
};

// An informer on its own thread, stopped and joined when the test ends.
class RunningInformer {
 public:
  RunningInformer(const std::string& path, Recorder& recorder, k8s::InformerOptions options = {})
      : informer_(TestEnv::Get().client(), path, recorder.Handler(), options),
        thread_([this] { informer_.Run(stop_); }) {}
  ~RunningInformer() {
    stop_ = true;
    thread_.join();
  }
  k8s::Informer& operator*() { return informer_; }
  k8s::Informer* operator->() { return &informer_; }

 private:
  std::atomic<bool> stop_{false};
  k8s::Informer informer_;
  std::thread thread_;
};

// Quick retries: the tests restart the server and should not wait out long backoffs.
k8s::InformerOptions FastOptions() {
  k8s::InformerOptions options;
  options.retry_initial_s = 0.05;
  options.retry_max_s = 0.5;
  options.missing_retry_s = 0.3;
  return options;
}

std::string ConfigMaps(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/configmaps";
}

json ConfigMap(const std::string& name, const std::string& value = "0") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", {{"value", value}}}};
}

void CreateConfigMap(const std::string& ns, const std::string& name) {
  auto created = TestEnv::Get().Call("POST", ConfigMaps(ns), ConfigMap(name));
  ASSERT_TRUE(created.ok()) << created.status().message();
}

void UpdateConfigMap(const std::string& ns, const std::string& name, const std::string& value) {
  auto patched =
      TestEnv::Get().Call("PATCH", ConfigMaps(ns) + "/" + name, {{"data", {{"value", value}}}},
                          "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.status().message();
}

void DeleteConfigMap(const std::string& ns, const std::string& name) {
  auto deleted = TestEnv::Get().Call("DELETE", ConfigMaps(ns) + "/" + name);
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
}

// name -> resourceVersion of every ConfigMap in `ns`, as a fresh (unpaged) list says.
std::map<std::string, std::string> ListConfigMaps(const std::string& ns) {
  auto list = TestEnv::Get().Call("GET", ConfigMaps(ns));
  EXPECT_TRUE(list.ok()) << list.status().message();
  std::map<std::string, std::string> out;
  if (!list.ok()) return out;
  for (const json& item : (*list)["items"]) {
    out[item["metadata"]["name"]] = item["metadata"]["resourceVersion"];
  }
  return out;
}

// No event repeats a version the consumer has already seen for that object.
void ExpectNoDuplicates(const std::vector<Event>& events) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const Event& e : events) {
    if (e.type == k8s::EventType::kDeleted) continue;
    EXPECT_TRUE(seen.insert({e.key, e.version}).second)
        << e.key << " delivered twice at version " << e.version;
  }
}

TEST(InformerTest, ListsInPagesAndDeliversEveryObjectOnce) {
  TestEnv& env = TestEnv::Get();
  const std::string ns = "it-pages";
  ASSERT_TRUE(env.CreateNamespace(ns).ok());
  constexpr int kObjects = 1200;
  // Four writers share the client (its connection pool) to keep this quick.
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = w; i < kObjects; i += 4) {
        auto created = env.Call("POST", ConfigMaps(ns), ConfigMap("cm-" + std::to_string(i)));
        if (!created.ok()) failures++;
      }
    });
  }
  for (auto& t : writers) t.join();
  ASSERT_EQ(failures.load(), 0);

  // The server pages at 500 (so an informer that ignored `continue` would miss objects).
  auto first_page = env.Call("GET", ConfigMaps(ns) + "?limit=500");
  ASSERT_TRUE(first_page.ok());
  ASSERT_EQ((*first_page)["items"].size(), 500u);
  ASSERT_FALSE((*first_page)["metadata"].value("continue", "").empty());

  Recorder recorder;
  k8s::InformerOptions options = FastOptions();
  options.page_size = 500;
  RunningInformer informer(ConfigMaps(ns), recorder, options);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return informer->synced(); }, seconds(30)))
      << informer->last_error();
  std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), static_cast<size_t>(kObjects));
  std::set<std::string> names;
  for (const Event& e : events) {
    EXPECT_EQ(e.type, k8s::EventType::kAdded) << e.key;
    EXPECT_TRUE(names.insert(e.key).second) << e.key << " delivered twice";
  }
  for (int i = 0; i < kObjects; ++i) EXPECT_TRUE(names.count("cm-" + std::to_string(i)));
  EXPECT_EQ(informer->lists(), 1);
  EXPECT_EQ(recorder.view(), ListConfigMaps(ns));
}

TEST(InformerTest, WatchDeliversAddModifyDelete) {
  TestEnv& env = TestEnv::Get();
  const std::string ns = "it-watch";
  ASSERT_TRUE(env.CreateNamespace(ns).ok());
  Recorder recorder;
  RunningInformer informer(ConfigMaps(ns), recorder, FastOptions());
  ASSERT_TRUE(TestEnv::WaitFor([&] { return informer->synced(); }, seconds(10)));
  EXPECT_TRUE(recorder.events().empty());

  CreateConfigMap(ns, "a");
  ASSERT_TRUE(TestEnv::WaitFor([&] { return recorder.events().size() == 1; }, seconds(10)));
  UpdateConfigMap(ns, "a", "1");
  ASSERT_TRUE(TestEnv::WaitFor([&] { return recorder.events().size() == 2; }, seconds(10)));
  DeleteConfigMap(ns, "a");
  ASSERT_TRUE(TestEnv::WaitFor([&] { return recorder.events().size() == 3; }, seconds(10)));

  std::vector<Event> events = recorder.events();
  EXPECT_EQ(events[0].type, k8s::EventType::kAdded);
  EXPECT_EQ(events[1].type, k8s::EventType::kModified);
  EXPECT_EQ(events[2].type, k8s::EventType::kDeleted);
  for (const Event& e : events) EXPECT_EQ(e.key, "a");
  EXPECT_NE(events[0].version, events[1].version);
  EXPECT_TRUE(recorder.view().empty());
  EXPECT_EQ(informer->lists(), 1);  // watched throughout, never listed again
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(recorder.events().size(), 3u);  // nothing more trickles in
}

TEST(InformerTest, ApiServerRestartMidWatchLosesAndRepeatsNothing) {
  TestEnv& env = TestEnv::Get();
  const std::string ns = "it-restart";
  ASSERT_TRUE(env.CreateNamespace(ns).ok());
  for (int i = 0; i < 20; ++i) CreateConfigMap(ns, "before-" + std::to_string(i));

  Recorder recorder;
  RunningInformer informer(ConfigMaps(ns), recorder, FastOptions());
  ASSERT_TRUE(TestEnv::WaitFor([&] { return informer->synced(); }, seconds(10)));
  ASSERT_EQ(recorder.events().size(), 20u);

  // Changes while the watch runs.
  for (int i = 0; i < 10; ++i) CreateConfigMap(ns, "during-" + std::to_string(i));
  for (int i = 0; i < 5; ++i) UpdateConfigMap(ns, "before-" + std::to_string(i), "1");
  for (int i = 15; i < 20; ++i) DeleteConfigMap(ns, "before-" + std::to_string(i));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return recorder.events().size() == 40u; }, seconds(10)));

  Status restarted = env.RestartApiServer();
  ASSERT_TRUE(restarted.ok()) << restarted.message();

  // Changes after the restart, while the informer reconnects.
  for (int i = 0; i < 10; ++i) CreateConfigMap(ns, "after-" + std::to_string(i));
  for (int i = 5; i < 10; ++i) UpdateConfigMap(ns, "before-" + std::to_string(i), "2");
  for (int i = 0; i < 3; ++i) DeleteConfigMap(ns, "during-" + std::to_string(i));

  std::map<std::string, std::string> truth = ListConfigMaps(ns);
  ASSERT_EQ(truth.size(), 20u + 10u - 5u + 10u - 3u);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return recorder.view() == truth; }, seconds(20)))
      << "informer's view differs from a fresh list; lists " << informer->lists() << ", watches "
      << informer->watches() << ", last error: " << informer->last_error();
  std::this_thread::sleep_for(milliseconds(300));  // anything late would be a duplicate
  std::vector<Event> events = recorder.events();
  ExpectNoDuplicates(events);
  // Every change exactly once, whether the informer resumed its watch or had to relist.
  EXPECT_EQ(recorder.Count(k8s::EventType::kAdded), 40u);
  EXPECT_EQ(recorder.Count(k8s::EventType::kModified), 10u);
  EXPECT_EQ(recorder.Count(k8s::EventType::kDeleted), 8u);
  EXPECT_GE(informer->watches(), 2);
  std::printf("restart: %lld lists, %lld watches\n", static_cast<long long>(informer->lists()),
              static_cast<long long>(informer->watches()));
}

}  // namespace
}  // namespace gantry::testing
