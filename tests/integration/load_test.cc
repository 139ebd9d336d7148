// 10,000 requests from 16 client processes against one daemon on a local
// socket: bounded in count and in time, loopback only.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kProcesses = 16;
constexpr int kRequestsEach = 625;  // 10,000 in all
constexpr int kMaxSeconds = 240;

TEST(Load, TenThousandMixedRequestsLeaveASoundStore) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"),
                                {"--workers=2", "--max_queued=4"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto client = Client::Connect({.socket_path = dir.Sub("s.sock")});
  for (int i = 0; i < 8; ++i) {  // the warm kernels the load hits
    auto warm = client->Compile(
        Program(absl::StrCat("extern \"C\" __global__ void warm", i,
                             "(int* x) { x[0] = ", i, "; }"),
                "load.cu"),
        {}, CodeType::kPtx);
    ASSERT_TRUE(warm.ok()) << warm.status() << daemon.Log();
    ASSERT_TRUE(warm->compiled) << warm->log;
  }

  std::vector<testing::ProcessResult> results(kProcesses);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int p = 0; p < kProcesses; ++p) {
    threads.emplace_back([&, p] {
      results[p] = testing::RunProcess(
          {JITCACHE_LOAD_CLIENT_BINARY, dir.Sub("s.sock"), std::to_string(p),
           std::to_string(kRequestsEach), std::to_string(kMaxSeconds)},
          absl::Seconds(kMaxSeconds + 60));
    });
  }
  for (auto& t : threads) t.join();
  const absl::Duration elapsed = absl::Now() - start;

  std::map<std::string, int> total;
  for (const auto& r : results) {
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string line(absl::StripAsciiWhitespace(
        absl::string_view(r.output).substr(r.output.rfind("ok="))));
    for (absl::string_view field : absl::StrSplit(line, ' ')) {
      std::vector<std::string> kv = absl::StrSplit(field, '=');
      ASSERT_EQ(kv.size(), 2u) << r.output;
      int n = 0;
      ASSERT_TRUE(absl::SimpleAtoi(kv[1], &n)) << r.output;
      total[kv[0]] += n;
    }
    EXPECT_THAT(r.output, HasSubstr("unexpected=0")) << r.output;
  }
  std::cout << "load: " << total["sent"] << " requests in " << elapsed
            << ": ok " << total["ok"] << ", compile_error "
            << total["compile_error"] << ", resource_exhausted "
            << total["resource_exhausted"] << ", invalid_argument "
            << total["invalid_argument"] << "\n";
  EXPECT_EQ(total["sent"], kProcesses * kRequestsEach);
  EXPECT_EQ(total["unexpected"], 0);
  EXPECT_EQ(total["ok"] + total["compile_error"] + total["resource_exhausted"] +
                total["invalid_argument"],
            total["sent"]);
  // The load client's mix, by i % 20: 0-13 hit, 14 new key, 15 broken,
  // 16-19 bad request.
  int hits = 0, broken = 0, bad = 0;
  for (int i = 0; i < kRequestsEach; ++i) {
    const int kind = i % 20;
    hits += kind < 14;
    broken += kind == 15;
    bad += kind >= 16;
  }
  EXPECT_EQ(total["invalid_argument"], kProcesses * bad);
  // A broken program's first compile may find the queue full.
  EXPECT_LE(total["compile_error"], kProcesses * broken);
  EXPECT_GE(total["compile_error"] + total["resource_exhausted"],
            kProcesses * broken);
  EXPECT_GT(total["compile_error"], 0);
  EXPECT_GE(total["ok"], kProcesses * hits);

  ASSERT_TRUE(client->Ping().ok()) << "daemon died under load";
  auto stats = client->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->requests, static_cast<uint64_t>(total["sent"] + 8));
  const absl::Time stop_start = absl::Now();
  EXPECT_EQ(daemon.Stop(), 0);
  std::cout << "daemon stopped in " << absl::Now() - stop_start << "\n";

  auto verify = testing::RunProcess(
      {testing::DaemonBinary(), "--verify", "--store=" + dir.Sub("store")});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output,
              HasSubstr("0 bad objects, 0 bad records, 0 records "
                        "with a missing object"));
  std::cout << verify.output;
}

// A daemon restarted on its own (no service manager holding its socket)
// while client processes that have reached it go on asking: their blocking
// compiles wait for the next daemon within their deadline, with no local
// fallback to hide a failure; no request is lost.
TEST(Load, StandAloneRestartsFailNoRequestOfAClientThatReachedTheDaemon) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"),
                                {"--workers=2"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  constexpr int kClients = 2;
  std::vector<pid_t> clients;
  for (int p = 0; p < kClients; ++p) {
    clients.push_back(testing::SpawnProcess(
        {.argv = {JITCACHE_LOAD_CLIENT_BINARY, dir.Sub("s.sock"),
                  std::to_string(100 + p), "100000", "12"},
         .env = {"JITCACHE_NO_FALLBACK=1"},
         .output_path = dir.Sub(absl::StrCat("client", p))}));
  }
  for (int restart = 0; restart < 3; ++restart) {
    absl::SleepFor(absl::Seconds(2));
    ASSERT_EQ(daemon.Stop(), 0);
    ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  }
  for (int p = 0; p < kClients; ++p) {
    EXPECT_EQ(testing::WaitProcess(clients[p], absl::Minutes(2)), 0);
    const std::string out =
        testing::ReadFile(dir.Sub(absl::StrCat("client", p)));
    EXPECT_THAT(out, HasSubstr("unexpected=0")) << out;
    EXPECT_THAT(out, Not(HasSubstr("sent=0 "))) << out;
  }
}

// The same for asynchronous compiles: a call refused while the daemon
// restarts is asked again from the client's poller, within its deadline.
TEST(Load, AsyncCompilesRideThroughStandAloneRestarts) {
  testing::TempDir dir;
  testing::DaemonProcess daemon(dir.Sub("s.sock"), dir.Sub("store"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  absl::StatusOr<Client> client = Client::Connect(
      {.socket_path = dir.Sub("s.sock"), .local_fallback = false});
  ASSERT_TRUE(client.ok());
  const Program program(
      "extern \"C\" __global__ void ride(int* x) "
      "{ x[0] = 7; }",
      "ride.cu");
  ASSERT_TRUE(client->Compile(program, {}, CodeType::kPtx).ok());
  std::atomic<bool> restarting{true};
  std::thread restarts([&] {
    for (int i = 0; i < 3; ++i) {
      absl::SleepFor(absl::Seconds(1));
      EXPECT_EQ(daemon.Stop(), 0);
      EXPECT_TRUE(daemon.Start().ok()) << daemon.Log();
    }
    restarting = false;
  });
  int answered = 0, failed = 0;
  std::string first_failure;
  while (restarting.load()) {
    std::vector<AsyncResult<ObjectCode>> batch;
    for (int i = 0; i < 16; ++i) {
      batch.push_back(client->CompileAsync(program, {}, CodeType::kPtx));
    }
    for (auto& handle : batch) {
      ASSERT_TRUE(handle.wait(absl::Minutes(1)));
      if (handle.get().ok()) {
        ++answered;
      } else if (failed++ == 0) {
        first_failure = handle.get().status().ToString();
      }
    }
  }
  restarts.join();
  EXPECT_EQ(failed, 0) << first_failure;
  EXPECT_GT(answered, 0);
}

}  // namespace
}  // namespace jitcache
