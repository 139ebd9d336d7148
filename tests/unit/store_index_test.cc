// StoreIndex: exact LRU order and the rule that an object leaves only with
// the last entry naming it.
#include "server/store/store_index.h"

#include <algorithm>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

using Kind = StoreIndex::Kind;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr int64_t kNoAge = std::numeric_limits<int64_t>::min();

std::vector<std::string> Keys(const StoreIndex::Victims& v) {
  std::vector<std::string> keys;
  for (const auto& [kind, key] : v.entries) keys.push_back(key);
  return keys;
}

TEST(StoreIndex, PicksLeastRecentlyUsedFirstAndTouchMovesAnEntry) {
  StoreIndex index;
  index.Put(Kind::kRecord, "a", 100, 10, {{"A", 100}});
  index.Put(Kind::kRecord, "b", 200, 10, {{"B", 100}});
  index.Put(Kind::kRecord, "c", 300, 10, {{"C", 100}});
  EXPECT_EQ(index.live_bytes(), 330u);
  // Down to 220 bytes: one entry (110 bytes) must go, the oldest.
  EXPECT_THAT(Keys(index.Pick(220, kNoAge, 100)), ElementsAre("a"));
  index.Touch("a", 400);
  EXPECT_THAT(Keys(index.Pick(220, kNoAge, 100)), ElementsAre("b"));
  EXPECT_THAT(Keys(index.Pick(0, kNoAge, 100)), ElementsAre("b", "c", "a"));
  // Pick changes nothing.
  EXPECT_EQ(index.records(), 3u);
  EXPECT_EQ(index.live_bytes(), 330u);
}

TEST(StoreIndex, AnObjectNamedByASurvivorStays) {
  StoreIndex index;
  // Two compiles with the same output, and a link that takes it as input.
  index.Put(Kind::kRecord, "k1", 1, 10, {{"X", 1000}});
  index.Put(Kind::kRecord, "k2", 2, 10, {{"X", 1000}});
  index.Put(Kind::kRecord, "link", 3, 10, {{"L", 500}, {"X", 1000}});
  EXPECT_EQ(index.objects(), 2u);
  EXPECT_EQ(index.live_bytes(), 30u + 1500u);

  StoreIndex::Victims two = index.Pick(1510, kNoAge, 2);
  EXPECT_THAT(Keys(two), ElementsAre("k1", "k2"));
  EXPECT_TRUE(two.objects.empty());  // the link still names X
  index.Remove(two);
  EXPECT_TRUE(index.HasObject("X"));

  StoreIndex::Victims last = index.Pick(0, kNoAge, 10);
  EXPECT_THAT(last.objects, UnorderedElementsAre("L", "X"));
  index.Remove(last);
  EXPECT_EQ(index.live_bytes(), 0u);
  EXPECT_EQ(index.objects(), 0u);
}

TEST(StoreIndex, ReplacingAnEntryMovesItsReferences) {
  StoreIndex index;
  index.Put(Kind::kRecord, "k", 1, 10, {{"old", 100}});
  index.Put(Kind::kRecord, "k", 2, 12, {{"new", 200}});
  EXPECT_FALSE(index.HasObject("old"));
  EXPECT_TRUE(index.HasObject("new"));
  EXPECT_EQ(index.live_bytes(), 212u);
  EXPECT_EQ(index.records(), 1u);
}

TEST(StoreIndex, AgeEvictsOnlyOlderEntriesAndUploadsCount) {
  StoreIndex index;
  index.Put(Kind::kUpload, "u", 50, 20, {{"U", 100}});
  index.Put(Kind::kRecord, "old", 100, 10, {{"A", 100}});
  index.Put(Kind::kRecord, "new", 1000, 10, {{"B", 100}});
  StoreIndex::Victims v =
      index.Pick(std::numeric_limits<uint64_t>::max(), 500, 100);
  EXPECT_THAT(Keys(v), ElementsAre("u", "old"));
  EXPECT_EQ(v.entries[0].first, Kind::kUpload);
  EXPECT_THAT(v.objects, UnorderedElementsAre("U", "A"));
}

TEST(StoreIndex, TouchedRecordsAreReportedOnce) {
  StoreIndex index;
  index.Put(Kind::kRecord, "k", 1, 10, {});
  index.Touch("k", 5);
  index.Touch("unknown", 5);
  auto touched = index.TakeTouched();
  ASSERT_EQ(touched.size(), 1u);
  EXPECT_EQ(touched[0].first, "k");
  EXPECT_EQ(touched[0].second, 5);
  EXPECT_TRUE(index.TakeTouched().empty());
}

}  // namespace
}  // namespace jitcache
