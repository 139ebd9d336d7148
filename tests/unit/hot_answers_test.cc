#include "server/engine/hot_answers.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace jitcache {
namespace {

std::shared_ptr<const HotAnswer> AnswerOf(size_t bytes, char fill) {
  auto answer = std::make_shared<HotAnswer>();
  answer->serialized = std::string(bytes, fill);
  return answer;
}

TEST(HotAnswers, MemoryStaysWithinItsBoundLeastRecentlyUsedOutFirst) {
  constexpr uint64_t kMax = 16 * 4096;  // 4 KiB a shard
  HotAnswers hot(kMax);
  std::vector<Digest> keys;
  for (int i = 0; i < 400; ++i) {
    keys.push_back(Digest::Of("key " + std::to_string(i)));
    hot.Keep(keys.back(), AnswerOf(1000, 'a'));
    ASSERT_LE(hot.stats().bytes, kMax);
  }
  EXPECT_LE(hot.stats().entries, 16u * 4);
  EXPECT_GT(hot.stats().entries, 16u);
  // The last kept is there; the first went long ago.
  EXPECT_NE(hot.Find(keys.back()), nullptr);
  EXPECT_EQ(hot.Find(keys.front()), nullptr);

  // A use keeps an answer in while its shard takes new ones.
  const Digest& used = keys.back();
  for (int i = 0; i < 400; ++i) {
    ASSERT_NE(hot.Find(used), nullptr) << i;
    hot.Keep(Digest::Of("more " + std::to_string(i)), AnswerOf(1000, 'b'));
  }
  EXPECT_LE(hot.stats().bytes, kMax);
}

TEST(HotAnswers, ReplacedDroppedTooLargeAndDisabled) {
  HotAnswers hot(16 * 4096);
  const Digest key = Digest::Of("k");
  hot.Keep(key, AnswerOf(100, 'a'));
  hot.Keep(key, AnswerOf(200, 'b'));
  ASSERT_NE(hot.Find(key), nullptr);
  EXPECT_EQ(hot.Find(key)->serialized, std::string(200, 'b'));
  EXPECT_EQ(hot.stats().entries, 1u);
  EXPECT_EQ(hot.stats().bytes, 200u);
  hot.Drop(key);
  EXPECT_EQ(hot.Find(key), nullptr);
  EXPECT_EQ(hot.stats().bytes, 0u);
  hot.Keep(key, AnswerOf(4097, 'c'));  // more than a shard may hold
  EXPECT_EQ(hot.Find(key), nullptr);

  HotAnswers none(0);
  none.Keep(key, AnswerOf(10, 'd'));
  EXPECT_EQ(none.Find(key), nullptr);
  EXPECT_EQ(none.stats().entries, 0u);
}

}  // namespace
}  // namespace jitcache
