// The service over an in-process channel, with a fake compiler and the
// in-memory store.
#include <grpcpp/grpcpp.h>

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "server/compile_pool.h"
#include "server/jitcache_service.h"
#include "server/verifying_store.h"
#include "tests/testing/fake_compiler.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryStore();
    pool_ = std::make_unique<CompilePool>(2, 16);
    ServiceOptions options;
    options.store = store_.get();
    options.compiler = &compiler_;
    options.pool = pool_.get();
    options.limits.max_source_bytes = 1000;
    service_ = std::make_unique<JitCacheService>(std::move(options));
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::JitCache::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    compiler_.Release();
    pool_->Shutdown();
    server_->Shutdown();
  }

  static v1::CompileRequest Request(const std::string& source) {
    v1::CompileRequest r;
    r.set_source(source);
    r.set_target(v1::TARGET_CUBIN);
    r.add_options("-arch=sm_90");
    r.add_name_expressions("k<int>");
    return r;
  }

  grpc::Status Call(const v1::CompileRequest& request,
                    v1::CompileResponse* response) {
    grpc::ClientContext context;
    return stub_->Compile(&context, request, response);
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

TEST_F(ServiceTest, EquivalentOptionSpellingsHit) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("kernel"), &first).ok());
  v1::CompileRequest other = Request("kernel");
  other.clear_options();
  other.add_options("--gpu-architecture");
  other.add_options("sm_90");
  ASSERT_TRUE(Call(other, &second).ok());
  EXPECT_EQ(second.served(), v1::SERVED_HIT);
  EXPECT_EQ(compiler_.calls(), 1);
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
  EXPECT_EQ(Call(Request(""), &response).error_code(),
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
  EXPECT_EQ(compiler_.calls(), 0);
  EXPECT_EQ(store_->Stats().actions, 0u);
}

TEST_F(ServiceTest, ConcurrentIdenticalRequestsCompileOnce) {
  compiler_.Hold();
  constexpr int kClients = 8;
  std::vector<v1::CompileResponse> responses(kClients);
  std::vector<grpc::Status> statuses(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back(
        [&, i] { statuses[i] = Call(Request("same"), &responses[i]); });
  }
  // Wait until the one compile is running, then give the rest time to join.
  while (compiler_.entered() == 0) absl::SleepFor(absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(200));
  compiler_.Release();
  for (auto& t : threads) t.join();
  int misses = 0, joined = 0, hits = 0;
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(responses[i].object(), responses[0].object());
    misses += responses[i].served() == v1::SERVED_MISS;
    joined += responses[i].served() == v1::SERVED_JOINED;
    hits += responses[i].served() == v1::SERVED_HIT;
  }
  EXPECT_EQ(compiler_.calls(), 1);
  EXPECT_EQ(misses, 1);
  EXPECT_EQ(joined + hits, kClients - 1);
}

TEST_F(ServiceTest, ObjectLostFromStoreIsRecompiled) {
  v1::CompileResponse first, second;
  ASSERT_TRUE(Call(Request("kernel"), &first).ok());
  const Digest digest = *Digest::FromHex(first.object_digest());
  const KvWrite erase{Column::kObjects, digest.AsBytes(), {}, true};
  ASSERT_TRUE(store_->backend().Write({&erase, 1}).ok());
  ASSERT_TRUE(Call(Request("kernel"), &second).ok());
  EXPECT_EQ(second.served(), v1::SERVED_MISS);
  EXPECT_EQ(second.object(), first.object());
  EXPECT_EQ(compiler_.calls(), 2);
}

}  // namespace
}  // namespace jitcache
