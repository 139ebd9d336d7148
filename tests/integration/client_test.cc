// The client library against the real daemon, without a GPU: asynchronous
// handles, batch precompile, the in-process fallback.
#include "jitcache/client.h"

#include <nvrtc.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/library.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

std::string Kernel(int i) {
  return absl::StrCat("extern \"C\" __global__ void k", i,
                      "(int* x) { x[threadIdx.x] += ", i, "; }");
}

using ClientTest = testing::DaemonFixture;

// What the real NVRTC makes of `source` named `name` with `options`: its
// OptiX IR, or "" when it did not compile.
std::string RealOptixIr(const std::string& source, const char* name,
                        const std::vector<const char*>& options) {
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, source.c_str(), name, 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    return "";
  }
  std::string out;
  size_t size = 0;
  if (nvrtcCompileProgram(prog, static_cast<int>(options.size()),
                          options.data()) == NVRTC_SUCCESS &&
      nvrtcGetOptiXIRSize(prog, &size) == NVRTC_SUCCESS) {
    out.resize(size);
    if (nvrtcGetOptiXIR(prog, out.data()) != NVRTC_SUCCESS) out.clear();
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

// OptiX IR through the API: the real NVRTC's bytes for the same program
// and options (the client adds -optix-ir), a hit the second time, and the
// same bytes compiled in the process when the daemon is away. The CUDA
// driver cannot load it, and says so.
TEST_F(ClientTest, OptixIrIsTheRealNvrtcsAndIsCached) {
  const std::string source = Kernel(7);
  const std::string real =
      RealOptixIr(source, "k7.cu", {"-arch=sm_90", "-optix-ir"});
  ASSERT_FALSE(real.empty());
  ProgramOptions options;
  options.arch = "sm_90";
  auto first =
      client_->Compile(Program(source, "k7.cu"), options, CodeType::kOptixIr);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->compiled) << first->log;
  EXPECT_EQ(first->served, Served::kMiss);
  EXPECT_TRUE(first->bytes == real)
      << first->bytes.size() << " bytes, not " << real.size();
  auto second =
      client_->Compile(Program(source, "k7.cu"), options, CodeType::kOptixIr);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->served, Served::kHit);
  EXPECT_TRUE(second->bytes == real);
  auto offline = Client::Connect({.socket_path = dir_.Sub("nobody.sock")});
  auto local =
      offline->Compile(Program(source, "k7.cu"), options, CodeType::kOptixIr);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->served, Served::kLocal);
  EXPECT_TRUE(local->bytes == real);
  auto library = second->Load();
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(library.status().message()), HasSubstr("OptiX"));
}

TEST_F(ClientTest, HundredAsyncCompilesFromOneThread) {
  constexpr int kCalls = 100;
  std::vector<AsyncResult<ObjectCode>> handles;
  for (int i = 0; i < kCalls; ++i) {
    handles.push_back(
        client_->CompileAsync(Program(Kernel(i), "k.cu"), {}, CodeType::kPtx));
  }
  // Right after issuing, the compiles cannot all be done: is_complete
  // answers without waiting for them.
  int pending = 0;
  absl::Duration slowest;
  const absl::Time poll_start = absl::Now();
  for (const auto& h : handles) {
    const absl::Time t = absl::Now();
    pending += !h.is_complete();
    slowest = std::max(slowest, absl::Now() - t);
  }
  const absl::Duration all_polls = absl::Now() - poll_start;
  EXPECT_GT(pending, 0);
  std::cout << "is_complete() over " << kCalls << " handles: " << all_polls
            << " in all, slowest " << slowest << "; " << pending
            << " pending\n";
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(handles[i].wait(absl::Minutes(2)));
    const absl::StatusOr<ObjectCode>& code = handles[i].get();
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_TRUE(code->compiled);
    EXPECT_THAT(code->bytes, HasSubstr(absl::StrCat(".entry k", i)));
    EXPECT_TRUE(handles[i].is_complete());
  }
  EXPECT_EQ(client_->Stats()->compiles, static_cast<uint64_t>(kCalls));
}

