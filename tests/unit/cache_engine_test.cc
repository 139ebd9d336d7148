// The cache engine without either door: Actions whose runs are plain
// functions, a memory store, a real pool. What a lookup, a miss, a join, a
// cancellation and a damaged entry do, whoever asks.
#include "server/engine/cache_engine.h"

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/store/verifying_store.h"
#include "tests/testing/fake_compiler.h"

namespace jitcache {
namespace {

using Result = CacheEngine::SharedResult;

// A waiter's view of what the engine answered it.
struct Answered {
  std::promise<std::pair<Result, bool>> done;
  CacheEngine::Waiter Waiter() {
    return [this](const Result& result, bool leader) {
      done.set_value({result, leader});
    };
  }
  std::pair<Result, bool> Get() { return done.get_future().get(); }
};

class CacheEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryStore();
    pool_ = std::make_unique<CompilePool>(2, 64);
    EngineOptions options;
    options.store = store_.get();
    options.compiler = &compiler_;  // its toolchain only: runs are Actions'
    options.pool = pool_.get();
    options.counters = &counters_;
    options.hot_cache_size = 1 << 20;
    engine_ = std::make_unique<CacheEngine>(std::move(options));
  }
  void TearDown() override {
    if (!gate_.HasBeenNotified()) gate_.Notify();
    pool_->Shutdown();
  }

  static Digest Key(const std::string& name) { return Digest::Of(name); }

  // An action for `key` whose run counts itself, waits at the gate when
  // `gated`, and answers `object` (ok) or `error` (a failed run).
  Action MakeAction(const Digest& key, std::string object,
                    absl::Status error = absl::OkStatus(), bool gated = false,
                    std::string log = "") {
    Action action;
    action.key = key;
    action.kind = Action::Compile{};
    action.target = ObjectKind::kCubin;
    action.arch = "sm_90";
    action.run = [this, object, error, gated,
                  log](absl::Time) -> absl::StatusOr<ActionResult> {
      ++runs_;
      if (gated) gate_.WaitForNotification();
      if (!error.ok()) return error;
      ActionResult result;
      result.ok = !object.empty();
      result.object = object;
      result.log = log;
      result.elapsed = absl::Milliseconds(1);
      return result;
    };
    return action;
  }

  void Join(const Digest& key, Answered& answered, Action action) {
    engine_->Join(7, user_, key, answered.Waiter(),
                  [&] { return std::move(action); });
  }

  // The object a hit for `key` answers; "" on a miss.
  std::string HitObject(const Digest& key) {
    absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
        engine_->HitAnswer(key);
    EXPECT_TRUE(hit.ok()) << hit.status();
    if (!hit.ok() || *hit == nullptr) return "";
    v1::CompileResponse response;
    EXPECT_TRUE(response.ParseFromString((*hit)->serialized));
    EXPECT_EQ(response.served(), v1::SERVED_HIT);
    return response.object();
  }

  testing::FakeCompiler compiler_;
  ServiceCounters counters_;
  UserStats::Counters user_;
  std::unique_ptr<VerifyingStore> store_;
  std::unique_ptr<CompilePool> pool_;
  std::unique_ptr<CacheEngine> engine_;
  std::atomic<int> runs_{0};
  absl::Notification gate_;
};

TEST_F(CacheEngineTest, AMissRunsOnceAndIsThenAHit) {
  const Digest key = Key("a");
  EXPECT_EQ(HitObject(key), "");
  Answered answered;
  Join(key, answered, MakeAction(key, "cubin a"));
  auto [result, leader] = answered.Get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(leader);
  EXPECT_EQ((*result)->object(), "cubin a");
  EXPECT_EQ((*result)->outcome(), v1::OUTCOME_OK);
  EXPECT_EQ((*result)->cache_key(), key.Hex());
  EXPECT_EQ(HitObject(key), "cubin a");
  EXPECT_EQ(HitObject(key), "cubin a");  // from memory now
  EXPECT_EQ(runs_.load(), 1);
  EXPECT_EQ(counters_.compiles.load(), 1u);
  EXPECT_GE(counters_.hot_hits.load(), 1u);
}

