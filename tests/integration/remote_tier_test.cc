// The cluster tier: real daemons, each with its own store, sharing a real
// redis-server (Debian's) on a private Unix socket that the tests start,
// kill and tamper with.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "server/remote/redis_tier.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/kernels.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::ProcessResult;

std::string Kernel(int n, int unroll = 1) {
  return kernels::UnrolledKernel(n, unroll);
}

// A node's counters, through the client library.
DaemonStats Stats(const std::string& socket) {
  absl::StatusOr<Client> client = Client::Connect({.socket_path = socket});
  absl::StatusOr<DaemonStats> stats =
      client.ok() ? client->Stats() : client.status();
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : DaemonStats{};
}

class RemoteTier : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available()) {
      GTEST_SKIP() << "redis-server and redis-cli are not installed (Debian: "
                      "redis-server); deploy/install-deps.sh installs them";
    }
    redis_ = std::make_unique<testing::RedisServer>(dir_.Sub("redis.sock"));
    ASSERT_TRUE(redis_->Start().ok());
  }

  testing::DaemonProcess& Node(const std::string& name,
                               std::vector<std::string> flags = {}) {
    flags.push_back("--remote=" + redis_->url());
    nodes_.push_back(std::make_unique<testing::DaemonProcess>(
        dir_.Sub(name + ".sock"), dir_.Sub(name + ".store"), flags));
    EXPECT_TRUE(nodes_.back()->Start().ok()) << nodes_.back()->Log();
    return *nodes_.back();
  }

  // `jitcache compile` of `source` on `node`: its first output line. The
  // program is always named kernel.cu (the name is part of the key).
  std::string Compile(const testing::DaemonProcess& node,
                      const std::string& source, const std::string& out) {
    std::filesystem::create_directories(dir_.Sub(out));
    const std::string path = dir_.Sub(out + "/kernel.cu");
    testing::WriteFile(path, source);
    ProcessResult r = testing::RunProcess(
        {"/usr/bin/env", "JITCACHE_NO_FALLBACK=1", testing::CliBinary(),
         "--socket", node.socket(), "compile", path, "--arch", "sm_90",
         "--target", "cubin", "-o", dir_.Sub(out + ".cubin")});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find('\n'));
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::RedisServer> redis_;
  std::vector<std::unique_ptr<testing::DaemonProcess>> nodes_;
};

TEST_F(RemoteTier, AnotherNodesCompileIsARemoteHitThenALocalHit) {
  auto& a = Node("a");
  auto& b = Node("b");
  const std::string first = Compile(a, Kernel(1), "a1");
  EXPECT_TRUE(absl::StartsWith(first, "MISS key")) << first;
  // Published in the background, after A's requester had its answer.
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(a.socket()).remote_bytes_up > 0; }));
  const std::string remote = Compile(b, Kernel(1), "b1");
  EXPECT_TRUE(absl::StartsWith(remote, "MISS (remote) key")) << remote;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a1.cubin")),
            testing::ReadFile(dir_.Sub("b1.cubin")));
  const std::string local = Compile(b, Kernel(1), "b2");
  EXPECT_TRUE(absl::StartsWith(local, "HIT key")) << local;
  DaemonStats stats = Stats(b.socket());
  EXPECT_EQ(stats.compiles, 0u);
  EXPECT_EQ(stats.remote_hits, 1u);
  EXPECT_EQ(stats.store_entries, 1u);
  EXPECT_GT(stats.remote_bytes_down, 3000u);
  // The lease was let go once the result was published.
  EXPECT_EQ(redis_->Cli({"KEYS", "jitcache:v1:lease:*"}), "\n");
}

TEST_F(RemoteTier, FourNodesWithEightProcessesEachCompileTenKernelsOnce) {
  std::vector<testing::DaemonProcess*> nodes;
  for (int n = 0; n < 4; ++n) nodes.push_back(&Node(absl::StrCat("n", n)));
  std::string manifest;
  for (int k = 0; k < 10; ++k) {
    const std::string path = dir_.Sub(absl::StrCat("k", k, ".cu"));
    testing::WriteFile(path, Kernel(100 + k, 500));
    absl::StrAppend(&manifest, path, " --arch sm_90 --target cubin\n");
  }
  testing::WriteFile(dir_.Sub("manifest"), manifest);
  // All 32 processes start at once, cold.
  std::vector<pid_t> clients;
  for (int n = 0; n < 4; ++n) {
    for (int p = 0; p < 8; ++p) {
      clients.push_back(testing::SpawnProcess(
          {.argv = {testing::CliBinary() + "-full", "--socket",
                    nodes[n]->socket(), "precompile", dir_.Sub("manifest")},
           .env = {"JITCACHE_NO_FALLBACK=1"},
           .output_path = dir_.Sub(absl::StrCat("client", n, "_", p))}));
    }
  }
  for (size_t i = 0; i < clients.size(); ++i) {
    EXPECT_EQ(testing::WaitProcess(clients[i], absl::Minutes(10)), 0)
        << testing::ReadFile(
               dir_.Sub(absl::StrCat("client", i / 8, "_", i % 8)));
  }
  double compiles = 0, remote_hits = 0, waited = 0;
  for (auto* node : nodes) {
    DaemonStats stats = Stats(node->socket());
    compiles += stats.compiles;
    remote_hits += stats.remote_hits;
    waited += stats.remote_leases_waited;
    EXPECT_EQ(stats.store_entries, 10u);
  }
  std::printf(
      "%.0f compiles in the cluster, %.0f remote hits, %.0f waits on "
      "another node's lease\n",
      compiles, remote_hits, waited);
  EXPECT_EQ(compiles, 10);
  EXPECT_EQ(remote_hits, 30);
}

