// One bad program must not take the daemon down: compiles run in worker
// processes that crash, hang and run out of memory on cue
// (tests/testing/fault_worker.cc: the real worker plus faults), against a
// real daemon, with real NVRTC for everything else.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

// The build's helpers, unless the environment names copies elsewhere (a
// bundle run on another machine).
std::string Helper(const char* env, const char* built) {
  const char* path = std::getenv(env);
  return path != nullptr && *path != '\0' ? path : built;
}

std::string Kernel(int n) {
  return absl::StrCat("extern \"C\" __global__ void k", n,
                      "(int* x) { x[0] = ", n, "; }\n");
}

ProgramOptions Sm90() {
  ProgramOptions options;
  options.arch = "sm_90";
  return options;
}

// The compile workers the daemon has now (its children).
std::vector<pid_t> Workers(pid_t daemon) {
  std::vector<pid_t> pids;
  for (const auto& task : std::filesystem::directory_iterator(
           absl::StrCat("/proc/", daemon, "/task"))) {
    for (absl::string_view word :
         absl::StrSplit(testing::ReadFile(task.path().string() + "/children"),
                        ' ', absl::SkipEmpty())) {
      pid_t pid = 0;
      if (absl::SimpleAtoi(word, &pid)) pids.push_back(pid);
    }
  }
  return pids;
}

class Isolation : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    flags.push_back("--worker_binary=" +
                    Helper("JITCACHE_FAULT_WORKER", JITCACHE_FAULT_WORKER));
    // These tests count workers and crashes of one compile at a time; the
    // place proof (the same compile elsewhere, in a second worker) would
    // double them. cross_place_test runs the proofs.
    flags.push_back("--place_proofs=false");
    daemon_ = std::make_unique<testing::DaemonProcess>(
        dir_.Sub("jc.sock"), dir_.Sub("store"), flags);
    ASSERT_TRUE(daemon_->Start().ok()) << daemon_->Log();
    ClientOptions options;
    options.socket_path = daemon_->socket();
    options.local_fallback = false;
    options.compile_deadline = absl::Minutes(5);
    client_ = std::make_unique<Client>(*Client::Connect(options));
  }

  // Settled on return (its place proof ended): the tests count entries.
  absl::StatusOr<ObjectCode> Compile(const std::string& source) {
    ProgramOptions options = Sm90();
    options.wait_for_proof = true;
    return client_->Compile(Program(source, "isolation.cu"), options,
                            CodeType::kPtx);
  }

  DaemonStats Stats() { return *client_->Stats(); }

  testing::TempDir dir_;
  std::unique_ptr<testing::DaemonProcess> daemon_;
  std::unique_ptr<Client> client_;
};

// Where compile workers cannot compile at all (here a "worker" that exits at
// once; in the field, a kernel that refuses the namespaces of a compile's
// view), the daemon says so and does not start, rather than failing every
// miss.
TEST_F(Isolation, ADaemonWhoseWorkersCannotCompileSaysWhyAndDoesNotStart) {
  testing::DaemonProcess daemon(dir_.Sub("jc.sock"), dir_.Sub("store"),
                                {"--worker_binary=/bin/false"});
  EXPECT_FALSE(daemon.Start().ok());
  EXPECT_TRUE(
      absl::StrContains(daemon.Log(), "a compile worker cannot compile"))
      << daemon.Log();
  EXPECT_TRUE(absl::StrContains(daemon.Log(), "user and mount namespace"));
}

// A worker killed while it waits for work (by an operator, the OOM killer)
// is replaced before a job is handed to it: the next miss never sees it.
TEST_F(Isolation, AWorkerKilledWhileIdleIsReplacedUnseen) {
  Start({"--workers=1"});
  ASSERT_TRUE(Compile(Kernel(40)).ok());
  for (int round = 0; round < 3; ++round) {
    const std::vector<pid_t> idle = Workers(daemon_->pid());
    ASSERT_EQ(idle.size(), 1u);
    ASSERT_EQ(kill(idle[0], SIGKILL), 0);
    // Dead (a zombie of the daemon's) before the next job comes.
    ASSERT_TRUE(testing::WaitFor([&] {
      const std::string stat =
          testing::ReadFile(absl::StrCat("/proc/", idle[0], "/stat"));
      return stat.empty() || absl::StrContains(stat, ") Z ");
    }));
    absl::StatusOr<ObjectCode> code = Compile(Kernel(41 + round));
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_TRUE(code->compiled);
  }
  DaemonStats stats = Stats();
  EXPECT_EQ(stats.compiler_crashes, 0u);
  EXPECT_EQ(stats.rejected["internal"], 0u);
}

