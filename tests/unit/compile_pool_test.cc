#include "server/build/compile_pool.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

TEST(CompilePool, UsersTakeTurns) {
  CompilePool pool(/*workers=*/1, /*max_queued=*/1000);
  absl::Notification started, release;
  absl::Mutex mu;
  std::vector<std::string> order;
  constexpr uid_t kBlocker = 0, kBig = 1000, kSmall = 1001;
  auto record = [&](std::string who) {
    return CompilePool::Task{[&, who] {
                               absl::MutexLock lock(&mu);
                               order.push_back(who);
                             },
                             nullptr};
  };
  // Occupy the only worker so that everything below queues.
  ASSERT_TRUE(pool.Submit(kBlocker, {[&] {
                                       started.Notify();
                                       release.WaitForNotification();
                                     },
                                     nullptr})
                  .ok());
  started.WaitForNotification();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(pool.Submit(kBig, record("big")).ok());
  ASSERT_TRUE(pool.Submit(kSmall, record("small")).ok());
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
  // The small user's one task must not wait behind the big backlog: it
  // runs second (after the big user's first turn), not 101st.
  auto it = std::find(order.begin(), order.end(), "small");
  ASSERT_NE(it, order.end()) << "small user's task never ran";
  EXPECT_LE(it - order.begin(), 1);
}

TEST(CompilePool, FullQueueIsResourceExhaustedAndShutdownCancels) {
  CompilePool pool(1, 1);
  absl::Notification started, release;
  ASSERT_TRUE(pool.Submit(1, {[&] {
                                started.Notify();
                                release.WaitForNotification();
                              },
                              nullptr})
                  .ok());
  started.WaitForNotification();
  bool cancelled = false, ran = false;
  ASSERT_TRUE(
      pool.Submit(2, {[&] { ran = true; }, [&] { cancelled = true; }}).ok());
  absl::Status full = pool.Submit(3, {[] {}, nullptr});
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  std::thread stopper([&] { pool.Shutdown(); });
  absl::SleepFor(absl::Milliseconds(50));
  release.Notify();
  stopper.join();
  EXPECT_TRUE(cancelled);
  EXPECT_FALSE(ran);
  EXPECT_EQ(pool.Submit(4, {[] {}, nullptr}).code(),
            absl::StatusCode::kUnavailable);
}

TEST(CompilePool, OneUserCannotFillTheSharedQueue) {
  CompilePool pool(/*workers=*/1, /*max_queued=*/100,
                   /*max_queued_per_user=*/3);
  absl::Notification started, release;
  ASSERT_TRUE(pool.Submit(0, {[&] {
                                started.Notify();
                                release.WaitForNotification();
                              },
                              nullptr})
                  .ok());
  started.WaitForNotification();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(pool.Submit(1000, {[] {}, nullptr}).ok());
  absl::Status over = pool.Submit(1000, {[] {}, nullptr});
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("uid 1000"), absl::string_view::npos)
      << over.message();
  EXPECT_NE(over.message().find("--max_queued_per_user"),
            absl::string_view::npos);
  // Another user still gets in.
  EXPECT_TRUE(pool.Submit(1001, {[] {}, nullptr}).ok());
  auto queued = pool.QueuedByUser();
  std::sort(queued.begin(), queued.end());
  EXPECT_EQ(queued,
            (std::vector<std::pair<uid_t, size_t>>{{1000, 3}, {1001, 1}}));
  release.Notify();
  pool.Shutdown();
}

}  // namespace
}  // namespace jitcache