TEST_F(RemoteTier, RedisKilledUnderLoadFailsNoRequestAndIsUsedAgain) {
  auto& node = Node("a");
  std::vector<pid_t> clients;
  for (int p = 0; p < 4; ++p) {
    clients.push_back(testing::SpawnProcess(
        {.argv = {JITCACHE_LOAD_CLIENT_BINARY, node.socket(), absl::StrCat(p),
                  "3000", "600"},
         .env = {"JITCACHE_NO_FALLBACK=1"},
         .output_path = dir_.Sub(absl::StrCat("load", p))}));
  }
  absl::SleepFor(absl::Seconds(1));
  redis_->Kill();
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(testing::WaitProcess(clients[p], absl::Minutes(10)), 0);
    const std::string out =
        testing::ReadFile(dir_.Sub(absl::StrCat("load", p)));
    EXPECT_TRUE(absl::StrContains(out, " unexpected=0 ")) << out;
    EXPECT_TRUE(absl::StrContains(out, "sent=3000")) << out;
  }
  DaemonStats down = Stats(node.socket());
  EXPECT_GT(down.remote_errors, 0u);
  EXPECT_TRUE(absl::StrContains(node.Log(), "remote tier unusable"))
      << node.Log();

  // Back: after the backoff, new results reach Redis again.
  ASSERT_TRUE(redis_->Start().ok());
  int n = 0;
  EXPECT_TRUE(testing::WaitFor([&] {
    Compile(node, Kernel(5000 + n), absl::StrCat("again", n));
    ++n;
    return redis_->Cli({"DBSIZE"}) != "0\n";
  }));
  EXPECT_TRUE(absl::StrContains(node.Log(), "remote tier: connected again"));
}

TEST_F(RemoteTier, ATamperedValueIsNeverServedAndIsReplaced) {
  auto& a = Node("a");
  auto& b = Node("b");
  auto& c = Node("c");
  const std::string first = Compile(a, Kernel(7), "a");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(a.socket()).remote_bytes_up > 0; }));
  const std::string key = first.substr(first.find("key ") + 4, 64);
  const std::string name = "jitcache:v1:entry:" + key;
  // One changed byte inside the object; the length stays.
  const std::string length = redis_->Cli({"STRLEN", name});
  EXPECT_EQ(redis_->Cli({"SETRANGE", name, "2000", "X"}), length);

  const std::string second = Compile(b, Kernel(7), "b");
  EXPECT_TRUE(absl::StartsWith(second, "MISS key")) << second;  // compiled
  DaemonStats stats = Stats(b.socket());
  EXPECT_EQ(stats.remote_corrupt, 1u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
  // B's good result replaced the damaged one: C gets it from Redis.
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(b.socket()).remote_bytes_up > 0; }));
  const std::string third = Compile(c, Kernel(7), "c");
  EXPECT_TRUE(absl::StartsWith(third, "MISS (remote)")) << third;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("c.cubin")));
}

TEST(RemoteValue, EveryDamageIsRefused) {
  const std::string payload(300, 'p');
  const std::string framed = FrameRemoteValue(payload);
  EXPECT_EQ(UnframeRemoteValue(framed), payload);
  for (size_t i = 0; i < framed.size(); ++i) {
    std::string bad = framed;
    bad[i] ^= 0x20;
    EXPECT_EQ(UnframeRemoteValue(bad), std::nullopt) << "byte " << i;
  }
  for (size_t n = 0; n < framed.size(); ++n) {
    EXPECT_EQ(UnframeRemoteValue(framed.substr(0, n)), std::nullopt) << n;
  }
  EXPECT_EQ(UnframeRemoteValue(framed + "x"), std::nullopt);
}

}  // namespace
}  // namespace jitcache
