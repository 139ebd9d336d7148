// The service over an in-process channel, with a fake compiler and the
// in-memory store.
#include <grpcpp/grpcpp.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/absl_view.h"
#include "common/cache_key.h"
#include "common/compile_place.h"
#include "common/framed_protocol.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "server/build/compile_pool.h"
#include "server/rpc/jitcache_service.h"
#include "server/store/verifying_store.h"
#include "tests/testing/fake_compiler.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { StartService(2, 16); }

  void StartService(int workers, size_t max_queued) {
    store_ = NewMemoryStore();
    pool_ = std::make_unique<CompilePool>(workers, max_queued);
    ServiceOptions options;
    options.store = store_.get();
    options.compiler = &compiler_;
    options.pool = pool_.get();
    options.limits.max_source_bytes = 1000;
    options.hot_cache_size = 1 << 20;  // as the daemon: hits from memory
    service_ = std::make_unique<JitCacheService>(std::move(options));
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::JitCache::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    compiler_.Release();
    compiler_.ReleaseElsewhere();
    if (server_ == nullptr) return;
    pool_->Shutdown();
    server_->Shutdown();
    server_.reset();
  }

  // Each asks to be answered once its key is final, so that a test sees
  // the proof's verdict whichever of the two compiles ends first; the
  // tests of answers before the proof clear it.
  static v1::CompileRequest Request(const std::string& source) {
    v1::CompileRequest r;
    r.set_source(source);
    r.set_target(v1::TARGET_CUBIN);
    r.add_options("-arch=sm_90");
    r.add_name_expressions("k<int>");
    r.set_wait_for_proof(true);
    return r;
  }

  grpc::Status Call(const v1::CompileRequest& request,
                    v1::CompileResponse* response) {
    grpc::ClientContext context;
    return stub_->Compile(&context, request, response);
  }

  v1::StatsResponse Stats() {
    grpc::ClientContext context;
    v1::StatsResponse stats;
    EXPECT_TRUE(stub_->GetStats(&context, {}, &stats).ok());
    return stats;
  }

  // Sends `n` identical requests from `n` threads while the compiler is
  // held, waits until all have arrived, then releases the compiler.
  struct FanIn {
    std::vector<v1::CompileResponse> responses;
    std::vector<grpc::Status> statuses;
  };
  FanIn HeldFanIn(const v1::CompileRequest& request, int n) {
    compiler_.Hold();
    FanIn out;
    out.responses.resize(n);
    out.statuses.resize(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back(
          [&, i] { out.statuses[i] = Call(request, &out.responses[i]); });
    }
    // Every request must have joined the flight before the compile ends,
    // or a late one would start a second flight (or hit).
    while (Stats().waiting() < static_cast<uint64_t>(n)) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    compiler_.Release();
    for (auto& t : threads) t.join();
    return out;
  }

  testing::FakeCompiler compiler_;
  std::unique_ptr<VerifyingStore> store_;
  std::unique_ptr<CompilePool> pool_;
  std::unique_ptr<JitCacheService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::JitCache::Stub> stub_;
};

TEST_F(ServiceTest, MissThenHitWithSameBytesAndLoweredNames) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("kernel"), &first).ok());
  ASSERT_TRUE(Call(Request("kernel"), &second).ok());
  EXPECT_EQ(first.served(), v1::SERVED_MISS);
  EXPECT_EQ(second.served(), v1::SERVED_HIT);
  EXPECT_EQ(first.outcome(), v1::OUTCOME_OK);
  EXPECT_EQ(second.object(), first.object());
  EXPECT_FALSE(first.object().empty());
  EXPECT_EQ(second.cache_key(), first.cache_key());
  ASSERT_EQ(second.lowered_names_size(), 1);
  EXPECT_EQ(second.lowered_names(0).lowered_name(), "_Z_6");
  EXPECT_EQ(compiler_.calls(), 1);
}

// NVRTC reads the options itself: two spellings are two keys, and each is
// compiled as spelled (the differential corpus shows why: spellings NVRTC
// refuses or reads differently).
TEST_F(ServiceTest, EachOptionSpellingIsItsOwnKeyAndCompiledAsSpelled) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("kernel"), &first).ok());
  v1::CompileRequest other = Request("kernel");
  other.clear_options();
  other.add_options("--gpu-architecture");
  other.add_options("sm_90");
  ASSERT_TRUE(Call(other, &second).ok());
  EXPECT_EQ(second.served(), v1::SERVED_MISS);
  EXPECT_NE(second.cache_key(), first.cache_key());
  EXPECT_EQ(compiler_.calls(), 2);
  // The fake compiler's object lists the options it was given.
  EXPECT_TRUE(absl::StrContains(second.object(), " --gpu-architecture sm_90"))
      << second.object();
}

TEST_F(ServiceTest, CompileErrorIsACachedResult) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("#error"), &first).ok());
  ASSERT_TRUE(Call(Request("#error"), &second).ok());
  EXPECT_EQ(first.outcome(), v1::OUTCOME_COMPILE_ERROR);
  EXPECT_EQ(second.outcome(), v1::OUTCOME_COMPILE_ERROR);
  EXPECT_EQ(second.served(), v1::SERVED_HIT);
  EXPECT_THAT(second.log(), HasSubstr("#error directive"));
  EXPECT_TRUE(second.object().empty());
  EXPECT_EQ(compiler_.calls(), 1);
}

// The compile sees only the files the client sent: "cannot open source
// file" may be a file the client's scan did not foresee. Answered, never
// stored.
TEST_F(ServiceTest, ACompileThatMissedAFileIsAnsweredButNotCached) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("#missing"), &first).ok());
  ASSERT_TRUE(Call(Request("#missing"), &second).ok());
  EXPECT_EQ(first.outcome(), v1::OUTCOME_COMPILE_ERROR);
  EXPECT_THAT(first.log(), HasSubstr("cannot open source file"));
  EXPECT_EQ(second.served(), v1::SERVED_MISS);
  EXPECT_EQ(compiler_.calls(), 2);
  EXPECT_EQ(store_->Stats().actions, 0u);
}

TEST_F(ServiceTest, InfrastructureErrorIsNotCached) {
  v1::CompileResponse response;
  EXPECT_EQ(Call(Request("#infra"), &response).error_code(),
            grpc::StatusCode::INTERNAL);
  EXPECT_EQ(Call(Request("#infra"), &response).error_code(),
            grpc::StatusCode::INTERNAL);
  EXPECT_EQ(compiler_.calls(), 2);
  EXPECT_EQ(store_->Stats().actions, 0u);
}

