// What holds a pending job (PendingJob::hold): a lack of room, which more nodes would end,
// or its queue's capability or its gang's size, which they would not. The daemon writes
// Unschedulable, what autoscalers act on, for the first only.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/session.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

std::map<std::string, PendingHold> HoldsAfterOneSession(const ClusterState& c,
                                                        const SchedulerConfig& config) {
  const Policy policy = MustCompile(config);
  const Snapshot snapshot(c);
  Session session(snapshot, policy);
  std::map<std::string, PendingHold> out;
  for (const PendingJob& p : session.Run().pending) out[c.job(p.job).name] = p.hold;
  return out;
}

TEST(PendingHoldTest, RoomQueueCapabilityAndGangSizeAreToldApart) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 4);
  const QueueId open = AddQueue(c, "open");
  const QueueId capped = AddQueue(c, "capped", 1, {}, ResourceVector{{kGpu, 1}});
  AddJob(c, "too-big", open, GpuSpec(8), 1);                       // no node has 8 GPUs
  AddJob(c, "over-capability", capped, GpuSpec(2), 1);             // the queue caps it at 1
  AddJob(c, "short-gang", open, GpuSpec(1), 2, /*min_member=*/3);  // 2 pods of 3
  const auto holds = HoldsAfterOneSession(c, SchedulerConfig::Default());
  ASSERT_EQ(holds.size(), 3u);
  EXPECT_EQ(holds.at("too-big"), PendingHold::kNone);
  EXPECT_EQ(holds.at("over-capability"), PendingHold::kQueueLimit);
  EXPECT_EQ(holds.at("short-gang"), PendingHold::kGang);
}

// Without the enqueue action nothing is refused admission: the capability is met when a
// task that found room is offered to its queue.
TEST(PendingHoldTest, AQueueThatRefusesATaskWithRoomHoldsIt) {
  ClusterState c;
  AddGpuNode(c, "gpu-0", 4);
  const QueueId capped = AddQueue(c, "capped", 1, {}, ResourceVector{{kGpu, 1}});
  AddJob(c, "over-capability", capped, GpuSpec(2), 1);
  SchedulerConfig config = SchedulerConfig::Default();
  std::erase(config.actions, std::string("enqueue"));
  const auto holds = HoldsAfterOneSession(c, config);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds.at("over-capability"), PendingHold::kQueueLimit);
}

}  // namespace
}  // namespace gantry
