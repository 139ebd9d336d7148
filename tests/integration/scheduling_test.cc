// Single flight, the compile-time limit and request limits against the real
// daemon and NVRTC, with separate client processes.
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/kernels.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

// CUB block radix sort in four instantiations: a few seconds of NVRTC.
const std::vector<std::string> kHeavyNames = {
    "block_sort<128, 4>", "block_sort<256, 4>", "block_sort<128, 8>",
    "block_sort<256, 8>"};

// 54 instantiations over six types: about 4 s of NVRTC here, well past a
// 1 s limit.

constexpr char kSmall[] = "extern \"C\" __global__ void k(int* x) { *x = 1; }";

std::vector<std::string> HeavyCliArgs(const testing::TempDir& dir) {
  std::ofstream(dir.Sub("heavy.cu")) << kernels::kBlockSort;
  std::vector<std::string> argv = {testing::CliBinary(),
                                   "--socket",
                                   dir.Sub("s.sock"),
                                   "compile",
                                   dir.Sub("heavy.cu"),
                                   "--arch",
                                   "sm_90",
                                   "--target",
                                   "cubin"};
  for (const auto& name : kHeavyNames) {
    argv.push_back("--name-expression");
    argv.push_back(name);
  }
  return argv;
}

TEST(Scheduling, ThirtyTwoProcessesGetOneCompile) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  constexpr int kProcesses = 32;
  std::vector<std::string> argv = HeavyCliArgs(dir);
  std::vector<testing::ProcessResult> results(kProcesses);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      std::vector<std::string> mine = argv;
      mine.push_back("-o");
      mine.push_back(dir.Sub("out" + std::to_string(i) + ".cubin"));
      results[i] = testing::RunProcess(mine);
    });
  }
  for (auto& t : threads) t.join();
  const absl::Duration fan_in = absl::Now() - start;

  // One compile answered them all: the others joined it, or (those that
  // came after it ended, while its place proof ran) hit its answer.
  int missed = 0, joined = 0, hit = 0;
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << r.output;
    missed += r.output.rfind("MISS ", 0) == 0;
    joined += r.output.rfind("JOINED ", 0) == 0;
    hit += r.output.rfind("HIT ", 0) == 0;
  }
  auto client = Client::Connect({.socket_path = dir.Sub("s.sock")});
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->compiles, 1u);
  EXPECT_EQ(stats->misses, 1u);
  EXPECT_EQ(stats->joins + stats->hits, static_cast<uint64_t>(kProcesses - 1));
  EXPECT_EQ(missed, 1);
  EXPECT_EQ(joined + hit, kProcesses - 1);
  // Reported, not asserted: timing goals live in bench/.
  const double ratio =
      absl::ToDoubleSeconds(fan_in) / stats->compile_seconds_spent;
  std::cout << "fan-in of " << kProcesses << " processes: " << fan_in
            << " wall, one compile " << stats->compile_seconds_spent
            << " s, ratio " << ratio << "\n";
  ::testing::Test::RecordProperty("fan_in_ratio", std::to_string(ratio));
}

TEST(Scheduling, CompileTimeLimitCancelsAndTheDaemonGoesOn) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(
      dir.Sub("s.sock"), dir.Sub("store"),
      {"--compile_time_limit_seconds=1", "--log_level=debug"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect({.socket_path = dir.Sub("s.sock")});
  ProgramOptions heavy;
  heavy.arch = "sm_90";
  heavy.name_expressions = kernels::TypedSortNames();
  for (int attempt = 0; attempt < 2; ++attempt) {  // never cached
    const absl::Time start = absl::Now();
    auto code = client->Compile(Program(kernels::kTypedSort, "heavy.cu"), heavy,
                                CodeType::kCubin);
    ASSERT_FALSE(code.ok())
        << "compiled=" << code->compiled
        << " served=" << ServedName(code->served) << " log=" << code->log;
    EXPECT_EQ(code.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_THAT(std::string(code.status().message()),
                HasSubstr("compile-time limit"));
    EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  }
  ProgramOptions small;
  auto ok = client->Compile(Program(kSmall), small, CodeType::kPtx);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->compiled);
  // Its answer may have come before its proof ended (under its place's
  // key); the proof then keeps it under its final key and drops that copy,
  // two writes a count taken between them sees both of.
  EXPECT_TRUE(testing::ProofsSettled(daemon.socket()));
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->rejected.at("deadline_exceeded"), 2u);
  EXPECT_EQ(stats->store_entries, 1u) << daemon.Log();  // the small kernel
}

