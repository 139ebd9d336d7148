// SingleFlight: one piece of work per key, its result handed to every
// joiner; the leader may be answered before the others.
#include "server/engine/single_flight.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace jitcache {
namespace {

struct Seen {
  std::string who;
  int result = 0;
  bool leader = false;
};

class SingleFlightTest : public ::testing::Test {
 protected:
  SingleFlight<int>::Waiter Record(std::string who) {
    return [this, who](const int& result, bool leader) {
      seen_.push_back({who, result, leader});
    };
  }
  SingleFlight<int> flights_;
  std::vector<Seen> seen_;
  const Digest key_ = Digest::Of("k");
};

TEST_F(SingleFlightTest, TheFirstJoinerLeadsAndEveryJoinerGetsTheResult) {
  EXPECT_TRUE(flights_.Join(key_, Record("a")));
  EXPECT_FALSE(flights_.Join(key_, Record("b")));
  EXPECT_TRUE(flights_.Open(key_));
  EXPECT_EQ(flights_.waiters(), 2u);
  flights_.Complete(key_, 7);
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[0].who, "a");
  EXPECT_TRUE(seen_[0].leader);
  EXPECT_EQ(seen_[1].who, "b");
  EXPECT_FALSE(seen_[1].leader);
  EXPECT_EQ(seen_[1].result, 7);
  EXPECT_FALSE(flights_.Open(key_));
  EXPECT_TRUE(flights_.Join(key_, Record("c"))) << "a new flight";
}

TEST_F(SingleFlightTest, ALeaderAnsweredEarlyLeavesTheOthersWaiting) {
  ASSERT_TRUE(flights_.Join(key_, Record("leader")));
  ASSERT_FALSE(flights_.Join(key_, Record("early joiner")));
  flights_.AnswerLeader(key_, 1);
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].who, "leader");
  EXPECT_TRUE(seen_[0].leader);
  EXPECT_EQ(seen_[0].result, 1);
  // The flight is still open: later callers join it, none leads.
  EXPECT_TRUE(flights_.Open(key_));
  EXPECT_EQ(flights_.waiters(), 1u);
  EXPECT_FALSE(flights_.Join(key_, Record("late joiner")));
  flights_.AnswerLeader(key_, 99);  // once per flight
  EXPECT_EQ(seen_.size(), 1u);
  flights_.Complete(key_, 2);
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_EQ(seen_[1].who, "early joiner");
  EXPECT_EQ(seen_[2].who, "late joiner");
  for (size_t i = 1; i < seen_.size(); ++i) {
    EXPECT_FALSE(seen_[i].leader) << seen_[i].who;
    EXPECT_EQ(seen_[i].result, 2) << seen_[i].who;
  }
  EXPECT_FALSE(flights_.Open(key_));
  flights_.AnswerLeader(key_, 3);  // no flight: nothing
  EXPECT_EQ(seen_.size(), 3u);
}

}  // namespace
}  // namespace jitcache
