// A job's tree of groups (model/group_tree.h): when kube-scheduler's isCPGTreeReady calls a
// CompositePodGroup ready, the fewest pods that make it so, and trees it refuses.
#include "model/group_tree.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gantry {
namespace {

TaskGroup Inner(std::string name, int32_t parent, int32_t min) {
  return TaskGroup{std::move(name), parent, min, /*leaf=*/false};
}
TaskGroup Leaf(std::string name, int32_t parent, int32_t min) {
  return TaskGroup{std::move(name), parent, min, /*leaf=*/true};
}

// root (2 of 3): a (min 2), b (min 3), c: inner (1 of 2): d (min 4), e (min 1).
std::vector<TaskGroup> Tree() {
  return {Inner("root", -1, 2), Leaf("a", 0, 2), Leaf("b", 0, 3),
          Inner("c", 0, 1),     Leaf("d", 3, 4), Leaf("e", 3, 1)};
}

TEST(GroupTreeTest, ReadyWhenEnoughChildrenAreReady) {
  const std::vector<TaskGroup> tree = Tree();
  ASSERT_TRUE(ValidateGroupTree(tree).ok());
  struct Case {
    std::vector<int32_t> counts;  // per group; inner groups' entries are ignored
    bool ready;
  };
  const Case cases[] = {
      {{0, 2, 3, 0, 0, 0}, true},     // a and b
      {{0, 2, 2, 0, 0, 0}, false},    // a only: b is one short
      {{0, 2, 0, 0, 0, 1}, true},     // a and c (through e)
      {{0, 0, 0, 0, 4, 1}, false},    // c only: one child of three
      {{0, 1, 3, 0, 3, 0}, false},    // b; a and d each one short
      {{0, 0, 3, 0, 4, 0}, true},     // b and c (through d)
      {{99, 0, 3, 99, 0, 0}, false},  // inner groups' own counts do not count
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GroupTreeReady(tree, c.counts), c.ready) << ::testing::PrintToString(c.counts);
  }
}

TEST(GroupTreeTest, MinimumTasksTakesTheCheapestChildren) {
  EXPECT_EQ(MinimumTasks(Tree()), 3);  // a (2) and c through e (1)
  EXPECT_EQ(MinimumTasks(std::vector<TaskGroup>{Inner("r", -1, 2), Leaf("a", 0, 5), Leaf("b", 0, 4),
                                                Leaf("c", 0, 6)}),
            9);
  EXPECT_EQ(MinimumTasks(std::vector<TaskGroup>{Leaf("only", -1, 3)}), 3);
}

TEST(GroupTreeTest, RefusesWhatKubeSchedulerRefuses) {
  struct Case {
    std::vector<TaskGroup> tree;
    std::string error;
  };
  const Case cases[] = {
      {{Leaf("a", -1, 1), Inner("root", -1, 1)}, "group \"root\": its parent must come before it"},
      {{Inner("root", -1, 3), Leaf("a", 0, 1), Leaf("b", 0, 1)},
       "group \"root\": needs 3 ready groups but has 2"},
      {{Inner("root", -1, 1), Leaf("a", 0, 0)}, "group \"a\": its minimum must be at least 1"},
      {{Inner("root", -1, 1), Leaf("a", 0, 1), Leaf("b", 1, 1)},
       "group \"b\": its parent \"a\" holds tasks, not groups"},
      {{Inner("l1", -1, 1), Inner("l2", 0, 1), Inner("l3", 1, 1), Inner("l4", 2, 1),
        Leaf("l5", 3, 1)},
       "group \"l5\": the tree is deeper than 4 levels"},
      {{Inner("root", 2, 1), Leaf("a", 0, 1)}, "group \"root\": the root must come first"},
  };
  for (const Case& c : cases) {
    Status status = ValidateGroupTree(c.tree);
    EXPECT_FALSE(status.ok()) << c.error;
    EXPECT_EQ(status.message(), c.error);
  }
}

}  // namespace
}  // namespace gantry