TEST_F(Isolation, ACrashAnswersEveryWaiterIsNotCachedAndIsTriedAgain) {
  Start({"--workers=1"});
  const pid_t daemon = daemon_->pid();
  const std::string crash = "// JITCACHE_FAULT_CRASH\n" + Kernel(1);
  std::vector<absl::StatusOr<ObjectCode>> answers(4, absl::UnknownError(""));
  std::vector<std::thread> waiters;
  for (auto& answer : answers) {
    waiters.emplace_back([&] { answer = Compile(crash); });
  }
  for (std::thread& t : waiters) t.join();
  for (const auto& answer : answers) {
    EXPECT_EQ(answer.status().code(), absl::StatusCode::kInternal);
    EXPECT_EQ(answer.status().message(),
              "the compiler crashed (SIGSEGV) on this program");
  }
  // Not cached: the next request compiles (and crashes) again.
  EXPECT_EQ(Compile(crash).status().code(), absl::StatusCode::kInternal);
  DaemonStats stats = Stats();
  EXPECT_GE(stats.compiler_crashes, 2u);
  EXPECT_LE(stats.compiler_crashes, 5u);  // the 4 waiters may share one
  EXPECT_EQ(stats.store_entries, 0u);
  EXPECT_EQ(stats.rejected["internal"], 5u);
  // A new worker compiles the next program; the daemon is the same process.
  absl::StatusOr<ObjectCode> fine = Compile(Kernel(2));
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_TRUE(fine->compiled);
  EXPECT_EQ(daemon_->pid(), daemon);
  EXPECT_EQ(kill(daemon, 0), 0);
  EXPECT_EQ(Stats().store_entries, 1u);
}

TEST_F(Isolation, AHangIsKilledAtTheTimeLimitAndTheWorkerReplaced) {
  Start({"--workers=1", "--compile_time_limit_seconds=2"});
  ASSERT_TRUE(Compile(Kernel(3)).ok());
  const std::vector<pid_t> before = Workers(daemon_->pid());
  ASSERT_EQ(before.size(), 1u);
  const absl::Time start = absl::Now();
  absl::StatusOr<ObjectCode> hung =
      Compile("// JITCACHE_FAULT_HANG\n" + Kernel(4));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(
      hung.status().message(), "ran past the daemon's compile-time limit (2s)"))
      << hung.status();
  EXPECT_GE(took, absl::Seconds(2));
  EXPECT_LT(took, absl::Minutes(1));
  // The hung worker is gone, not left running.
  EXPECT_NE(kill(before[0], 0), 0);
  EXPECT_EQ(Stats().compiler_time_limited, 1u);
  absl::StatusOr<ObjectCode> after = Compile(Kernel(5));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(Stats().store_entries, 2u);
}