TEST_F(CacheEngineTest, ConcurrentMissesOfOneKeyJoinOneRun) {
  const Digest key = Key("joined");
  constexpr int kCallers = 8;
  std::vector<Answered> answered(kCallers);
  for (int i = 0; i < kCallers; ++i) {
    Join(key, answered[i],
         MakeAction(key, "one cubin", absl::OkStatus(),
                    /*gated=*/true));
  }
  EXPECT_EQ(engine_->waiters(), static_cast<size_t>(kCallers));
  EXPECT_TRUE(engine_->Running(key));
  gate_.Notify();
  int leaders = 0;
  for (Answered& a : answered) {
    auto [result, leader] = a.Get();
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ((*result)->object(), "one cubin");
    leaders += leader ? 1 : 0;
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(runs_.load(), 1);
  EXPECT_FALSE(engine_->Running(key));
}

TEST_F(CacheEngineTest, AFailedRunIsAnsweredAndNeverKept) {
  const Digest key = Key("failing");
  Answered first;
  Join(key, first, MakeAction(key, "", absl::InternalError("worker died")));
  EXPECT_TRUE(absl::IsInternal(first.Get().first.status()));
  EXPECT_EQ(HitObject(key), "");
  // The next caller runs it again, and that answer is kept.
  Answered second;
  Join(key, second, MakeAction(key, "cubin"));
  EXPECT_TRUE(second.Get().first.ok());
  EXPECT_EQ(runs_.load(), 2);
  EXPECT_EQ(HitObject(key), "cubin");
}

TEST_F(CacheEngineTest, ACompileErrorIsKeptAndHit) {
  const Digest key = Key("error");
  Answered answered;
  Join(key, answered,
       MakeAction(key, "", absl::OkStatus(), false, "k.cu(1): error: no"));
  auto [result, leader] = answered.Get();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ((*result)->outcome(), v1::OUTCOME_COMPILE_ERROR);
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      engine_->HitAnswer(key);
  ASSERT_TRUE(hit.ok() && *hit != nullptr);
  EXPECT_EQ((*hit)->outcome, v1::OUTCOME_COMPILE_ERROR);
  EXPECT_EQ(runs_.load(), 1);
}

TEST_F(CacheEngineTest, ACompileThatMissedAFileIsAnsweredButNotKept) {
  const Digest key = Key("missing");
  Answered answered;
  Join(key, answered,
       MakeAction(key, "", absl::OkStatus(), false,
                  "k.cu(1): catastrophic error: cannot open source file "
                  "\"gone.h\""));
  auto [result, leader] = answered.Get();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ((*result)->outcome(), v1::OUTCOME_COMPILE_ERROR);
  EXPECT_EQ(HitObject(key), "");
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      engine_->HitAnswer(key);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(*hit, nullptr);
}

TEST_F(CacheEngineTest, RunsCancelledAtShutdownAnswerUnavailable) {
  const Digest key = Key("cancelled");
  Action action = MakeAction(key, "never");
  const std::atomic<bool>* cancelled = engine_->cancelled();
  action.run = [this, cancelled](absl::Time) -> absl::StatusOr<ActionResult> {
    ++runs_;
    while (!cancelled->load()) absl::SleepFor(absl::Milliseconds(1));
    return absl::UnavailableError("the daemon is shutting down");
  };
  Answered answered;
  Join(key, answered, std::move(action));
  while (runs_.load() == 0) absl::SleepFor(absl::Milliseconds(1));
  // Queued behind the running one on a pool of one more: cancelled by the
  // pool's shutdown, never run.
  Answered queued_a, queued_b, queued_c;
  Join(Key("q1"), queued_a, MakeAction(Key("q1"), "x", absl::OkStatus(), true));
  Join(Key("q2"), queued_b, MakeAction(Key("q2"), "y", absl::OkStatus(), true));
  Join(Key("q3"), queued_c, MakeAction(Key("q3"), "z", absl::OkStatus(), true));
  engine_->CancelRunning();
  EXPECT_TRUE(absl::IsUnavailable(answered.Get().first.status()));
  if (!gate_.HasBeenNotified()) gate_.Notify();
  pool_->Shutdown();
  for (Answered* a : {&queued_a, &queued_b, &queued_c}) {
    const Result result = a->Get().first;
    // Each either ran (a worker was free) or was cancelled unrun.
    EXPECT_TRUE(result.ok() || absl::IsUnavailable(result.status()))
        << result.status();
  }
  EXPECT_EQ(HitObject(key), "");
}

TEST_F(CacheEngineTest, ARecordWhoseObjectIsGoneIsAMissAndRunsAgain) {
  const Digest key = Key("damaged");
  Answered first;
  Join(key, first, MakeAction(key, "cubin one"));
  ASSERT_TRUE(first.Get().first.ok());
  // The record now names an object of another size: as if the object had
  // been damaged or evicted under it.
  absl::StatusOr<std::optional<v1::ActionRecord>> record =
      store_->GetAction(key);
  ASSERT_TRUE(record.ok() && record->has_value());
  v1::ActionRecord damaged = **record;
  damaged.set_object_size(damaged.object_size() + 1);
  ASSERT_TRUE(store_->PutResult(key, damaged, {}).ok());
  EXPECT_EQ(HitObject(key), "");
  // Removed: the next caller runs it again, and is answered right.
  absl::StatusOr<std::optional<v1::ActionRecord>> after =
      store_->GetAction(key);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->has_value());
  Answered second;
  Join(key, second, MakeAction(key, "cubin one"));
  ASSERT_TRUE(second.Get().first.ok());
  EXPECT_EQ(HitObject(key), "cubin one");
  EXPECT_EQ(runs_.load(), 2);
}

TEST_F(CacheEngineTest, AKindIsRecordedAsItsOwn) {
  const Digest key = Key("link");
  // A link's record names its inputs, which the store must hold.
  const std::string input = "in";
  const ObjectRef kept{Digest::Of(input), ObjectKind::kLtoir, input};
  ASSERT_TRUE(store_->PutObjects({&kept, 1}).ok());
  Action action = MakeAction(key, "");
  action.kind = Action::Link{{std::string(Digest::Of("in").AsBytes())}, {}, {}};
  Answered answered;
  Join(key, answered, std::move(action));
  auto [result, leader] = answered.Get();
  ASSERT_TRUE(result.ok());
  // A link that made nothing is a link error, not a compile error.
  EXPECT_EQ((*result)->outcome(), v1::OUTCOME_LINK_ERROR);
  absl::StatusOr<std::optional<v1::ActionRecord>> record =
      store_->GetAction(key);
  ASSERT_TRUE(record.ok() && record->has_value());
  ASSERT_EQ((*record)->input_digests_size(), 1);
  EXPECT_EQ((*record)->input_digests(0), Digest::Of("in").AsBytes());
}

}  // namespace
}  // namespace jitcache