TEST_F(ServiceTest, BadRequestsAreInvalidArgumentAndStoreNothing) {
  v1::CompileResponse response;
  EXPECT_EQ(Call(Request(std::string("a\0b", 3)), &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status big = Call(Request(std::string(1001, 'x')), &response);
  EXPECT_EQ(big.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(big.error_message(), HasSubstr("over the limit of 1000"));
  v1::CompileRequest no_target = Request("k");
  no_target.clear_target();
  EXPECT_EQ(Call(no_target, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::CompileRequest dup = Request("k");
  for (int i = 0; i < 2; ++i) {
    auto* h = dup.add_headers();
    h->set_name("a.h");
  }
  grpc::Status dup_status = Call(dup, &response);
  EXPECT_THAT(dup_status.error_message(), HasSubstr("'a.h' is given twice"));
  // NVRTC would see "-DX=1" only: a NUL in an option is refused, not keyed.
  v1::CompileRequest nul = Request("k");
  nul.add_options(std::string("-DX=1\0-DY=2", 12));
  grpc::Status nul_status = Call(nul, &response);
  EXPECT_EQ(nul_status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(nul_status.error_message(), HasSubstr("contains a NUL byte"));
  EXPECT_EQ(compiler_.calls(), 0);
  EXPECT_EQ(store_->Stats().actions, 0u);
}

// A request carrying files: keyed by their digests, told to send their
// bytes on a miss, compiled with exactly those files in its view, and a hit
// by digests alone afterwards.
TEST_F(ServiceTest, IncludedFilesAreKeyedByDigestAndSentOnlyForAMiss) {
  const std::string path = "/home/user/inc/lib/a.h";
  auto set_of = [&](const std::string& contents) {
    const Digest d = Digest::Of(contents);
    // Keyed by the path anchored at the request's place (compile_place.h):
    // no working directory is "/".
    const std::string anchored = CompilePlace("", "program.cu").Anchored(path);
    return std::string(IncludedSetDigest({{anchored, d.AsBytes()}}).AsBytes());
  };
  v1::CompileRequest request = Request("#include <lib/a.h>");
  request.add_options("-I/home/user/inc");
  request.set_includes_resolved(true);
  request.set_included_set_sha256(set_of("int a;"));

  v1::CompileResponse response;
  grpc::ClientContext ask;
  grpc::Status asked = stub_->Compile(&ask, request, &response);
  // What a miss lacks is asked for as every input is (CacheEngine::
  // FindMissingInputs): NOT_FOUND, and the trailer says which.
  EXPECT_EQ(asked.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ask.GetServerTrailingMetadata().count("jitcache-send-included"),
            1u);
  EXPECT_EQ(compiler_.calls(), 0);

  v1::CompileRequest full = request;
  v1::IncludedFile* file = full.add_included_files();
  file->set_path(path);
  file->set_sha256(std::string(Digest::Of("int a;").AsBytes()));
  file->set_contents("int a;");
  file->set_mtime_ns(1'700'000'000'000'000'001);
  // The hit's request sends the same times, in the set's order.
  request.add_included_mtimes_ns(1'700'000'000'000'000'001);
  ASSERT_TRUE(Call(full, &response).ok());
  EXPECT_EQ(response.served(), v1::SERVED_MISS);
  EXPECT_THAT(response.object(), HasSubstr("[/home/user/inc/lib/a.h]int a;"));
  EXPECT_THAT(response.object(), HasSubstr(" -I/home/user/inc"))
      << "options go to the compiler as spelled";

  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_EQ(response.served(), v1::SERVED_HIT) << "the set's digest suffices";
  EXPECT_EQ(compiler_.calls(), 2)
      << "the compile, and its proof here with other times (the fake shows "
         "where the file is: the place matters, its time does not)";
  EXPECT_EQ(Stats().requests(), 2u) << "asked-again requests count once";

  // Another program with the same files: a miss, compiled without asking
  // for their bytes again.
  v1::CompileRequest sibling = request;
  sibling.set_source("#include <lib/a.h>\n// another kernel");
  ASSERT_TRUE(Call(sibling, &response).ok());
  EXPECT_EQ(response.served(), v1::SERVED_MISS);
  EXPECT_THAT(response.object(), HasSubstr("[/home/user/inc/lib/a.h]int a;"))
      << "the kept set";
  EXPECT_EQ(compiler_.calls(), 4);

  request.set_included_set_sha256(set_of("int b;"));
  grpc::ClientContext changed;
  EXPECT_EQ(stub_->Compile(&changed, request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND)
      << "another file content is another key";
  v1::CompileRequest lying = full;
  lying.set_included_set_sha256(set_of("int b;"));
  EXPECT_EQ(Call(lying, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT)
      << "a list that is not the set's";
}

TEST_F(ServiceTest, IncludedFilesThatDoNotHoldAreRefused) {
  auto with_file = [](const std::string& path, const std::string& contents) {
    v1::CompileRequest r = Request("#include <a.h>");
    r.add_options("-I/home/user/inc");
    r.set_includes_resolved(true);
    v1::IncludedFile* f = r.add_included_files();
    f->set_path(path);
    f->set_sha256(std::string(Digest::Of(contents).AsBytes()));
    f->set_contents(contents);
    return r;
  };
  v1::CompileResponse response;
  auto refusal = [&](const v1::CompileRequest& r) {
    grpc::Status s = Call(r, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return s.error_message();
  };
  v1::CompileRequest forged = with_file("/home/user/inc/a.h", "int a;");
  forged.mutable_included_files(0)->set_contents("int b;");
  EXPECT_THAT(refusal(forged), HasSubstr("do not match"));
  EXPECT_THAT(refusal(with_file("/home/user/inc/../x.h", "x")),
              HasSubstr("not an absolute, normal path"));
  EXPECT_THAT(refusal(with_file("inc/a.h", "x")),
              HasSubstr("not an absolute, normal path"));
  v1::CompileRequest twice = with_file("/home/user/inc/a.h", "x");
  *twice.add_included_files() = twice.included_files(0);
  EXPECT_THAT(refusal(twice), HasSubstr("given twice"));
  v1::CompileRequest unresolved = with_file("/home/user/inc/a.h", "x");
  unresolved.set_includes_resolved(false);
  EXPECT_THAT(refusal(unresolved), HasSubstr("includes_resolved"));
  v1::CompileRequest elsewhere = with_file("/home/user/inc/a.h", "x");
  elsewhere.set_working_directory("home/user");
  EXPECT_THAT(refusal(elsewhere), HasSubstr("working_directory"));
  EXPECT_EQ(compiler_.calls(), 0);
  EXPECT_EQ(store_->Stats().actions, 0u);
}

TEST_F(ServiceTest, SixtyFourIdenticalRequestsCompileOnce) {
  constexpr int kClients = 64;
  FanIn fan = HeldFanIn(Request("same"), kClients);
  int misses = 0, joined = 0;
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(fan.statuses[i].ok()) << fan.statuses[i].error_message();
    EXPECT_EQ(fan.responses[i].object(), fan.responses[0].object());
    misses += fan.responses[i].served() == v1::SERVED_MISS;
    joined += fan.responses[i].served() == v1::SERVED_JOINED;
  }
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(misses, 1);
  EXPECT_EQ(joined, kClients - 1);
  const v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.compiles(), 1u);
  EXPECT_EQ(stats.joins(), static_cast<uint64_t>(kClients - 1));
  EXPECT_EQ(stats.misses(), 1u);
}

TEST_F(ServiceTest, FailingCompileReachesEveryWaiter) {
  FanIn errors = HeldFanIn(Request("#error"), 8);
  for (size_t i = 0; i < errors.statuses.size(); ++i) {
    ASSERT_TRUE(errors.statuses[i].ok());
    EXPECT_EQ(errors.responses[i].outcome(), v1::OUTCOME_COMPILE_ERROR);
    EXPECT_THAT(errors.responses[i].log(), HasSubstr("#error directive"));
  }
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(Stats().compile_errors(), 8u);
}

TEST_F(ServiceTest, InfrastructureFailureReachesEveryWaiter) {
  FanIn failed = HeldFanIn(Request("#infra"), 8);
  for (const grpc::Status& s : failed.statuses) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  }
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(Stats().rejected().at("internal"), 8u);
}

TEST_F(ServiceTest, CancelledWaiterLeavesAndTheCompileGoesOn) {
  compiler_.Hold();
  v1::CompileResponse leader_response, stayer_response, leaver_response;
  grpc::Status leader_status, stayer_status, leaver_status;
  std::thread leader(
      [&] { leader_status = Call(Request("k"), &leader_response); });
  while (Stats().waiting() < 1) absl::SleepFor(absl::Milliseconds(2));
  grpc::ClientContext leaver_context;
  std::thread leaver([&] {
    leaver_status =
        stub_->Compile(&leaver_context, Request("k"), &leaver_response);
  });
  std::thread stayer(
      [&] { stayer_status = Call(Request("k"), &stayer_response); });
  // All three joined, and the one compile is running (held).
  while (Stats().waiting() < 3 || compiler_.calls() < 1) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  leaver_context.TryCancel();
  leaver.join();  // answered while the compile is still held
  EXPECT_EQ(leaver_status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(compiler_.calls(), 1);
  compiler_.Release();
  leader.join();
  stayer.join();
  ASSERT_TRUE(leader_status.ok());
  ASSERT_TRUE(stayer_status.ok());
  EXPECT_EQ(leader_response.served(), v1::SERVED_MISS);
  EXPECT_EQ(stayer_response.served(), v1::SERVED_JOINED);
  EXPECT_EQ(stayer_response.object(), leader_response.object());
  v1::CompileResponse later;
  ASSERT_TRUE(Call(Request("k"), &later).ok());
  EXPECT_EQ(later.served(), v1::SERVED_HIT);
  EXPECT_EQ(compiler_.calls(), 1);
}

TEST_F(ServiceTest, WaiterDeadlineIsHonouredAndTheCompileIsStored) {
  compiler_.Hold();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(200));
  v1::CompileResponse response;
  grpc::Status status = stub_->Compile(&context, Request("slow"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  while (compiler_.calls() < 1) absl::SleepFor(absl::Milliseconds(2));
  EXPECT_EQ(compiler_.calls(), 1);  // still running, held
  compiler_.Release();
  v1::CompileResponse later;
  // The compile went on and its result is stored: the next request hits
  // (or joins, if it arrives before the store write).
  ASSERT_TRUE(Call(Request("slow"), &later).ok());
  EXPECT_NE(later.served(), v1::SERVED_MISS);
  EXPECT_EQ(compiler_.calls(), 1);
}

TEST_F(ServiceTest, FullQueueRefusesNewKeysButHitsAndJoinsSucceed) {
  TearDown();
  StartService(/*workers=*/1, /*max_queued=*/1);
  v1::CompileResponse stored;
  ASSERT_TRUE(Call(Request("stored"), &stored).ok());  // a key to hit later
  compiler_.Hold();
  v1::CompileResponse running, queued, joined;
  grpc::Status running_status, queued_status, joined_status;
  std::thread a([&] { running_status = Call(Request("running"), &running); });
  while (compiler_.calls() < 2) absl::SleepFor(absl::Milliseconds(1));
  std::thread b([&] { queued_status = Call(Request("queued"), &queued); });
  while (pool_->queued() < 1) absl::SleepFor(absl::Milliseconds(1));

  v1::CompileResponse refused;
  grpc::Status full = Call(Request("one too many"), &refused);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(full.error_message(), HasSubstr("retry"));
  v1::CompileResponse hit;
  ASSERT_TRUE(Call(Request("stored"), &hit).ok());
  EXPECT_EQ(hit.served(), v1::SERVED_HIT);
  std::thread c([&] { joined_status = Call(Request("running"), &joined); });
  while (Stats().waiting() < 3) absl::SleepFor(absl::Milliseconds(2));
  compiler_.Release();
  a.join();
  b.join();
  c.join();
  EXPECT_TRUE(running_status.ok());
  EXPECT_TRUE(queued_status.ok());
  ASSERT_TRUE(joined_status.ok());
  EXPECT_EQ(joined.served(), v1::SERVED_JOINED);
  EXPECT_EQ(Stats().rejected().at("queue_full"), 1u);
}

TEST_F(ServiceTest, LongErrorMessagesAreCutToFitGrpcHeaders) {
  v1::CompileRequest request = Request("k");
  request.add_options("--" + std::string(20000, 'x'));  // named in the error
  v1::CompileResponse response;
  grpc::Status status = Call(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(status.error_message().size(), 5000u);
  EXPECT_THAT(status.error_message(), HasSubstr("more bytes"));
}

TEST_F(ServiceTest, LinkHitsAndItsRecordNamesItsInputs) {
  v1::LinkRequest request;
  request.add_options("-arch=sm_90");
  request.set_target(v1::TARGET_CUBIN);
  for (const char* bytes : {"unit a", "unit b"}) {
    v1::LinkInput* in = request.add_inputs();
    in->set_kind(v1::OBJECT_KIND_LTOIR);
    in->set_data(bytes);
  }
  v1::CompileResponse first, second;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Link(&context, request, &first).ok());
  }
  // The same link by digest: the inline inputs were stored.
  v1::LinkRequest by_digest = request;
  for (auto& in : *by_digest.mutable_inputs()) {
    in.set_digest(Digest::Of(in.data()).Hex());
  }
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Link(&context, by_digest, &second).ok());
  }
  EXPECT_EQ(first.served(), v1::SERVED_MISS);
  EXPECT_EQ(second.served(), v1::SERVED_HIT);
  EXPECT_EQ(first.object(), "[unit a][unit b]");
  EXPECT_EQ(second.object(), first.object());
  EXPECT_EQ(compiler_.calls(), 1);

  auto sound = store_->Verify();
  ASSERT_TRUE(sound.ok());
  EXPECT_TRUE(sound->ok());
  const Digest input = Digest::Of("unit b");
  const KvWrite erase{Column::kObjects, AbslView(input.AsBytes()), {}, true};
  ASSERT_TRUE(store_->backend().Write({&erase, 1}).ok());
  auto report = store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->dangling_records, 1u) << "a link outlived its input";
}

TEST_F(ServiceTest, ObjectLostFromStoreIsRecompiled) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("kernel"), &first).ok());
  const Digest digest = *Digest::FromHex(first.object_digest());
  const KvWrite erase{Column::kObjects, AbslView(digest.AsBytes()), {}, true};
  ASSERT_TRUE(store_->backend().Write({&erase, 1}).ok());
  ASSERT_TRUE(Call(Request("kernel"), &second).ok());
  EXPECT_EQ(second.served(), v1::SERVED_MISS);
  EXPECT_EQ(second.object(), first.object());
  EXPECT_EQ(compiler_.calls(), 2);
}

// A hit answered from memory is the store's answer: once the store has
// lost the entry (removed, evicted, cleared, its object found damaged) the
// next request compiles, and once the entry is written again the new one
// is served.
TEST_F(ServiceTest, AHotAnswerIsServedOnlyWhileTheStoreHoldsItsEntry) {
  v1::CompileResponse first;
  ASSERT_TRUE(Call(Request("hot #placeless"), &first).ok());
  ASSERT_EQ(first.served(), v1::SERVED_MISS);
  const Digest key = *Digest::FromHex(first.cache_key());
  const Digest object = *Digest::FromHex(first.object_digest());
  // Two hits: the first reads the store and keeps the answer, the second
  // is answered from memory.
  auto make_hot = [&](const std::string& way) {
    for (int i = 0; i < 2; ++i) {
      v1::CompileResponse hit;
      ASSERT_TRUE(Call(Request("hot #placeless"), &hit).ok());
      ASSERT_EQ(hit.served(), v1::SERVED_HIT) << way;
      EXPECT_EQ(hit.object(), first.object()) << way;
      EXPECT_EQ(hit.cache_key(), first.cache_key()) << way;
    }
  };
  const struct {
    const char* way;
    std::function<void()> lose;
  } ways[] = {
      {"removed", [&] { ASSERT_TRUE(store_->RemoveAction(key).ok()); }},
      {"evicted",
       [&] {
         ASSERT_TRUE(store_->Evict({0, {}}).ok());
       }},
      {"cleared", [&] { ASSERT_TRUE(store_->Clear().ok()); }},
      {"found damaged",
       [&] {
         auto raw = store_->backend().Get(Column::kObjects,
                                          AbslView(object.AsBytes()));
         ASSERT_TRUE(raw.ok() && raw->has_value());
         std::string damaged = **raw;
         damaged[0] ^= 0x01;
         const KvWrite write{Column::kObjects, AbslView(object.AsBytes()),
                             damaged};
         ASSERT_TRUE(store_->backend().Write({&write, 1}).ok());
         // Another reader of the object (a link, say) finds the damage.
         auto read = store_->GetObject(object);
         ASSERT_TRUE(read.ok());
         ASSERT_FALSE(read->has_value());
       }},
  };
  int compiles = 1;
  for (const auto& [way, lose] : ways) {
    const uint64_t hot_before = Stats().hot_hits();
    make_hot(way);
    EXPECT_EQ(Stats().hot_hits(), hot_before + 1) << way;
    lose();
    v1::CompileResponse after;
    ASSERT_TRUE(Call(Request("hot #placeless"), &after).ok());
    EXPECT_EQ(after.served(), v1::SERVED_MISS) << way;
    EXPECT_EQ(compiler_.calls(), ++compiles) << way;
  }

  // Written again under the same key (an import, say): the new record is
  // what hits get, from the store and then from memory.
  make_hot("rewritten");
  auto record = store_->GetAction(key);
  ASSERT_TRUE(record.ok() && record->has_value());
  v1::ActionRecord rewritten = **record;
  rewritten.set_log("the record written again");
  ASSERT_TRUE(store_->PutResult(key, rewritten, {}).ok());
  for (int i = 0; i < 2; ++i) {
    v1::CompileResponse hit;
    ASSERT_TRUE(Call(Request("hot #placeless"), &hit).ok());
    EXPECT_EQ(hit.served(), v1::SERVED_HIT);
    EXPECT_EQ(hit.log(), "the record written again");
  }
  EXPECT_EQ(Stats().hot_entries(), 1u);
  EXPECT_GT(Stats().hot_bytes(), first.object().size());
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// The place (compile_place.h): a request from another working directory
// with the same layout is served by the place-free key when the compile,
// run a second time elsewhere, gave the same answer; otherwise each place
// has its own.
class PlaceTest : public ServiceTest {
 protected:
  // `first` asked, then `second` once `first` waits on the held compiler:
  // one flight, both answered once it is released. Both calls must succeed.
  void CallTogether(const v1::CompileRequest& first,
                    const v1::CompileRequest& second, v1::CompileResponse* a,
                    v1::CompileResponse* b) {
    compiler_.Hold();
    grpc::Status sa, sb;
    std::thread ta([&] { sa = Call(first, a); });
    while (Stats().waiting() < 1) absl::SleepFor(absl::Milliseconds(2));
    std::thread tb([&] { sb = Call(second, b); });
    while (Stats().waiting() < 2) absl::SleepFor(absl::Milliseconds(2));
    compiler_.Release();
    ta.join();
    tb.join();
    ASSERT_TRUE(sa.ok()) << sa.error_message();
    ASSERT_TRUE(sb.ok()) << sb.error_message();
  }

  // A program named `dir`/k.cu that includes "k.h" beside it, asked from
  // `dir`, the header with these contents and time.
  static v1::CompileRequest From(const std::string& dir,
                                 const std::string& source,
                                 int64_t header_mtime = 1'000,
                                 const std::string& header = "int h;") {
    v1::CompileRequest r = Request(source);
    r.set_working_directory(dir);
    r.set_program_name(dir + "/k.cu");
    r.set_includes_resolved(true);
    v1::IncludedFile* f = r.add_included_files();
    f->set_path(dir + "/k.h");
    f->set_contents(header);
    f->set_mtime_ns(header_mtime);
    return r;
  }
};

TEST_F(PlaceTest, AnAnswerThatDoesNotDependOnThePlaceIsSharedByEveryPlace) {
  v1::CompileResponse a, b;
  ASSERT_TRUE(Call(From("/home/ada/p", "#placeless"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_FALSE(a.place_matters());
  EXPECT_EQ(compiler_.elsewhere_calls(), 1) << "the proof ran";
  EXPECT_THAT(a.object(), HasSubstr("[P:k.h]int h;"));

  // Another directory, another time on the header: the same answer.
  ASSERT_TRUE(Call(From("/tmp/tmpq1w2e3r4", "#placeless", 9'999), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT);
  EXPECT_EQ(b.object(), a.object());
  EXPECT_EQ(b.cache_key(), a.cache_key());
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(compiler_.elsewhere_calls(), 1);
  const v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.place_proofs(), 1u);
  EXPECT_EQ(stats.place_shared(), 1u);
  EXPECT_EQ(stats.place_kept(), 0u);

  // Another layout (the header elsewhere) or other bytes: another key.
  v1::CompileRequest moved = From("/home/ada/p", "#placeless");
  moved.mutable_included_files(0)->set_path("/home/ada/k.h");
  ASSERT_TRUE(Call(moved, &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_MISS);
  ASSERT_TRUE(
      Call(From("/home/bob/p", "#placeless", 1'000, "int g;"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_MISS);
}

TEST_F(PlaceTest, AnAnswerThatDependsOnThePlaceIsKeptForItsPlace) {
  v1::CompileResponse a, b, again;
  ASSERT_TRUE(Call(From("/home/ada/p", "k #stamped"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_TRUE(a.place_matters());
  EXPECT_THAT(a.object(), HasSubstr("cwd=/home/ada/p"));

  ASSERT_TRUE(Call(From("/home/bob/p", "k #stamped"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_MISS) << "not another place's answer";
  EXPECT_TRUE(b.place_matters());
  EXPECT_THAT(b.object(), HasSubstr("cwd=/home/bob/p"));
  EXPECT_THAT(b.object(), HasSubstr("[/home/bob/p/k.h]int h;"));
  EXPECT_NE(b.cache_key(), a.cache_key());
  EXPECT_EQ(compiler_.elsewhere_calls(), 2)
      << "decided once: under another name, then under the same one";

  ASSERT_TRUE(Call(From("/home/ada/p", "k #stamped"), &again).ok());
  EXPECT_EQ(again.served(), v1::SERVED_HIT);
  EXPECT_EQ(again.object(), a.object());
  EXPECT_EQ(again.cache_key(), a.cache_key());

  // The same bytes with another time: another place.
  ASSERT_TRUE(Call(From("/home/ada/p", "k #stamped", 2'000), &again).ok());
  EXPECT_EQ(again.served(), v1::SERVED_MISS);
  EXPECT_EQ(compiler_.calls(), 4)
      << "each place's compile, and the first one's proof with other times";
  EXPECT_EQ(Stats().place_kept(), 1u);
}

// An answer that depends on the place but not on the files' times (a
// header spelled by its absolute path inside the place, which no proof
// elsewhere can move): kept under the place's key without the times, so
// that a touched file is still a hit there, and another place is not.
TEST_F(PlaceTest, AnAnswerThatDependsOnThePlaceButNotTheTimesIgnoresTheTimes) {
  v1::CompileResponse a, b, c;
  ASSERT_TRUE(Call(From("/home/ada/p", "k"), &a).ok());
  EXPECT_TRUE(a.place_matters());
  EXPECT_TRUE(a.place_without_times());
  EXPECT_EQ(compiler_.elsewhere_calls(), 2) << "elsewhere, twice";
  ASSERT_TRUE(Call(From("/home/ada/p", "k", 2'000), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT) << "another time on the file";
  EXPECT_EQ(b.object(), a.object());
  ASSERT_TRUE(Call(From("/home/bob/p", "k", 2'000), &c).ok());
  EXPECT_EQ(c.served(), v1::SERVED_MISS) << "another place";
  EXPECT_THAT(c.object(), HasSubstr("cwd=/home/bob/p"));
  EXPECT_EQ(compiler_.calls(), 3)
      << "the first compile, its proof here with other times, the other place";
}

TEST_F(PlaceTest, ADigestOnlyRequestFindsItsPlacesKey) {
  v1::CompileResponse a, b;
  ASSERT_TRUE(Call(From("/home/ada/p", "k #stamped"), &a).ok());
  ASSERT_TRUE(a.place_matters());
  // What a client hoping for a hit sends: the set's digest and the times.
  v1::CompileRequest by_digest = From("/home/ada/p", "k #stamped");
  const CompilePlace place("/home/ada/p", "/home/ada/p/k.cu");
  by_digest.clear_included_files();
  by_digest.set_included_set_sha256(std::string(
      IncludedSetDigest(
          {{place.Anchored("/home/ada/p/k.h"), Digest::Of("int h;").AsBytes()}})
          .AsBytes()));
  by_digest.add_included_mtimes_ns(1'000);
  ASSERT_TRUE(Call(by_digest, &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT);
  EXPECT_EQ(b.object(), a.object());
  // Without the times, the place is not the same.
  by_digest.clear_included_mtimes_ns();
  grpc::ClientContext asked;
  EXPECT_EQ(stub_->Compile(&asked, by_digest, &b).error_code(),
            grpc::StatusCode::NOT_FOUND)
      << "a place without its files' times: the files are asked for";
  EXPECT_EQ(asked.GetServerTrailingMetadata().count("jitcache-send-included"),
            1u);
}

// Requests from two places join one place-free compile; when its answer
// depends on the place, the one from the other place is compiled there.
TEST_F(PlaceTest, ACallerFromAnotherPlaceOfAHerdGetsItsOwnPlacesAnswer) {
  v1::CompileResponse a, b;
  ASSERT_NO_FATAL_FAILURE(
      CallTogether(From("/home/ada/p", "k"), From("/home/bob/p", "k"), &a, &b));
  EXPECT_THAT(a.object(), HasSubstr("cwd=/home/ada/p"));
  EXPECT_THAT(b.object(), HasSubstr("cwd=/home/bob/p"));
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_EQ(b.served(), v1::SERVED_MISS) << "led its own place's compile";
  EXPECT_EQ(compiler_.calls(), 3) << "and the leader's proof with other times";
  EXPECT_EQ(compiler_.elsewhere_calls(), 2) << "the leader's two proofs";
  EXPECT_EQ(Stats().requests(), 2u);
}

// The program's name is in the key only where the answer shows it: the
// same program under another name, from another place, is a hit when the
// proof (elsewhere, under another name) gave the same answer.
TEST_F(PlaceTest, AnAnswerThatDoesNotShowTheProgramsNameIsSharedByEveryName) {
  auto named = [](const std::string& dir, const std::string& name,
                  const std::string& source) {
    v1::CompileRequest r = From(dir, source);
    r.set_program_name(dir + "/" + name);
    return r;
  };
  v1::CompileResponse a, b;
  ASSERT_TRUE(Call(named("/home/ada/p", "s.cu", "#placeless"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_FALSE(a.place_matters());
  EXPECT_EQ(compiler_.elsewhere_calls(), 1) << "one proof, under another name";
  ASSERT_TRUE(
      Call(named("/tmp/tmpq1w2e3r4", "kern.cu", "#placeless"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT);
  EXPECT_EQ(b.object(), a.object());
  // Another extension is another key (NVRTC could read it).
  ASSERT_TRUE(Call(named("/home/ada/p", "s.cuh", "#placeless"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_MISS);
  EXPECT_EQ(compiler_.calls(), 2);
}

// An answer that shows the program's name but not its place: kept under
// the name, shared by every place that names the program so, and another
// name compiles its own.
TEST_F(PlaceTest, AnAnswerThatShowsTheProgramsNameIsSharedUnderThatName) {
  auto named = [](const std::string& dir, const std::string& name) {
    v1::CompileRequest r = From(dir, "#placeless #named");
    r.set_program_name(dir + "/" + name);
    return r;
  };
  v1::CompileResponse a, b, c, d;
  ASSERT_TRUE(Call(named("/home/ada/p", "s.cu"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_TRUE(a.place_matters());
  EXPECT_TRUE(a.program_name_only());
  EXPECT_THAT(a.object(), HasSubstr("name=s.cu"));
  EXPECT_EQ(compiler_.elsewhere_calls(), 2)
      << "under another name, then under the same one";
  EXPECT_EQ(Stats().place_name_kept(), 1u);

  ASSERT_TRUE(Call(named("/tmp/tmpq1w2e3r4", "s.cu"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT) << "the same name elsewhere";
  EXPECT_EQ(b.object(), a.object());
  EXPECT_EQ(b.cache_key(), a.cache_key());

  ASSERT_TRUE(Call(named("/home/ada/p", "kern.cu"), &c).ok());
  EXPECT_EQ(c.served(), v1::SERVED_MISS) << "another name";
  EXPECT_THAT(c.object(), HasSubstr("name=kern.cu"));
  EXPECT_TRUE(c.program_name_only());
  ASSERT_TRUE(Call(named("/home/bob/q", "kern.cu"), &d).ok());
  EXPECT_EQ(d.served(), v1::SERVED_HIT);
  EXPECT_EQ(d.object(), c.object());
  EXPECT_EQ(compiler_.calls(), 2);
  EXPECT_EQ(compiler_.elsewhere_calls(), 2) << "decided once for every name";
}

// A log that names the program and nothing else that does: one answer for
// every name and place, its log written for each caller's name, also for a
// caller of another name that joined the compile.
TEST_F(PlaceTest, ALogThatNamesTheProgramIsWrittenForEachCallersName) {
  auto named = [](const std::string& dir, const std::string& name) {
    v1::CompileRequest r = From(dir, "#placeless #lognamed");
    r.set_program_name(dir + "/" + name);
    return r;
  };
  v1::CompileResponse a, b;
  ASSERT_TRUE(Call(named("/home/ada/p", "s.cu"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_FALSE(a.place_matters());
  EXPECT_EQ(a.log(), "/home/ada/p/s.cu(1): warning: fake, in /home/ada/p/s.cu");
  EXPECT_EQ(compiler_.elsewhere_calls(), 1)
      << "one proof: the same but the name";
  ASSERT_TRUE(Call(named("/tmp/tmpq1w2e3r4", "kern.cu"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT);
  EXPECT_EQ(b.cache_key(), a.cache_key());
  EXPECT_EQ(b.object(), a.object());
  EXPECT_EQ(b.log(),
            "/tmp/tmpq1w2e3r4/kern.cu(1): warning: fake, in "
            "/tmp/tmpq1w2e3r4/kern.cu");
  EXPECT_EQ(b.log_program_name(), "/tmp/tmpq1w2e3r4/kern.cu");

  // A herd of two names on a new program: one compile, each its own log.
  auto other = [&](const std::string& dir, const std::string& name) {
    v1::CompileRequest r = named(dir, name);
    r.set_source("#placeless #lognamed 2");
    return r;
  };
  v1::CompileResponse c, d;
  ASSERT_NO_FATAL_FAILURE(CallTogether(other("/home/ada/p", "a.cu"),
                                       other("/home/bob/q", "bb.cu"), &c, &d));
  EXPECT_EQ(c.log(), "/home/ada/p/a.cu(1): warning: fake, in /home/ada/p/a.cu");
  EXPECT_EQ(d.log(),
            "/home/bob/q/bb.cu(1): warning: fake, in /home/bob/q/bb.cu");
  EXPECT_EQ(compiler_.calls(), 2);
}

// CuPy's temporary programs: an object that shows the program's base name
// (internal symbols) and a log that names its whole path. Kept under the
// name, shared by every directory, the log written for each caller's path.
TEST_F(PlaceTest, ALogNamingThePathOfANamedAnswerIsWrittenForEachPlace) {
  auto named = [](const std::string& dir) {
    v1::CompileRequest r = From(dir, "#placeless #named #lognamed");
    r.set_program_name(dir + "/0f1e.cubin.cu");
    return r;
  };
  v1::CompileResponse a, b;
  ASSERT_TRUE(Call(named("/tmp/tmpaaaa"), &a).ok());
  EXPECT_TRUE(a.program_name_only());
  EXPECT_EQ(a.log(),
            "/tmp/tmpaaaa/0f1e.cubin.cu(1): warning: fake, in "
            "/tmp/tmpaaaa/0f1e.cubin.cu");
  ASSERT_TRUE(Call(named("/tmp/tmpbbbb"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT);
  EXPECT_EQ(b.object(), a.object());
  EXPECT_EQ(b.log(),
            "/tmp/tmpbbbb/0f1e.cubin.cu(1): warning: fake, in "
            "/tmp/tmpbbbb/0f1e.cubin.cu");
  EXPECT_EQ(compiler_.calls(), 1);
}

// After a verdict that kept a log template under the name's key, other
// programs run at that level without a proof: their logs are templates
// too, so a third directory under a second name gets its own path, and a
// herd of one base name from two directories each its own.
TEST_F(PlaceTest, LogsUnderTheNamesKeyAreWrittenForEachCallerWhoeverRanThem) {
  auto named = [](const std::string& dir, const std::string& name) {
    v1::CompileRequest r = From(dir, "#placeless #named #lognamed");
    r.set_program_name(dir + "/" + name);
    return r;
  };
  auto log_of = [](const std::string& path) {
    return absl::StrCat(path, "(1): warning: fake, in ", path);
  };
  v1::CompileResponse a, b, c;
  ASSERT_TRUE(Call(named("/tmp/tmpaaaa", "a.cu"), &a).ok());
  ASSERT_TRUE(a.program_name_only());
  ASSERT_TRUE(Call(named("/tmp/tmpbbbb", "b.cu"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_MISS);
  EXPECT_EQ(b.log(), log_of("/tmp/tmpbbbb/b.cu"));
  ASSERT_TRUE(Call(named("/tmp/tmpcccc", "b.cu"), &c).ok());
  EXPECT_EQ(c.served(), v1::SERVED_HIT);
  EXPECT_EQ(c.object(), b.object());
  EXPECT_EQ(c.log(), log_of("/tmp/tmpcccc/b.cu"));

  v1::CompileResponse d, e;
  ASSERT_NO_FATAL_FAILURE(CallTogether(named("/tmp/tmpdddd", "d.cu"),
                                       named("/tmp/tmpeeee", "d.cu"), &d, &e));
  EXPECT_EQ(d.log(), log_of("/tmp/tmpdddd/d.cu"));
  EXPECT_EQ(e.log(), log_of("/tmp/tmpeeee/d.cu"));
  EXPECT_EQ(e.object(), d.object());
  EXPECT_EQ(compiler_.calls(), 3) << "a.cu, b.cu and d.cu once each";
}

// The same under the working directory's key: CuPy's temporary programs
// from one directory, after a verdict made in another.
TEST_F(PlaceTest, LogsUnderTheWorkingDirectorysKeyAreWrittenForEachCaller) {
  auto from = [](const std::string& cwd, const std::string& temp) {
    v1::CompileRequest r = Request("k #lognamed");
    r.set_working_directory(cwd);
    r.set_program_name(temp + "/kern.cu");
    return r;
  };
  v1::CompileResponse a, b, c;
  ASSERT_TRUE(Call(from("/home/ada/job", "/tmp/tmpaaaa"), &a).ok());
  ASSERT_TRUE(a.working_directory_only());
  ASSERT_TRUE(Call(from("/home/bob/job", "/tmp/tmpbbbb"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_MISS);
  ASSERT_TRUE(Call(from("/home/bob/job", "/tmp/tmpcccc"), &c).ok());
  EXPECT_EQ(c.served(), v1::SERVED_HIT);
  EXPECT_EQ(c.object(), b.object());
  EXPECT_EQ(c.log(),
            "/tmp/tmpcccc/kern.cu(1): warning: fake, in "
            "/tmp/tmpcccc/kern.cu");
}

// Herds from many places of a compile every place shares: one compile.
TEST_F(PlaceTest, AHerdFromManyPlacesOfASharedAnswerCompilesOnce) {
  compiler_.Hold();
  constexpr int kCallers = 8;
  std::vector<v1::CompileResponse> responses(kCallers);
  std::vector<grpc::Status> statuses(kCallers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      statuses[i] =
          Call(From(absl::StrCat("/tmp/tmp", i), "#placeless"), &responses[i]);
    });
  }
  while (Stats().waiting() < kCallers) absl::SleepFor(absl::Milliseconds(2));
  compiler_.Release();
  for (auto& t : threads) t.join();
  for (int i = 0; i < kCallers; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(responses[i].object(), responses[0].object());
  }
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(compiler_.elsewhere_calls(), 1);
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// CuPy names each program after a fresh temporary directory: an answer
// that depends on the working directory but not on the program's
// directory (the fake shows the working directory only) is shared by every
// such program asked from that directory, and by no other directory.
TEST_F(PlaceTest, AnAnswerThatDependsOnTheWorkingDirectoryAloneIsSharedThere) {
  auto from = [](const std::string& cwd, const std::string& temp) {
    v1::CompileRequest r = Request("k");
    r.set_working_directory(cwd);
    r.set_program_name(temp + "/kern.cu");
    return r;
  };
  v1::CompileResponse a, b, c;
  ASSERT_TRUE(Call(from("/home/ada/job", "/tmp/tmpaaaa"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_TRUE(a.place_matters());
  EXPECT_TRUE(a.working_directory_only());
  EXPECT_EQ(compiler_.elsewhere_calls(), 3)
      << "every proof ran: under another name, under the same, and in the "
         "same working directory";

  ASSERT_TRUE(Call(from("/home/ada/job", "/tmp/tmpbbbb"), &b).ok());
  EXPECT_EQ(b.served(), v1::SERVED_HIT) << "another temporary directory";
  EXPECT_EQ(b.object(), a.object());

  ASSERT_TRUE(Call(from("/home/bob/job", "/tmp/tmpcccc"), &c).ok());
  EXPECT_EQ(c.served(), v1::SERVED_MISS) << "another working directory";
  EXPECT_THAT(c.object(), HasSubstr("cwd=/home/bob/job"));
  EXPECT_EQ(compiler_.calls(), 2);
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// A proof that could not run proves nothing: the answer is kept for its
// place alone, and found there next time without compiling again.
TEST_F(PlaceTest, AnAnswerWhoseProofFailedIsKeptAndFoundForItsPlace) {
  v1::CompileResponse first, again, other;
  ASSERT_TRUE(Call(From("/home/ada/p", "#infra-elsewhere"), &first).ok());
  EXPECT_EQ(first.served(), v1::SERVED_MISS);
  EXPECT_TRUE(first.place_matters());
  ASSERT_TRUE(Call(From("/home/ada/p", "#infra-elsewhere"), &again).ok());
  EXPECT_EQ(again.served(), v1::SERVED_HIT);
  EXPECT_EQ(again.object(), first.object());
  EXPECT_EQ(compiler_.calls(), 1);
  // Another place proves again (and its proof fails again).
  ASSERT_TRUE(Call(From("/home/bob/p", "#infra-elsewhere"), &other).ok());
  EXPECT_EQ(other.served(), v1::SERVED_MISS);
  EXPECT_THAT(other.object(), HasSubstr("cwd=/home/bob/p"));
  EXPECT_EQ(compiler_.elsewhere_calls(), 2);
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

TEST_F(PlaceTest, TimesForAnEmptySetOfFilesAreRefused) {
  v1::CompileRequest r = Request("k");
  r.set_includes_resolved(true);
  r.set_included_set_sha256(std::string(IncludedSetDigest({}).AsBytes()));
  r.add_included_mtimes_ns(5);
  v1::CompileResponse response;
  grpc::Status status = Call(r, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("empty set"));
  EXPECT_EQ(compiler_.calls(), 0);
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

// A miss whose proof is still running when its own compile ends: the
// leader is answered at once, under its place's key, and the proof decides
// later where the answer lives for everyone else.
class EarlyAnswerTest : public PlaceTest {
 protected:
  static v1::CompileRequest Eager(const std::string& dir,
                                  const std::string& source) {
    v1::CompileRequest r = From(dir, source);
    r.set_wait_for_proof(false);
    return r;
  }
  void AwaitWaiting(uint64_t n) {
    for (int i = 0; i < 30'000 && Stats().waiting() < n; ++i) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    ASSERT_GE(Stats().waiting(), n) << "no one waits for the proof";
  }
  // The leader's call, which must end while the proof is held: a test
  // that waited for the proof would never end.
  grpc::Status CallBeforeProof(const v1::CompileRequest& request,
                               v1::CompileResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    return stub_->Compile(&context, request, response);
  }
  std::optional<v1::ActionRecord> Kept(const std::string& hex_key) {
    auto record = store_->GetAction(*Digest::FromHex(hex_key));
    EXPECT_TRUE(record.ok());
    return record.ok() ? *record : std::nullopt;
  }
};

TEST_F(EarlyAnswerTest, TheLeaderIsAnsweredBeforeItsProofAndTheRestAfter) {
  compiler_.HoldElsewhere();
  v1::CompileResponse a, same_place, other_place, waited, later;
  // Returns while the proof is held.
  ASSERT_TRUE(CallBeforeProof(Eager("/home/ada/p", "#placeless"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_TRUE(a.proof_pending());
  EXPECT_TRUE(a.place_matters()) << "kept for its place meanwhile";
  EXPECT_THAT(a.object(), HasSubstr("[P:k.h]int h;"));
  EXPECT_EQ(Stats().place_answered_before_proof(), 1u);
  EXPECT_EQ(Stats().place_proofs_running(), 1u);
  EXPECT_EQ(Stats().place_shared() + Stats().place_kept(), 0u);
  ASSERT_TRUE(Kept(a.cache_key()).has_value());

  // The same place meanwhile: a hit from its place's key.
  ASSERT_TRUE(Call(Eager("/home/ada/p", "#placeless"), &same_place).ok());
  EXPECT_EQ(same_place.served(), v1::SERVED_HIT);
  EXPECT_EQ(same_place.cache_key(), a.cache_key());
  EXPECT_EQ(same_place.object(), a.object());

  // Another place, and a caller that waits for the final key: both wait
  // for the proof, and nothing compiles again.
  std::thread other([&] {
    EXPECT_TRUE(
        Call(Eager("/tmp/tmpq1w2e3r4", "#placeless"), &other_place).ok());
  });
  AwaitWaiting(1);
  std::thread waiter([&] {
    EXPECT_TRUE(Call(From("/home/ada/p", "#placeless"), &waited).ok());
  });
  AwaitWaiting(2);
  EXPECT_EQ(compiler_.calls(), 1);
  compiler_.ReleaseElsewhere();
  other.join();
  waiter.join();
  EXPECT_EQ(other_place.served(), v1::SERVED_JOINED);
  EXPECT_FALSE(other_place.place_matters());
  EXPECT_FALSE(other_place.proof_pending());
  EXPECT_EQ(other_place.object(), a.object());
  EXPECT_NE(other_place.cache_key(), a.cache_key());
  EXPECT_EQ(waited.served(), v1::SERVED_JOINED);
  EXPECT_EQ(waited.cache_key(), other_place.cache_key());
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(compiler_.elsewhere_calls(), 1);
  EXPECT_EQ(Stats().place_shared(), 1u);
  // The gauge falls once the verdict is kept, just after the answers.
  for (int i = 0; i < 10'000 && Stats().place_proofs_running() != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(Stats().place_proofs_running(), 0u);

  // Once proven, the place-free key answers; the place's copy is gone.
  ASSERT_TRUE(Call(Eager("/home/ada/p", "#placeless"), &later).ok());
  EXPECT_EQ(later.served(), v1::SERVED_HIT);
  EXPECT_EQ(later.cache_key(), other_place.cache_key());
  EXPECT_FALSE(later.proof_pending());
  EXPECT_FALSE(Kept(a.cache_key()).has_value());
}

// A compile that failed for a missing file is answered but never kept
// (ACompileThatMissedAFileIsAnsweredButNotCached): not early either.
TEST_F(EarlyAnswerTest, AnAnswerNeverKeptIsNotKeptEarly) {
  compiler_.HoldElsewhere();
  v1::CompileResponse first, again;
  grpc::Status status;
  std::thread leader(
      [&] { status = Call(Eager("/home/ada/p", "#missing"), &first); });
  while (compiler_.elsewhere_calls() < 1) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  compiler_.ReleaseElsewhere();
  leader.join();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(first.outcome(), v1::OUTCOME_COMPILE_ERROR);
  EXPECT_EQ(Stats().place_answered_before_proof(), 0u);
  ASSERT_TRUE(Call(Eager("/home/ada/p", "#missing"), &again).ok());
  EXPECT_EQ(again.served(), v1::SERVED_MISS);
  EXPECT_EQ(compiler_.calls(), 2);
}

TEST_F(EarlyAnswerTest, AnAnswerTheProofKeepsForItsPlaceStaysThere) {
  compiler_.HoldElsewhere();
  v1::CompileResponse a, b, again;
  ASSERT_TRUE(CallBeforeProof(Eager("/home/ada/p", "k #stamped"), &a).ok());
  EXPECT_EQ(a.served(), v1::SERVED_MISS);
  EXPECT_TRUE(a.proof_pending());
  EXPECT_THAT(a.object(), HasSubstr("cwd=/home/ada/p"));
  std::thread other(
      [&] { EXPECT_TRUE(Call(Eager("/home/bob/p", "k #stamped"), &b).ok()); });
  AwaitWaiting(1);
  compiler_.ReleaseElsewhere();
  other.join();
  // The other place's caller is compiled in its own place.
  EXPECT_EQ(b.served(), v1::SERVED_MISS);
  EXPECT_THAT(b.object(), HasSubstr("cwd=/home/bob/p"));
  EXPECT_EQ(Stats().place_kept(), 1u);
  ASSERT_TRUE(Call(Eager("/home/ada/p", "k #stamped"), &again).ok());
  EXPECT_EQ(again.served(), v1::SERVED_HIT);
  EXPECT_EQ(again.cache_key(), a.cache_key()) << "the place's key, for good";
  EXPECT_EQ(again.object(), a.object());
  EXPECT_FALSE(again.proof_pending());
  EXPECT_EQ(compiler_.calls(), 3)
      << "each place's compile, and the first one's proof with other times";
}

// The doors only translate: the same request answered by the gRPC door and
// by the framed socket's door gives the same CompileResponse for a hit, and
// the same code and message for a refusal (a FramedRefusal is what the gRPC
// status says), for each kind a door takes.
TEST_F(ServiceTest, BothDoorsGiveTheSameAnswers) {
  const v1::CompileRequest request = Request("both doors");
  v1::CompileResponse built;
  ASSERT_TRUE(Call(request, &built).ok());
  const PeerCredentials peer{.uid = getuid(), .gid = getgid(), .pid = 1};
  const std::string payload =
      std::string(1, framed_protocol::kCompile) + request.SerializeAsString();

  // A hit.
  v1::CompileResponse by_grpc;
  ASSERT_TRUE(Call(request, &by_grpc).ok());
  KeptConnection::Reply framed = service_->framed_door().Answer(payload, peer);
  ASSERT_NE(framed.now, nullptr);
  EXPECT_FALSE(framed.refused);
  EXPECT_EQ(framed.later, nullptr) << "a hit is answered now";
  v1::CompileResponse by_framed;
  ASSERT_TRUE(by_framed.ParseFromString(*framed.now));
  EXPECT_EQ(by_framed.served(), v1::SERVED_HIT);
  EXPECT_EQ(by_framed.SerializeAsString(), by_grpc.SerializeAsString());

  // A refusal: the request's own fault, in the same words.
  v1::CompileRequest bad = request;
  bad.set_source(std::string(2000, 'x'));  // past max_source_bytes
  v1::CompileResponse unused;
  const grpc::Status refused_grpc = Call(bad, &unused);
  ASSERT_FALSE(refused_grpc.ok());
  framed = service_->framed_door().Answer(
      std::string(1, framed_protocol::kCompile) + bad.SerializeAsString(),
      peer);
  ASSERT_TRUE(framed.refused);
  ASSERT_NE(framed.now, nullptr);
  v1::FramedRefusal refusal;
  ASSERT_TRUE(refusal.ParseFromString(*framed.now));
  EXPECT_EQ(refusal.code(), static_cast<int>(refused_grpc.error_code()));
  EXPECT_EQ(refusal.message(), refused_grpc.error_message());

  // A link: a hit on both doors (as called, the framed door's one kind of
  // link), the same bytes.
  v1::LinkRequest link;
  link.add_options("-arch=sm_90");
  link.set_target(v1::TARGET_CUBIN);
  link.set_as_called(true);
  for (const char* bytes : {"unit a", "unit b"}) {
    v1::LinkInput* in = link.add_inputs();
    in->set_kind(v1::OBJECT_KIND_LTOIR);
    in->set_data(bytes);
  }
  v1::CompileResponse linked, link_by_grpc;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Link(&context, link, &linked).ok());
  }
  // The link's proof (under other names) decides its key in the
  // background: both doors ask once it has.
  while (Stats().place_proofs_running() > 0) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Link(&context, link, &link_by_grpc).ok());
  }
  framed = service_->framed_door().Answer(
      std::string(1, framed_protocol::kLink) + link.SerializeAsString(), peer);
  ASSERT_NE(framed.now, nullptr);
  ASSERT_FALSE(framed.refused);
  v1::CompileResponse link_by_framed;
  ASSERT_TRUE(link_by_framed.ParseFromString(*framed.now));
  EXPECT_EQ(link_by_grpc.served(), v1::SERVED_HIT);
  EXPECT_EQ(link_by_framed.SerializeAsString(),
            link_by_grpc.SerializeAsString());
}

}  // namespace
}  // namespace jitcache
