// ChangeWatch on real directories: what counts as a change, and a forked
// child that must neither miss its own changes nor take its parent's.
#include "client/include_scan/change_watch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache::internal {
namespace {

class ChangeWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.Sub("a/b/inc"));
    testing::WriteFile(dir_.Sub("a/b/inc/x.h"), "x");
    ASSERT_TRUE(watch_.Watch({dir_.Sub("a/b/inc/x.h")}, {}));
  }
  testing::TempDir dir_;
  ChangeWatch watch_;
};

TEST_F(ChangeWatchTest, ChangesInTheDirectoryCountElsewhereOnlyOnTheWay) {
  const uint64_t start = watch_.Changes();
  EXPECT_EQ(watch_.Changes(), start);
  testing::WriteFile(dir_.Sub("a/b/sibling.h"), "s");  // beside the way
  testing::WriteFile(dir_.Sub("a/other.txt"), "o");
  EXPECT_EQ(watch_.Changes(), start);
  testing::WriteFile(dir_.Sub("a/b/inc/new.h"), "n");  // in it
  const uint64_t after_new = watch_.Changes();
  EXPECT_GT(after_new, start);
  std::filesystem::rename(dir_.Sub("a/b"), dir_.Sub("a/b2"));  // on the way
  EXPECT_GT(watch_.Changes(), after_new);
}

TEST_F(ChangeWatchTest, AForkedChildSeesItsChangesAndLeavesItsParentsEvents) {
  const uint64_t start = watch_.Changes();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Its parent's instance is not its own: it starts over (a change, so
    // callers check stamps again), and watches anew.
    const uint64_t in_child = watch_.Changes();
    bool right = in_child > start;
    right = right && watch_.Watch({dir_.Sub("a/b/inc/x.h")}, {});
    const uint64_t watched = watch_.Changes();
    testing::WriteFile(dir_.Sub("a/b/inc/x.h"), "changed by the child");
    right = right && watch_.Changes() > watched;
    _exit(right ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The child's write is the parent's event too: nobody consumed it.
  EXPECT_GT(watch_.Changes(), start);
}

}  // namespace
}  // namespace jitcache::internal