TEST(Scheduling, ShutdownCancelsRunningAndQueuedCompilesCleanly) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"),
                                {"--workers=1"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  // The daemon's answer is what this test checks, not the local fallback.
  auto client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ProgramOptions heavy;
  heavy.arch = "sm_90";
  heavy.name_expressions = kernels::TypedSortNames();
  std::vector<absl::Status> statuses(2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {  // one runs, one queues behind it
    threads.emplace_back([&, i] {
      statuses[i] =
          client
              ->Compile(Program(absl::StrCat(kernels::kTypedSort, "// ", i),
                                "heavy.cu"),
                        heavy, CodeType::kCubin)
              .status();
    });
  }
  while (true) {
    auto stats = client->Stats();
    ASSERT_TRUE(stats.ok());
    if (stats->running == 1 && stats->queued == 1) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  const absl::Time stop = absl::Now();
  EXPECT_EQ(daemon.Stop(), 0);
  for (auto& t : threads) t.join();
  // Both were cancelled, not finished: UNAVAILABLE and nothing stored. How
  // long it took is the benchmarks' business (a loaded CI machine is slow).
  std::cout << "stop took " << (absl::Now() - stop) << "\n";
  for (const absl::Status& s : statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  }
  auto verify = testing::RunProcess(
      {testing::DaemonBinary(), "--verify", "--store=" + dir.Sub("store")});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr(": 0 objects, 0 records"));
}

TEST(Scheduling, RequestLimitsNameTheFieldAndTheLimit) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(
      dir.Sub("s.sock"), dir.Sub("store"),
      {"--max_options=4", "--max_headers=2", "--max_name_expressions=2",
       "--max_source_bytes=1000", "--max_request_bytes=65536"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect({.socket_path = dir.Sub("s.sock")});
  struct Case {
    std::string what;
    Program program;
    ProgramOptions options;
    absl::StatusCode code;
    std::string needle;
  };
  ProgramOptions many_options;
  many_options.extra_options = {"-lineinfo", "-DA", "-DB", "-DC", "-DD"};
  ProgramOptions many_names;
  many_names.name_expressions = {"a", "b", "c"};
  Program many_headers(kSmall);
  many_headers.AddHeader("a.h", "").AddHeader("b.h", "").AddHeader("c.h", "");
  Program big_header(kSmall);
  big_header.AddHeader("big.h", std::string(70000, ' '));
  ProgramOptions pch;
  pch.extra_options = {"--pch-dir=/tmp/pch"};
  ProgramOptions timing;
  timing.extra_options = {"-time=/tmp/t.csv"};
  const std::vector<Case> cases = {
      {"options", Program(kSmall), many_options,
       absl::StatusCode::kInvalidArgument, "5 options, over the limit of 4"},
      {"name expressions", Program(kSmall), many_names,
       absl::StatusCode::kInvalidArgument,
       "3 name expressions, over the limit of 2"},
      {"headers",
       many_headers,
       {},
       absl::StatusCode::kInvalidArgument,
       "3 headers, over the limit of 2"},
      {"source",
       Program(std::string(1001, ' ')),
       {},
       absl::StatusCode::kInvalidArgument,
       "over the limit of 1000 bytes"},
      {"request size",
       big_header,
       {},
       absl::StatusCode::kResourceExhausted,
       "65536"},
      {"pch", Program(kSmall), pch, absl::StatusCode::kInvalidArgument,
       "refused: precompiled headers"},
      {"time", Program(kSmall), timing, absl::StatusCode::kInvalidArgument,
       "refused: it writes a timing file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto code = client->Compile(c.program, c.options, CodeType::kPtx);
    ASSERT_FALSE(code.ok());
    EXPECT_EQ(code.status().code(), c.code) << code.status();
    EXPECT_THAT(std::string(code.status().message()), HasSubstr(c.needle));
  }
  auto ok = client->Compile(Program(kSmall), {}, CodeType::kPtx);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->compiled);
}

}  // namespace
}  // namespace jitcache
