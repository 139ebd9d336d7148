// What the clients of one cluster share: the nodes known by number, the
// slot map, and who reads it when. The reads themselves, against real
// clusters, are in tests/integration/redis_cluster_test.cc. The pace is
// given to each map, so that no check depends on how fast this runs.
#include "server/remote/redis_cluster_map.h"

#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

constexpr absl::Duration kNever = absl::Hours(1);

RedisEndpoint At(int port) {
  RedisEndpoint e;
  e.host = "127.0.0.1";
  e.port = port;
  return e;
}

RedisClusterMap::Slots AllOn(int node) {
  RedisClusterMap::Slots slots;
  slots.fill(node);
  return slots;
}

// A map whose only rule is "read when due".
RedisClusterMap::Pace WhenDue() {
  return {.least = absl::ZeroDuration(), .most = kNever};
}

TEST(RedisClusterMap, NodesKeepTheirNumbersSeedsFirst) {
  RedisClusterMap map({At(7000), At(7001)});
  EXPECT_EQ(map.NumberOf(At(7001)), 1);
  EXPECT_EQ(map.NumberOf(At(7000)), 0);
  EXPECT_EQ(map.NumberOf(At(7005)), 2);
  EXPECT_EQ(map.NumberOf(At(7005)), 2);
  EXPECT_EQ(map.EndpointOf(2).port, 7005);
  EXPECT_EQ(map.MasterOf(0), -1) << "no map read yet";
  EXPECT_EQ(map.MasterOf(kRedisSlots), -1) << "no such slot";
}

TEST(RedisClusterMap, AWholeMapIsNotReadAgainUntilSomethingFails) {
  RedisClusterMap map({At(7000)}, WhenDue());
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.FinishRead(AllOn(0), kRedisSlots);
  EXPECT_EQ(map.MasterOf(kRedisSlots - 1), 0);
  EXPECT_FALSE(map.StartRead(absl::ZeroDuration())) << "a whole map: not due";
  map.RefreshSoon();
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  // With a map, a client does not wait for another's read.
  const absl::Time before = absl::Now();
  EXPECT_FALSE(map.StartRead(absl::Minutes(5)));
  EXPECT_LT(absl::Now() - before, absl::Minutes(1));
  map.FinishRead(AllOn(0), kRedisSlots);
  EXPECT_FALSE(map.StartRead(absl::ZeroDuration()));
}

TEST(RedisClusterMap, AFailingClusterIsNotAskedForItsMapOnEveryRequest) {
  RedisClusterMap map({At(7000)}, {.least = kNever, .most = kNever});
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.FinishRead(AllOn(0), kRedisSlots);
  map.RefreshSoon();
  EXPECT_FALSE(map.StartRead(absl::ZeroDuration()))
      << "due, but the last read began less than `least` ago";
}

TEST(RedisClusterMap, AMapIsReadAgainWhenOldThoughNothingFailed) {
  RedisClusterMap map({At(7000)}, {.least = absl::ZeroDuration(),
                                   .most = absl::Milliseconds(200)});
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.FinishRead(AllOn(0), kRedisSlots);
  absl::SleepFor(absl::Milliseconds(400));
  EXPECT_TRUE(map.StartRead(absl::ZeroDuration()));
}

TEST(RedisClusterMap, AClientWaitingForTheFirstMapIsWokenByIt) {
  RedisClusterMap map({At(7000)}, WhenDue());
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  std::thread reader([&] {
    absl::SleepFor(absl::Milliseconds(20));
    map.FinishRead(AllOn(0), kRedisSlots);
  });
  const absl::Time before = absl::Now();
  EXPECT_FALSE(map.StartRead(absl::Minutes(5)));
  EXPECT_LT(absl::Now() - before, absl::Minutes(1))
      << "woken by the read, not by the deadline";
  EXPECT_EQ(map.MasterOf(0), 0);
  reader.join();
}

TEST(RedisClusterMap, AClientWaitsForTheFirstMapNoLongerThanItWasTold) {
  RedisClusterMap map({At(7000)}, WhenDue());
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));  // and never finished
  EXPECT_FALSE(map.StartRead(absl::Milliseconds(50)));
  EXPECT_EQ(map.MasterOf(0), -1);
  map.FinishRead(AllOn(0), kRedisSlots);
}

TEST(RedisClusterMap, AFailedReadKeepsTheMapAndAPartialOneIsReadAgain) {
  RedisClusterMap map({At(7000)}, WhenDue());
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  RedisClusterMap::Slots half = AllOn(-1);
  const int other = map.NumberOf(At(7001));
  for (int s = 0; s < kRedisSlots / 2; ++s) half[s] = other;
  map.FinishRead(half, kRedisSlots / 2);
  EXPECT_EQ(map.MasterOf(0), other);
  EXPECT_EQ(map.MasterOf(kRedisSlots - 1), -1);

  ASSERT_TRUE(map.StartRead(absl::ZeroDuration())) << "partial: still due";
  map.FinishRead(AllOn(-1), 0);  // no node answered
  EXPECT_EQ(map.MasterOf(0), other) << "the old map stays";
  EXPECT_TRUE(map.StartRead(absl::ZeroDuration())) << "and is still due";
}

TEST(RedisClusterMap, TheMastersAreAskedFirstThenEveryNodeKnownReplicasToo) {
  RedisClusterMap map({At(7000), At(7001)});
  const int a = map.NumberOf(At(7002));
  const int b = map.NumberOf(At(7003));
  const int replica = map.NumberOf(At(7004));  // known, serving no slot
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  RedisClusterMap::Slots slots = AllOn(b);
  for (int s = 0; s < 100; ++s) slots[s] = a;
  RedisClusterMap::Replicas replicas(a + 1);
  replicas[a] = {replica};
  map.FinishRead(slots, kRedisSlots, replicas);
  EXPECT_EQ(map.Candidates(), (std::vector<int>{a, b, 0, 1, replica}));
  EXPECT_EQ(map.ReplicasOf(a), std::vector<int>{replica});
  EXPECT_TRUE(map.ReplicasOf(b).empty());
  EXPECT_TRUE(map.ReplicasOf(-1).empty()) << "no master known";
}

TEST(RedisClusterMap, AMoveIsFollowedAtOnceAndTheMapReadAgain) {
  RedisClusterMap map({At(7000)}, WhenDue());
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.FinishRead(AllOn(0), kRedisSlots);
  const int to = map.NumberOf(At(7001));
  map.Moved(42, to);
  EXPECT_EQ(map.MasterOf(42), to);
  EXPECT_EQ(map.MasterOf(43), 0);
  EXPECT_TRUE(map.StartRead(absl::ZeroDuration()));
}

// A MOVED or a failure told while another client reads the map: that read
// may have begun before it, so the map is read once more.
TEST(RedisClusterMap, WhatIsToldDuringAReadIsNotLostWithIt) {
  RedisClusterMap map({At(7000)}, WhenDue());
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.Moved(42, map.NumberOf(At(7001)));
  map.FinishRead(AllOn(0), kRedisSlots);
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.RefreshSoon();
  map.FinishRead(AllOn(0), kRedisSlots);
  ASSERT_TRUE(map.StartRead(absl::ZeroDuration()));
  map.FinishRead(AllOn(0), kRedisSlots);
  EXPECT_FALSE(map.StartRead(absl::ZeroDuration())) << "nothing told since";
}

}  // namespace
}  // namespace jitcache