// ProgramOptions::include_path outside the toolkit: the headers go to the
// daemon by content, blocking or asynchronous, and a changed one misses.
// NVRTC takes and gives bytes, not UTF-8: a Latin-1 source echoed in the
// log, a name and an option that are not UTF-8 travel as they are (they
// failed to parse as protobuf strings: an RPC error instead of the
// answer).
TEST_F(ClientTest, NamesOptionsAndLogsNeedNotBeUtf8) {
  ProgramOptions options;
  options.arch = "sm_90";
  options.extra_options = {"-DLABEL=\"caf\xe9\""};
  const std::string bad = "__global__ void k(int* x) { x[0] = caf\xe9; }\n";
  absl::StatusOr<ObjectCode> error =
      client_->Compile(Program(bad, "n\xe9.cu"), options, CodeType::kPtx);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_FALSE(error->compiled);
  EXPECT_THAT(error->log, HasSubstr("caf\xe9"));
  EXPECT_THAT(error->log, HasSubstr("n\xe9.cu"));
  absl::StatusOr<ObjectCode> fine = client_->Compile(
      Program("__device__ const char* label = LABEL;\n"
              "__global__ void k(const char** x) { x[0] = label; }\n",
              "n\xe9.cu"),
      options, CodeType::kPtx);
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_TRUE(fine->compiled) << fine->log;
}

TEST_F(ClientTest, IncludePathOutsideTheToolkitIsKeyedByTheFilesIncluded) {
  std::filesystem::create_directories(dir_.Sub("inc/sub"));
  testing::WriteFile(dir_.Sub("inc/sub/value.h"), "#define VALUE 7\n");
  testing::WriteFile(dir_.Sub("inc/other.h"), "#error not included\n");
  const Program program(
      "#include <sub/value.h>\n"
      "extern \"C\" __global__ void k(int* x) { *x = VALUE; }\n",
      "k.cu");
  ProgramOptions options;
  options.include_path = {dir_.Sub("inc")};

  absl::StatusOr<ObjectCode> miss =
      client_->Compile(program, options, CodeType::kPtx);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_TRUE(miss->compiled) << miss->log;
  EXPECT_EQ(miss->served, Served::kMiss);
  EXPECT_THAT(miss->bytes, HasSubstr(", 7;"));

  AsyncResult<ObjectCode> async =
      client_->CompileAsync(program, options, CodeType::kPtx);
  ASSERT_TRUE(async.wait(absl::Minutes(2)));
  ASSERT_TRUE(async.get().ok()) << async.get().status();
  EXPECT_EQ(async.get()->served, Served::kHit);
  EXPECT_EQ(async.get()->bytes, miss->bytes);

  testing::WriteFile(dir_.Sub("inc/sub/value.h"), "#define VALUE 8\n");
  absl::StatusOr<ObjectCode> changed =
      client_->Compile(program, options, CodeType::kPtx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed->served, Served::kMiss);
  EXPECT_THAT(changed->bytes, HasSubstr(", 8;"));
}

// By default the daemon adds the toolkit's include directories, as nvcc
// would; toolkit_include_dirs = false searches only what is named, as NVRTC
// does (the NVRTC library asks for that), and is another key.
TEST_F(ClientTest, ExactIncludePathSearchesOnlyTheDirectoriesNamed) {
  const Program program(
      "#include <cuda/std/cstdint>\n"
      "extern \"C\" __global__ void k(cuda::std::uint32_t* x) { *x = 1; }\n",
      "k.cu");
  absl::StatusOr<ObjectCode> added =
      client_->Compile(program, {}, CodeType::kPtx);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(added->compiled) << added->log;

  ProgramOptions exact;
  exact.toolkit_include_dirs = false;
  absl::StatusOr<ObjectCode> alone =
      client_->Compile(program, exact, CodeType::kPtx);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_FALSE(alone->compiled);
  EXPECT_EQ(alone->served, Served::kMiss);
  EXPECT_THAT(alone->log, HasSubstr("cuda/std/cstdint"));

  const char* cuda = std::getenv("CUDA_HOME");
  exact.include_path = {
      std::string(cuda != nullptr ? cuda : "/usr/local/cuda") +
      "/include/cccl"};
  absl::StatusOr<ObjectCode> named =
      client_->Compile(program, exact, CodeType::kPtx);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_TRUE(named->compiled) << named->log;
}

TEST_F(ClientTest, PrecompileAManifestOfTwentyKernelsForTwoArchs) {
  std::ofstream manifest(dir_.Sub("module.manifest"));
  manifest << "# twenty kernels, two architectures each\n";
  for (int i = 0; i < 20; ++i) {
    std::ofstream(dir_.Sub(absl::StrCat("k", i, ".cu"))) << Kernel(i);
    manifest << "k" << i << ".cu --target cubin --arch sm_80,sm_90\n";
  }
  manifest.close();
  auto result =
      testing::RunProcess({testing::CliBinary(), "--socket", dir_.Sub("s.sock"),
                           "precompile", dir_.Sub("module.manifest")});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output,
              HasSubstr("40 compiled, 0 compile errors, 0 failed"));
  EXPECT_THAT(result.output, HasSubstr("] 40/40"));
  EXPECT_EQ(client_->Stats()->compiles, 40u);
  // Everything is in the store now: the same manifest is all hits.
  auto again =
      testing::RunProcess({testing::CliBinary(), "--socket", dir_.Sub("s.sock"),
                           "precompile", dir_.Sub("module.manifest")});
  EXPECT_EQ(client_->Stats()->hits, 40u);
  EXPECT_EQ(again.exit_code, 0);
}