// A compiler that ends the process itself, without an answer (libNVVM's
// `-Xopt -help` prints and calls exit(0)), is noticed when its process
// ends, not at the compile-time limit: every waiter is answered INTERNAL
// at once, nothing is kept, it is counted, and the one worker is free for
// the next miss, which a queued unrelated miss shows.
TEST_F(Isolation, ACompilerThatExitsIsAnsweredAtOnceAndFreesItsWorker) {
  // The limit a hang would wait out: far longer than any answer here.
  Start({"--workers=1", "--compile_time_limit_seconds=300"});
  ASSERT_TRUE(Compile(Kernel(20)).ok());
  const std::vector<pid_t> before = Workers(daemon_->pid());
  ASSERT_EQ(before.size(), 1u);
  const std::string exits = "// JITCACHE_FAULT_EXIT\n" + Kernel(21);
  absl::StatusOr<ObjectCode> first = absl::UnknownError("");
  absl::StatusOr<ObjectCode> unrelated = absl::UnknownError("");
  const absl::Time start = absl::Now();
  std::thread asker([&] { first = Compile(exits); });
  // Queued behind it on the one worker.
  std::thread other([&] { unrelated = Compile(Kernel(22)); });
  asker.join();
  other.join();
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(first.status().code(), absl::StatusCode::kInternal)
      << first.status();
  EXPECT_EQ(first.status().message(),
            "the compiler ended its process (exit status 0) without an answer");
  ASSERT_TRUE(unrelated.ok()) << unrelated.status();
  EXPECT_TRUE(unrelated->compiled);
  // Far inside the limit (a hang would have taken 300 s): loose, for slow
  // machines.
  EXPECT_LT(took, absl::Seconds(150));
  // Never kept: asked again, it runs (and ends) again.
  EXPECT_EQ(Compile(exits).status().code(), absl::StatusCode::kInternal);
  const DaemonStats stats = Stats();
  EXPECT_EQ(stats.compiler_exits, 2u);
  EXPECT_EQ(stats.compiler_crashes, 0u);
  EXPECT_EQ(stats.compiler_time_limited, 0u);
  EXPECT_EQ(stats.store_entries, 2u);
  // The same worker served all of it: a compile that exits costs its
  // job's child, not the worker.
  EXPECT_EQ(Workers(daemon_->pid()), before);
  EXPECT_EQ(stats.compile_workers_started, 1u);
}

TEST_F(Isolation, ALinkPastTheTimeLimitIsKilled) {
  Start({"--workers=1", "--compile_time_limit_seconds=2"});
  ProgramOptions rdc = Sm90();
  rdc.relocatable_device_code = true;
  auto a = client_->Compile(
      Program("extern \"C\" __device__ int f(int x) { return x + 1; }", "a.cu"),
      rdc, CodeType::kLtoir);
  auto b = client_->Compile(
      Program("extern \"C\" __device__ int f(int);\n"
              "extern \"C\" __global__ void g(int* p) { p[0] = f(p[0]); }",
              "b.cu"),
      rdc, CodeType::kLtoir);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<Client::LinkInput> inputs = {
      {CodeType::kLtoir, "a.ltoir", "", a->bytes},
      {CodeType::kLtoir, "b.ltoir", "", b->bytes}};
  std::vector<std::string> options = {"-arch=sm_90", "-lto",
                                      "-kernels-used=JITCACHE_FAULT_HANG"};
  const absl::Time start = absl::Now();
  absl::StatusOr<ObjectCode> linked =
      client_->Link(inputs, options, CodeType::kCubin);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(linked.status().code(), absl::StatusCode::kDeadlineExceeded)
      << linked.status();
  EXPECT_TRUE(absl::StartsWith(linked.status().message(), "link killed after"))
      << linked.status();
  EXPECT_GE(took, absl::Seconds(2));
  EXPECT_LT(took, absl::Minutes(1));
  // The same link without the cue links.
  options.pop_back();
  absl::StatusOr<ObjectCode> fine =
      client_->Link(inputs, options, CodeType::kCubin);
  EXPECT_TRUE(fine.ok() && fine->compiled) << fine.status();
}

TEST_F(Isolation, UnboundedAllocationIsResourceExhaustedNamingTheLimit) {
  Start({"--workers=1", "--compile_memory_limit=2G"});
  absl::StatusOr<ObjectCode> greedy =
      Compile("// JITCACHE_FAULT_ALLOC\n" + Kernel(6));
  EXPECT_EQ(greedy.status().code(), absl::StatusCode::kResourceExhausted)
      << greedy.status();
  EXPECT_EQ(greedy.status().message(),
            "the compile needed more memory than --compile_memory_limit "
            "(2.0 GiB) allows");
  DaemonStats stats = Stats();
  EXPECT_EQ(stats.compiler_memory_limited, 1u);
  EXPECT_EQ(stats.compiler_crashes, 0u);
  EXPECT_EQ(stats.rejected["queue_full"], 1u);  // RESOURCE_EXHAUSTED's name
  // Real compiles fit under the same limit.
  absl::StatusOr<ObjectCode> fine = Compile(Kernel(7));
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_TRUE(fine->compiled);
}

