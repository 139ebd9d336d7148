// Each kind's whole conversation with the cache, with no door: lookups,
// refusals, the request for inputs a miss lacks, a miss joined or run,
// and a joined answer that turns out to be another place's or another
// name's, looked up and joined again under the caller's own key. A memory
// store, a real pool, the fake compiler.
#include "server/engine/conversation.h"

#include <future>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/engine/compile_request.h"
#include "server/store/verifying_store.h"
#include "tests/testing/fake_compiler.h"

namespace jitcache {
namespace {

using Kind = CacheAnswer::Kind;

class ConversationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryStore();
    pool_ = std::make_unique<CompilePool>(2, 64);
    EngineOptions options;
    options.store = store_.get();
    options.compiler = &compiler_;
    options.pool = pool_.get();
    options.counters = &counters_;
    options.hot_cache_size = 1 << 20;
    engine_ = std::make_unique<CacheEngine>(std::move(options));
    kinds_ =
        std::make_unique<ActionKinds>(engine_.get(), &compiler_, store_.get(),
                                      /*proves_places=*/true, 8);
    RequestLimits limits;
    limits.max_source_bytes = 1000;
    conversations_ =
        std::make_unique<Conversations>(engine_.get(), kinds_.get(), &counters_,
                                        &compiler_.toolchain(), limits);
  }
  void TearDown() override {
    compiler_.Release();
    pool_->Shutdown();
  }