TEST_F(ClientTest, PrecompileApiReportsEachItem) {
  std::vector<Client::PrecompileItem> items;
  items.push_back(
      {Program(Kernel(1), "a.cu"), {}, CodeType::kCubin, {"sm_80", "sm_90"}});
  items.push_back(
      {Program("__global__ void broken( {", "b.cu"), {}, CodeType::kPtx, {}});
  size_t calls = 0;
  auto outcomes = client_->Precompile(items, [&](size_t done, size_t total) {
    ++calls;
    EXPECT_LE(done, total);
  });
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(outcomes[0].arch, "sm_80");
  EXPECT_EQ(outcomes[1].arch, "sm_90");
  ASSERT_TRUE(outcomes[0].code.ok() && outcomes[1].code.ok());
  EXPECT_TRUE(outcomes[0].code->compiled);
  EXPECT_NE(outcomes[0].code->bytes, outcomes[1].code->bytes);
  ASSERT_TRUE(outcomes[2].code.ok());
  EXPECT_FALSE(outcomes[2].code->compiled);
}

// A precompile whose programs the daemon has answers them all in one round
// trip on the framed socket, with what the compiles gave.
TEST_F(ClientTest, APrecompileOfCachedProgramsIsOneBatchOfHits) {
  std::vector<Client::PrecompileItem> items;
  for (int i = 0; i < 12; ++i) {
    items.push_back({Program(Kernel(i), absl::StrCat("k", i, ".cu")),
                     {},
                     CodeType::kCubin,
                     {"sm_80", "sm_90"}});
  }
  items.push_back(
      {Program("__global__ void broken( {", "b.cu"), {}, CodeType::kPtx, {}});
  const auto compiled = client_->Precompile(items);
  ASSERT_EQ(compiled.size(), 25u);
  const DaemonStats before = *client_->Stats();
  size_t progress_calls = 0;
  const auto again =
      client_->Precompile(items, [&](size_t, size_t) { ++progress_calls; });
  const DaemonStats after = *client_->Stats();
  ASSERT_EQ(again.size(), compiled.size());
  for (size_t i = 0; i < again.size(); ++i) {
    ASSERT_TRUE(compiled[i].code.ok() && again[i].code.ok()) << i;
    EXPECT_EQ(again[i].item, compiled[i].item);
    EXPECT_EQ(again[i].arch, compiled[i].arch);
    EXPECT_EQ(again[i].code->served, Served::kHit) << i;
    EXPECT_EQ(again[i].code->compiled, compiled[i].code->compiled) << i;
    EXPECT_EQ(again[i].code->bytes, compiled[i].code->bytes) << i;
    EXPECT_EQ(again[i].code->log, compiled[i].code->log) << i;
    EXPECT_EQ(again[i].code->cache_key, compiled[i].code->cache_key) << i;
  }
  EXPECT_FALSE(again.back().code->compiled);  // the error, cached as such
  EXPECT_EQ(progress_calls, 25u);
  EXPECT_EQ(after.socket_batches, before.socket_batches + 1);
  EXPECT_EQ(after.socket_hits, before.socket_hits + 25);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.requests, before.requests + 25);
}

// Whether this process maps a memory file, as a sealed answer is.
bool MapsAMemoryFile() {
  return testing::ReadFile("/proc/self/maps").find("/memfd:") !=
         std::string::npos;
}