TEST_F(Isolation, AWorkerCannotExecOpenSocketsOrTrace) {
  Start({"--workers=1"});
  absl::StatusOr<ObjectCode> escape =
      Compile("// JITCACHE_FAULT_ESCAPE\n" + Kernel(8));
  ASSERT_TRUE(escape.ok()) << escape.status();
  EXPECT_EQ(escape->log,
            "exec: Operation not permitted\n"
            "socket: Operation not permitted\n"
            "ptrace: Operation not permitted\n");
}

TEST_F(Isolation, AHundredCrashesAmongTenThousandHitsFromSixteenProcesses) {
  Start();
  const pid_t daemon = daemon_->pid();
  // Kernel 0 of the load client's crash mix, with its options.
  absl::StatusOr<ObjectCode> warm = client_->Compile(
      Program("extern \"C\" __global__ void warm0(int* x) { x[0] = 0; }",
              "load.cu"),
      ProgramOptions{}, CodeType::kPtx);
  ASSERT_TRUE(warm.ok() && warm->compiled) << warm.status();

  constexpr int kProcesses = 16;
  std::vector<pid_t> clients;
  for (int p = 0; p < kProcesses; ++p) {
    clients.push_back(testing::SpawnProcess(
        {.argv = {Helper("JITCACHE_LOAD_CLIENT_BINARY",
                         JITCACHE_LOAD_CLIENT_BINARY),
                  daemon_->socket(), absl::StrCat(p), "632", "600", "crash"},
         .output_path = dir_.Sub(absl::StrCat("client", p))}));
  }
  int hits = 0, crashed = 0, unexpected = 0;
  for (int p = 0; p < kProcesses; ++p) {
    EXPECT_EQ(testing::WaitProcess(clients[p], absl::Minutes(10)), 0);
    const std::string out =
        testing::ReadFile(dir_.Sub(absl::StrCat("client", p)));
    int h = 0, c = 0, u = 0;
    const size_t at = out.find("hits=");
    ASSERT_NE(at, std::string::npos) << out;
    ASSERT_EQ(std::sscanf(out.c_str() + at, "hits=%d crashed=%d unexpected=%d",
                          &h, &c, &u),
              3)
        << out;
    hits += h;
    crashed += c;
    unexpected += u;
    EXPECT_EQ(u, 0) << out;
  }
  std::printf(
      "%d hits, %d crashes, %d unexpected answers; %lu crashes "
      "counted\n",
      hits, crashed, unexpected,
      static_cast<unsigned long>(Stats().compiler_crashes));
  EXPECT_EQ(hits, 10000);
  EXPECT_EQ(crashed, 16 * 7);
  EXPECT_EQ(unexpected, 0);
  EXPECT_EQ(Stats().compiler_crashes, 16u * 7);
  EXPECT_EQ(daemon_->pid(), daemon);
  EXPECT_EQ(kill(daemon, 0), 0);
}

TEST_F(Isolation, ShutdownKillsRunningWorkersAndAnswersPromptly) {
  Start({"--workers=1"});
  absl::StatusOr<ObjectCode> answer = absl::UnknownError("");
  std::thread waiter(
      [&] { answer = Compile("// JITCACHE_FAULT_HANG\n" + Kernel(9)); });
  std::vector<pid_t> workers;
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (workers.empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
    workers = Workers(daemon_->pid());
  }
  ASSERT_EQ(workers.size(), 1u);
  absl::SleepFor(absl::Milliseconds(300));  // the job is in the worker
  EXPECT_EQ(daemon_->Stop(), 0);
  waiter.join();
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable)
      << answer.status();
  EXPECT_NE(kill(workers[0], 0), 0) << "the worker outlived the daemon";
}

}  // namespace
}  // namespace jitcache
