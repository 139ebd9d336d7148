#include <fcntl.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "server/build/ptxas_run.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

// A registered ptxas that is gone, or no executable, by the time a worker
// starts costs its own jobs, never the worker (NVRTC's compiles and links
// run in the same workers).
TEST(PtxasBinaries, OneThatCannotBeUsedLeavesItsSlotEmptyAndTheRestOpen) {
  testing::TempDir dir;
  testing::WriteFile(dir.Sub("script"), "#!/bin/sh\nexit 0\n");
  absl::StatusOr<PtxasBinaries> binaries =
      OpenPtxasBinaries({dir.Sub("gone"), dir.Sub("script"), "/proc/self/exe"});
  ASSERT_TRUE(binaries.ok()) << binaries.status();
  ASSERT_EQ(binaries->paths.size(), 3u);
  EXPECT_EQ(binaries->unusable.size(), 2u);
  EXPECT_EQ(fcntl(kFirstPtxasFd, F_GETFD), -1);
  EXPECT_EQ(fcntl(kFirstPtxasFd + 1, F_GETFD), -1);
  EXPECT_NE(fcntl(kFirstPtxasFd + 2, F_GETFD), -1);
  // The test binary's loader is found, and bound into a ptxas job's view.
  EXPECT_FALSE(binaries->loader_dirs.empty());
  close(kFirstPtxasFd + 2);
}

}  // namespace
}  // namespace jitcache