// A hit at least --shared_answer_size large is the daemon's sealed answer
// file, mapped: the object is not copied, its bytes are the miss's, copies
// of it share the mapping, and the mapping goes with the last of them.
// Smaller hits are copied as before.
TEST(ClientSharedHits, LargeHitsAreTheDaemonsSealedFileMappedNotCopied) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("jc.sock"),
                                ":memory:", {"--shared_answer_size=4K"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect({.socket_path = daemon.socket()});
  ASSERT_TRUE(client.ok());
  ProgramOptions options;
  options.arch = "sm_90";
  options.name_expressions = {"block_sort<128, 4>"};
  const Program large(kernels::kBlockSort, "sort.cu");  // a cubin over 4K
  auto miss = client->Compile(large, options, CodeType::kCubin);
  ASSERT_TRUE(miss.ok()) << miss.status();
  ASSERT_GT(miss->bytes.size(), 4096u);
  EXPECT_FALSE(miss->bytes.shared());
  ASSERT_FALSE(MapsAMemoryFile());
  std::optional<ObjectCode> copy;
  {
    auto hit = client->Compile(large, options, CodeType::kCubin);
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_EQ(hit->served, Served::kHit);
    EXPECT_TRUE(hit->bytes.shared());
    EXPECT_TRUE(hit->bytes == miss->bytes);
    EXPECT_EQ(hit->cache_key, miss->cache_key);
    EXPECT_EQ(hit->object_digest, miss->object_digest);
    EXPECT_EQ(hit->symbol_mapping, miss->symbol_mapping);
    EXPECT_EQ(hit->log, miss->log);
    EXPECT_TRUE(hit->compiled);
    EXPECT_TRUE(MapsAMemoryFile());
    copy = *hit;
  }
  EXPECT_TRUE(copy->bytes.shared());
  EXPECT_TRUE(copy->bytes == miss->bytes) << "the copy outlives the hit";
  EXPECT_TRUE(MapsAMemoryFile());
  copy.reset();
  EXPECT_FALSE(MapsAMemoryFile()) << "unmapped with the last copy";

  // PTX, which callers hand on as a C string, is always the value's own.
  ASSERT_TRUE(client->Compile(large, options, CodeType::kPtx).ok());
  auto ptx = client->Compile(large, options, CodeType::kPtx);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_EQ(ptx->served, Served::kHit);
  ASSERT_GT(ptx->bytes.size(), 4096u);
  EXPECT_FALSE(ptx->bytes.shared());
  EXPECT_EQ(ptx->bytes.data()[ptx->bytes.size()], '\0');

  const Program small(Kernel(3), "small.cu");
  ASSERT_TRUE(client->Compile(small, {}, CodeType::kPtx).ok());
  auto small_hit = client->Compile(small, {}, CodeType::kPtx);  // ~1K
  ASSERT_TRUE(small_hit.ok()) << small_hit.status();
  EXPECT_EQ(small_hit->served, Served::kHit);
  EXPECT_LT(small_hit->bytes.size(), 4096u);
  EXPECT_FALSE(small_hit->bytes.shared());
  absl::StatusOr<DaemonStats> stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->shared_answers, 2u) << "the cubin's, and the PTX's";
}

// A process keeps at most 256 MiB of hits mapped (the daemon's memory
// holds their pages while it does): past that a hit is a copy, the same
// bytes; once the mapped ones are let go, hits are mapped again.
TEST(ClientSharedHits, AProcessMapsAtMostItsBudgetThenCopies) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("jc.sock"), ":memory:");
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect({.socket_path = daemon.socket()});
  ASSERT_TRUE(client.ok());
  ProgramOptions options;
  options.arch = "sm_90";
  // A ~4 MB cubin from a small source: the table is initialised data.
  const Program table(
      "__device__ unsigned char table[4000000] = {1};\n"
      "extern \"C\" __global__ void big(unsigned char* o, int i) {\n"
      "  o[0] = table[i];\n}\n",
      "table.cu");
  auto miss = client->Compile(table, options, CodeType::kCubin);
  ASSERT_TRUE(miss.ok()) << miss.status();
  ASSERT_TRUE(miss->compiled) << miss->log;
  const size_t size = miss->bytes.size();
  ASSERT_GT(size, size_t{3} << 20);

  constexpr uint64_t kBudget = uint64_t{256} << 20;
  std::vector<ObjectCode> held;
  bool copied = false;
  while (!copied && held.size() < 200) {
    auto hit = client->Compile(table, options, CodeType::kCubin);
    ASSERT_TRUE(hit.ok()) << hit.status();
    ASSERT_EQ(hit->served, Served::kHit);
    ASSERT_EQ(hit->bytes.view(), miss->bytes.view());
    copied = !hit->bytes.shared();
    held.push_back(*std::move(hit));
  }
  ASSERT_TRUE(copied) << held.size() << " hits of " << size
                      << " bytes were all mapped";
  // The mapped ones fit the budget, and one more would not have (each
  // mapping is the whole answer: the object and a few hundred bytes).
  const uint64_t mapped = held.size() - 1;
  EXPECT_LE(mapped * size, kBudget);
  EXPECT_GT((mapped + 1) * (size + 4096), kBudget);

  held.clear();
  auto again = client->Compile(table, options, CodeType::kCubin);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->bytes.shared()) << "the budget came back";
}

