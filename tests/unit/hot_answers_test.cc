#include "server/engine/hot_answers.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/wire/compile_wire.h"
#include "gtest/gtest.h"
#include "server/engine/object_last.h"

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

// A hot answer's object comes last, and the bytes parse as the same
// response as protobuf's own serialisation, for objects whose size takes
// one to three varint bytes, and without one.
TEST(HotAnswers, TheObjectIsTheLastFieldOfTheSameResponse) {
  for (const size_t size : {size_t{0}, size_t{1}, size_t{127}, size_t{128},
                            size_t{16383}, size_t{16384}, size_t{1} << 20}) {
    v1::CompileResponse response;
    response.set_outcome(v1::OUTCOME_OK);
    std::string object(size, '\0');
    for (size_t i = 0; i < size; ++i) object[i] = static_cast<char>(i * 7);
    response.set_object(object);
    response.set_log("a log");
    response.set_cache_key(std::string(64, 'a'));
    response.set_object_digest(std::string(64, 'b'));
    auto* name = response.add_lowered_names();
    name->set_name_expression("k<int>");
    name->set_lowered_name("_Z1kIiEvv");
    response.set_served(v1::SERVED_HIT);
    response.set_compile_time_us(1234);

    const std::string last = SerializeObjectLast(response);
    EXPECT_EQ(last.size(), response.ByteSizeLong()) << size;
    if (size > 0) {
      EXPECT_EQ(last.substr(last.size() - size), object) << size;
      EXPECT_NE(response.SerializeAsString().substr(last.size() - size), object)
          << "protobuf puts the object first: the test shows nothing";
    }
    v1::CompileResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(last)) << size;
    EXPECT_EQ(parsed.SerializeAsString(), response.SerializeAsString()) << size;

    // The clients' own decoder (libjitcache, libnvrtc.so.13) reads every
    // field, the object viewed where it lies: at the end.
    std::optional<compile_wire::ResponseView> view =
        compile_wire::DecodeView(last);
    ASSERT_TRUE(view.has_value()) << size;
    EXPECT_EQ(view->object, object) << size;
    if (size > 0) {
      EXPECT_EQ(view->object.data() + view->object.size(),
                last.data() + last.size())
          << size;
    }
    EXPECT_EQ(view->log, "a log");
    EXPECT_EQ(view->cache_key, std::string(64, 'a'));
    EXPECT_EQ(view->object_digest, std::string(64, 'b'));
    ASSERT_EQ(view->lowered_names.size(), 1u);
    EXPECT_EQ(view->lowered_names[0].first, "k<int>");
    EXPECT_EQ(view->lowered_names[0].second, "_Z1kIiEvv");
    EXPECT_EQ(view->served, v1::SERVED_HIT);
    EXPECT_EQ(view->compile_time_us, 1234);
    EXPECT_EQ(view->outcome, v1::OUTCOME_OK);
  }
}

}  // namespace
}  // namespace jitcache