  // A compile of `source` named `dir`/k.cu from `dir`, with "k.h" beside
  // it (its contents with the request, unless `by_digest`: then the set's
  // digest and the file's time alone, as a client that scanned it sends).
  v1::CompileRequest From(const std::string& dir, const std::string& source,
                          bool by_digest = false) {
    v1::CompileRequest r;
    r.set_source(source);
    r.set_target(v1::TARGET_CUBIN);
    r.add_options("-arch=sm_90");
    r.set_wait_for_proof(true);
    r.set_working_directory(dir);
    r.set_program_name(dir + "/k.cu");
    r.set_includes_resolved(true);
    v1::IncludedFile* f = r.add_included_files();
    f->set_path(dir + "/k.h");
    f->set_mtime_ns(1'000);
    f->set_contents("int h;");
    if (by_digest) {
      absl::StatusOr<PreparedCompile> prepared =
          PrepareCompile(r, compiler_.toolchain(), RequestLimits{});
      EXPECT_TRUE(prepared.ok()) << prepared.status();
      r.clear_included_files();
      r.set_included_set_sha256(std::string(prepared->included_set.AsBytes()));
      r.add_included_mtimes_ns(1'000);
    }
    return r;
  }

  // The answer a turn gives: at once, or once its miss is answered.
  static CacheAnswer Answered(Turn turn) {
    if (turn.now.has_value()) return *std::move(turn.now);
    EXPECT_TRUE(turn.go_on != nullptr);
    std::promise<CacheAnswer> done;
    turn.go_on([&](CacheAnswer answer) { done.set_value(std::move(answer)); });
    return done.get_future().get();
  }

  CacheAnswer Compile(const v1::CompileRequest& request) {
    return Answered(conversations_->Compile(7, user_, request));
  }

  // The object an answer carries, and how it was served.
  static std::string Object(const CacheAnswer& answer) {
    if (answer.kind == Kind::kBuilt) return answer.built->object();
    if (answer.kind != Kind::kHit) return "";
    v1::CompileResponse response;
    EXPECT_TRUE(response.ParseFromString(answer.hit->serialized));
    return response.object();
  }

  testing::FakeCompiler compiler_;
  ServiceCounters counters_;
  UserStats::Counters user_;
  std::unique_ptr<VerifyingStore> store_;
  std::unique_ptr<CompilePool> pool_;
  std::unique_ptr<CacheEngine> engine_;
  std::unique_ptr<ActionKinds> kinds_;
  std::unique_ptr<Conversations> conversations_;
};

TEST_F(ConversationTest, ACompileMissIsRunOnceThenAHit) {
  const CacheAnswer first = Compile(From("/a", "k #placeless"));
  ASSERT_EQ(first.kind, Kind::kBuilt) << first.status;
  EXPECT_TRUE(first.leader);
  const CacheAnswer second = Compile(From("/a", "k #placeless"));
  ASSERT_EQ(second.kind, Kind::kHit) << second.status;
  EXPECT_EQ(Object(second), Object(first));
  EXPECT_EQ(compiler_.calls(), 1);
}

TEST_F(ConversationTest, ABadRequestIsRefusedWithoutARun) {
  v1::CompileRequest request = From("/a", "k");
  request.set_source(std::string(2000, 'x'));  // past max_source_bytes
  const CacheAnswer answer = Compile(request);
  EXPECT_EQ(answer.kind, Kind::kRefused);
  EXPECT_TRUE(absl::IsInvalidArgument(answer.status)) << answer.status;
  EXPECT_EQ(compiler_.calls(), 0);
}

TEST_F(ConversationTest, AMissWithoutItsFilesAsksForThemThenRuns) {
  const CacheAnswer asked = Compile(From("/a", "k", /*by_digest=*/true));
  ASSERT_EQ(asked.kind, Kind::kSendInputs);
  EXPECT_TRUE(asked.included_files);
  EXPECT_TRUE(absl::IsNotFound(asked.status)) << asked.status;
  EXPECT_EQ(compiler_.calls(), 0);
  // Sent again with the contents: run, and the set is kept, so that the
  // next miss of the same files needs only their digests.
  ASSERT_EQ(Compile(From("/a", "k")).kind, Kind::kBuilt);
  const CacheAnswer other = Compile(From("/a", "k2", /*by_digest=*/true));
  EXPECT_EQ(other.kind, Kind::kBuilt) << other.status;
}

// Two places in one flight keyed without the place: the answer shows the
// leader's place, so the other caller is looked up and joined again under
// its own place's key, and gets its own place's answer.
TEST_F(ConversationTest, AJoinerFromAnotherPlaceIsServedUnderItsOwnKey) {
  compiler_.Hold();
  Turn a = conversations_->Compile(7, user_, From("/a", "k"));
  Turn b = conversations_->Compile(7, user_, From("/b", "k"));
  ASSERT_FALSE(a.now.has_value());
  ASSERT_FALSE(b.now.has_value());
  std::promise<CacheAnswer> a_done, b_done;
  a.go_on([&](CacheAnswer answer) { a_done.set_value(std::move(answer)); });
  b.go_on([&](CacheAnswer answer) { b_done.set_value(std::move(answer)); });
  EXPECT_EQ(engine_->waiters(), 2u) << "b joined a's flight";
  compiler_.Release();
  const CacheAnswer from_a = a_done.get_future().get();
  const CacheAnswer from_b = b_done.get_future().get();
  ASSERT_EQ(from_a.kind, Kind::kBuilt) << from_a.status;
  ASSERT_EQ(from_b.kind, Kind::kBuilt) << from_b.status;
  EXPECT_TRUE(absl::StrContains(Object(from_a), "cwd=/a"));
  EXPECT_TRUE(absl::StrContains(Object(from_b), "cwd=/b"))
      << "b was given a's answer: " << Object(from_b);
  EXPECT_TRUE(from_b.built->place_matters());
  // Each place's answer is now a hit for that place.
  EXPECT_EQ(Object(Compile(From("/b", "k"))), Object(from_b));
  EXPECT_EQ(Object(Compile(From("/a", "k"))), Object(from_a));
}

// A link: inputs the store lacks are asked for, then the link runs, keeps
// them, and a second link naming them by digest is a hit.
TEST_F(ConversationTest, ALinkAsksForMissingInputsRunsAndHits) {
  v1::LinkRequest by_digest;
  by_digest.add_options("-arch=sm_90");
  by_digest.set_target(v1::TARGET_CUBIN);
  for (const char* bytes : {"unit a", "unit b"}) {
    v1::LinkInput* in = by_digest.add_inputs();
    in->set_kind(v1::OBJECT_KIND_LTOIR);
    in->set_digest(Digest::Of(bytes).Hex());
  }
  const CacheAnswer asked = Answered(conversations_->Link(7, user_, by_digest));
  ASSERT_EQ(asked.kind, Kind::kSendInputs) << asked.status;
  EXPECT_FALSE(asked.included_files);
  v1::LinkRequest with_bytes = by_digest;
  for (int i = 0; i < with_bytes.inputs_size(); ++i) {
    with_bytes.mutable_inputs(i)->clear_digest();
    with_bytes.mutable_inputs(i)->set_data(i == 0 ? "unit a" : "unit b");
  }
  const CacheAnswer linked =
      Answered(conversations_->Link(7, user_, with_bytes));
  ASSERT_EQ(linked.kind, Kind::kBuilt) << linked.status;
  EXPECT_EQ(Object(linked), "[unit a][unit b]");
  const CacheAnswer hit = Answered(conversations_->Link(7, user_, by_digest));
  ASSERT_EQ(hit.kind, Kind::kHit) << hit.status;
  EXPECT_EQ(Object(hit), "[unit a][unit b]");
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(counters_.link_requests.load(), 3u);
}

// A disproof of a link nothing recorded: nothing to say, nothing run.
TEST_F(ConversationTest, ADisproofIsAnsweredWithNothing) {
  v1::LinkRequest request;
  request.add_options("-arch=sm_90");
  request.set_target(v1::TARGET_CUBIN);
  request.set_as_called(true);
  request.set_disproves(true);
  v1::LinkInput* in = request.add_inputs();
  in->set_kind(v1::OBJECT_KIND_LTOIR);
  in->set_data("unit a");
  const CacheAnswer answer = Answered(conversations_->Link(7, user_, request));
  EXPECT_EQ(answer.kind, Kind::kNothing) << answer.status;
  EXPECT_EQ(compiler_.calls(), 0);
}

}  // namespace
}  // namespace jitcache