TEST_F(ClientTest, FallbackWithoutDaemonMakesTheDaemonsBytes) {
  Program program(kernels::kScaleWithHeader, "scale.cu");
  program.AddHeader("scale.h", "#define SCALE 3");
  ProgramOptions options;
  options.arch = "sm_90";
  options.name_expressions = {"scale<float, 64>", "scale<int, 8>"};
  options.extra_options = {"-DUNUSED=1", "-lineinfo"};
  for (CodeType target : {CodeType::kCubin, CodeType::kPtx, CodeType::kLtoir}) {
    auto from_daemon = client_->Compile(program, options, target);
    ASSERT_TRUE(from_daemon.ok()) << from_daemon.status();
    auto offline = Client::Connect({.socket_path = dir_.Sub("nobody.sock")});
    auto local = offline->Compile(program, options, target);
    ASSERT_TRUE(local.ok()) << local.status();
    EXPECT_EQ(local->served, Served::kLocal);
    EXPECT_TRUE(local->compiled) << local->log;
    EXPECT_EQ(local->bytes, from_daemon->bytes) << CodeTypeName(target);
    EXPECT_EQ(local->symbol_mapping, from_daemon->symbol_mapping);
    EXPECT_EQ(local->object_digest, from_daemon->object_digest);
  }
}

// Include directories of the program's own, compiled in the process when
// the daemon is away: the same bytes as the daemon's from the files it was
// sent, -lineinfo, __FILE__ and __LINE__ included.
TEST_F(ClientTest, FallbackReadsIncludeDirectoriesWithTheDaemonsBytes) {
  std::filesystem::create_directories(dir_.Sub("inc/sub"));
  testing::WriteFile(dir_.Sub("inc/sub/v.h"),
                     "#ifndef V_H\n#define V_H\n#define V 7\n"
                     "__device__ const char* v_file = __FILE__;\n"
                     "__device__ int v_line = __LINE__;\n#endif\n");
  const Program program(
      "#include <sub/v.h>\n"
      "extern \"C\" __global__ void k(int* x) { *x = V; }\n",
      "v.cu");
  ProgramOptions options;
  options.arch = "sm_90";
  options.include_path = {dir_.Sub("inc")};
  options.extra_options = {"-lineinfo"};
  absl::StatusOr<ObjectCode> from_daemon =
      client_->Compile(program, options, CodeType::kPtx);
  ASSERT_TRUE(from_daemon.ok()) << from_daemon.status();
  EXPECT_EQ(from_daemon->served, Served::kMiss);
  auto offline = Client::Connect({.socket_path = dir_.Sub("nobody.sock")});
  absl::StatusOr<ObjectCode> local =
      offline->Compile(program, options, CodeType::kPtx);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->served, Served::kLocal);
  EXPECT_EQ(local->bytes, from_daemon->bytes);
}

TEST_F(ClientTest, FallbackAlsoCoversADaemonThatStopped) {
  EXPECT_EQ(daemon_->Stop(), 0);
  auto code = client_->Compile(Program(Kernel(7)), {}, CodeType::kPtx);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(code->served, Served::kLocal);
  EXPECT_THAT(code->bytes, HasSubstr(".entry k7"));
}

TEST(ClientFallback, DisabledFallbackIsUnavailable) {
  testing::TempDir dir;
  auto client = Client::Connect(
      {.socket_path = dir.Sub("nobody.sock"), .local_fallback = false});
  auto code = client->Compile(Program(Kernel(1)), {}, CodeType::kPtx);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(code.status().message()), HasSubstr("nobody.sock"));
}

TEST(ClientFallback, EnvironmentTurnsTheFallbackOff) {
  testing::TempDir dir;
  setenv("JITCACHE_NO_FALLBACK", "1", 1);
  auto client = Client::Connect({.socket_path = dir.Sub("nobody.sock")});
  unsetenv("JITCACHE_NO_FALLBACK");
  auto code = client->Compile(Program(Kernel(1)), {}, CodeType::kPtx);
  EXPECT_EQ(code.status().code(), absl::StatusCode::kUnavailable);
}

TEST(ClientLoad, LtoIrMustBeLinkedFirst) {
  ObjectCode ltoir;
  ltoir.compiled = true;
  ltoir.code_type = CodeType::kLtoir;
  ltoir.bytes = "not loadable";
  auto library = ltoir.Load();
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("link it first"));
}

}  // namespace
}  // namespace jitcache
