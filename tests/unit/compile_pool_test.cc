#include "server/compile_pool.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

TEST(CompilePool, ClientsTakeTurns) {
  CompilePool pool(/*workers=*/1, /*max_queued=*/1000);
  absl::Notification started, release;
  absl::Mutex mu;
  std::vector<std::string> order;
  auto record = [&](std::string who) {
    return CompilePool::Task{[&, who] {
                               absl::MutexLock lock(&mu);
                               order.push_back(who);
                             },
                             nullptr};
  };
  // Occupy the only worker so that everything below queues.
  ASSERT_TRUE(pool.Submit("blocker", {[&] {
                                        started.Notify();
                                        release.WaitForNotification();
                                      },
                                      nullptr})
                  .ok());
  started.WaitForNotification();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(pool.Submit("big", record("big")).ok());
  ASSERT_TRUE(pool.Submit("small", record("small")).ok());
  EXPECT_EQ(pool.queued(), 101u);
  release.Notify();
  auto small_ran = [&] {
    absl::MutexLock lock(&mu);
    return std::find(order.begin(), order.end(), "small") != order.end();
  };
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!small_ran() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  pool.Shutdown();
  absl::MutexLock lock(&mu);
  // The small client's one task must not wait behind the big backlog: it
  // runs second (after the big client's first turn), not 101st.
  auto it = std::find(order.begin(), order.end(), "small");
  ASSERT_NE(it, order.end()) << "small client's task never ran";
  EXPECT_LE(it - order.begin(), 1);
}

TEST(CompilePool, FullQueueIsResourceExhaustedAndShutdownCancels) {
  CompilePool pool(1, 1);
  absl::Notification started, release;
  ASSERT_TRUE(pool.Submit("a", {[&] {
                                  started.Notify();
                                  release.WaitForNotification();
                                },
                                nullptr})
                  .ok());
  started.WaitForNotification();
  bool cancelled = false, ran = false;
  ASSERT_TRUE(
      pool.Submit("b", {[&] { ran = true; }, [&] { cancelled = true; }}).ok());
  absl::Status full = pool.Submit("c", {[] {}, nullptr});
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  std::thread stopper([&] { pool.Shutdown(); });
  absl::SleepFor(absl::Milliseconds(50));
  release.Notify();
  stopper.join();
  EXPECT_TRUE(cancelled);
  EXPECT_FALSE(ran);
  EXPECT_EQ(pool.Submit("d", {[] {}, nullptr}).code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace jitcache
