// The cluster tier: real daemons, each with its own store, sharing a real
// redis-server (Debian's) on a private Unix socket that the tests start,
// kill and tamper with.
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/digest.h"
#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "server/remote/redis_tier.h"
#include "server/remote/remote_keys.h"
#include "server/store/tiered_store.h"
#include "server/store/verifying_store.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/kernels.h"
#include "tests/testing/ptxas_process.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/team_tier.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::ProcessResult;

std::string Kernel(int n, int unroll = 1) {
  return kernels::UnrolledKernel(n, unroll);
}

// A node's counters.
DaemonStats Stats(const std::string& socket) {
  return testing::StatsOf(socket);
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
    key_file_ = KeyFile("team.keys", {kTeamKey});
  }

  // A key file of `keys` (hex), private to this user.
  std::string KeyFile(const std::string& name,
                      const std::vector<std::string>& keys) {
    const std::string path = dir_.Sub(name);
    testing::WriteFile(path, "# team keys\n" + absl::StrJoin(keys, "\n"));
    chmod(path.c_str(), 0600);
    return path;
  }

  // A node of the team; `key_file` replaces the team's key file.
  testing::DaemonProcess& Node(const std::string& name,
                               std::vector<std::string> flags = {},
                               const std::string& key_file = "") {
    flags.push_back("--remote=" + redis_->url());
    flags.push_back("--remote_key_file=" +
                    (key_file.empty() ? key_file_ : key_file));
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
    // The keys these tests read are the tier's: final ones, not a place's
    // while its proof runs.
    ProcessResult r = testing::RunProcess(
        {"/usr/bin/env", "JITCACHE_NO_FALLBACK=1", testing::CliBinary(),
         "--socket", node.socket(), "compile", path, "--arch", "sm_90",
         "--target", "cubin", "-o", dir_.Sub(out + ".cubin"),
         "--wait-for-proof"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find('\n'));
  }

  static constexpr char kTeamKey[] =
      "8f1c2e4a6b7d9e0f11223344556677889900aabbccddeeff0123456789abcdef";
  testing::TempDir dir_;
  std::unique_ptr<testing::RedisServer> redis_;
  std::string key_file_;
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
  EXPECT_EQ(redis_->Cli({"KEYS", "jitcache:v2:lease:*"}), "\n");
}

// jitcache-ptxas: what one node's ptxas ran, another serves from the
// team's tier without running ptxas, byte for byte what the real ptxas
// writes there: an answer that holds for any names (the assembled
// kernel), and one that holds for the names it shows (an error).
TEST_F(RemoteTier, APtxasRunOnOneNodeIsNoRunOnAnother) {
  constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "no ptxas in the toolkit";
  auto& a = Node("a");
  auto& b = Node("b");
  absl::StatusOr<Client> on_a = Client::Connect({.socket_path = a.socket()});
  ASSERT_TRUE(on_a.ok());
  ProgramOptions options;
  options.arch = "compute_90";
  absl::StatusOr<ObjectCode> ptx =
      on_a->Compile(Program(Kernel(7), "k.cu"), options, CodeType::kPtx);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  std::string bad = ptx->bytes;
  bad.insert(bad.find(".visible"), "this is no PTX;\n");
  std::filesystem::create_directories(dir_.Sub("bin"));
  std::filesystem::create_symlink(JITCACHE_PTXAS_BINARY, dir_.Sub("bin/ptxas"));
  struct Run {
    std::string ptx, file;
  };
  // `node` null: the real ptxas.
  auto run = [&](const testing::DaemonProcess* node, const Run& r,
                 const std::string& where) {
    const std::string dir = dir_.Sub(where);
    std::filesystem::create_directories(dir);
    testing::WriteFile(dir + "/" + r.file, r.ptx);
    const std::vector<std::string> arguments = {"-arch=sm_90", r.file, "-o",
                                                "out.o"};
    if (node == nullptr) {
      return testing::RunPtxasIn(dir, kPtxas, arguments, "out.o");
    }
    return testing::RunPtxasIn(dir, dir_.Sub("bin/ptxas"), arguments, "out.o",
                               {"JITCACHE_SOCKET=" + node->socket(),
                                "JITCACHE_REAL_PTXAS=" + std::string(kPtxas)});
  };
  const std::vector<Run> runs = {{ptx->bytes, "kernel.ptx"},
                                 {bad, "broken.ptx"}};
  const uint64_t compiles_on_a = Stats(a.socket()).compiles;
  for (size_t i = 0; i < runs.size(); ++i) {
    run(&a, runs[i], absl::StrCat("a", i));
  }
  ASSERT_EQ(Stats(a.socket()).compiles, compiles_on_a + 2);
  // Three values: the assembled kernel, the error's "names matter" and
  // the error under its names.
  // Published: NVRTC's PTX, the kernel, and the error's two (that the
  // names matter, and the answer under them).
  ASSERT_TRUE(testing::WaitFor([&] {
    const std::vector<std::string> entries = absl::StrSplit(
        redis_->Cli({"KEYS", "jitcache:v2:entry:*"}), '\n', absl::SkipEmpty());
    return entries.size() == 4;
  })) << redis_->Cli({"KEYS", "*"});
  const uint64_t compiles_on_b = Stats(b.socket()).compiles;
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(runs[i].file);
    const testing::PtxasOutcome real =
        run(nullptr, runs[i], absl::StrCat("r", i));
    const testing::PtxasOutcome served = run(&b, runs[i], absl::StrCat("b", i));
    EXPECT_EQ(served.exit_code, real.exit_code);
    EXPECT_EQ(served.err, real.err);
    EXPECT_EQ(served.output, real.output);
  }
  EXPECT_EQ(Stats(b.socket()).compiles, compiles_on_b);
  EXPECT_GE(Stats(b.socket()).remote_hits, 3u);
}

// libnvJitLink.so.13's links: what one node linked, another serves from the
// team's tier, and keeps call by call for its own next callers, linking
// nothing itself.
TEST_F(RemoteTier, AnAsCalledLinkFromAnotherNodeAnswersEveryCallHere) {
  auto& a = Node("a");
  auto& b = Node("b");
  absl::StatusOr<Client> on_a = Client::Connect({.socket_path = a.socket()});
  absl::StatusOr<Client> on_b = Client::Connect({.socket_path = b.socket()});
  ASSERT_TRUE(on_a.ok() && on_b.ok());
  ProgramOptions options;
  options.arch = "sm_90";
  options.relocatable_device_code = true;
  std::vector<Client::LinkInput> inputs;
  for (const char* unit : {kernels::kLtoSortUnit, kernels::kLtoTransformUnit}) {
    absl::StatusOr<ObjectCode> code =
        on_a->Compile(Program(unit, "unit.cu"), options, CodeType::kLtoir);
    ASSERT_TRUE(code.ok()) << code.status();
    inputs.push_back({CodeType::kLtoir, absl::StrCat("unit", inputs.size()),
                      Digest::Of(code->bytes).Hex(), code->bytes});
  }
  const std::vector<std::string> link_options = {"-arch=sm_90", "-lto"};
  absl::StatusOr<Client::LinkTrace> on_a_link =
      on_a->LinkAsCalled(inputs, link_options, false);
  ASSERT_TRUE(on_a_link.ok()) << on_a_link.status();
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(a.socket()).remote_bytes_up > 0; }));

  EXPECT_TRUE(absl::IsNotFound(
      on_b->LinkAsCalled(inputs, link_options, true).status()));
  absl::StatusOr<Client::LinkTrace> on_b_link =
      on_b->LinkAsCalled(inputs, link_options, false);
  ASSERT_TRUE(on_b_link.ok()) << on_b_link.status();
  EXPECT_EQ(on_b_link->steps, on_a_link->steps);
  EXPECT_EQ(on_b_link->cubin, on_a_link->cubin);
  for (size_t first = 0; first <= inputs.size(); ++first) {
    absl::StatusOr<Client::LinkTrace> steps = on_b->LinkAsCalled(
        std::vector<Client::LinkInput>(inputs.begin(), inputs.begin() + first),
        link_options, true);
    ASSERT_TRUE(steps.ok()) << first << ": " << steps.status();
    EXPECT_TRUE(steps->hit);
    EXPECT_EQ(steps->steps.size(), first + 1);
  }
  DaemonStats stats = Stats(b.socket());
  EXPECT_EQ(stats.compiles, 0u);
  EXPECT_EQ(stats.remote_hits, 1u);
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
  const std::string name = "jitcache:v2:entry:" + key;
  // One changed byte inside the object; the length stays.
  const std::string length = redis_->Cli({"STRLEN", name});
  EXPECT_EQ(redis_->Cli({"SETRANGE", name, "2000", "X"}), length);

  const std::string second = Compile(b, Kernel(7), "b");
  EXPECT_TRUE(absl::StartsWith(second, "MISS key")) << second;  // compiled
  DaemonStats stats = Stats(b.socket());
  // Refused where it looked: before taking the lease and once after.
  EXPECT_GE(stats.remote_corrupt, 1u);
  EXPECT_LE(stats.remote_corrupt, 2u);
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

TEST(RemoteValue, EveryDamageAndEveryOtherKeyOrNameIsRefused) {
  const std::string key(32, 'k'), other(32, 'o');
  const std::string name = "jitcache:v2:entry:aa";
  const std::string payload(300, 'p');
  const std::string framed = FrameRemoteValue(name, payload, key);
  EXPECT_EQ(UnframeRemoteValue(name, framed, {key}), payload);
  // Rotation: any key of the list verifies.
  EXPECT_EQ(UnframeRemoteValue(name, framed, {other, key}), payload);
  EXPECT_EQ(UnframeRemoteValue(name, framed, {other}), std::nullopt);
  EXPECT_EQ(UnframeRemoteValue(name, framed, {}), std::nullopt);
  // The MAC binds the value to its key name: no moving it to another key.
  EXPECT_EQ(UnframeRemoteValue("jitcache:v2:entry:bb", framed, {key}),
            std::nullopt);
  for (size_t i = 0; i < framed.size(); ++i) {
    std::string bad = framed;
    bad[i] ^= 0x20;
    EXPECT_EQ(UnframeRemoteValue(name, bad, {key}), std::nullopt)
        << "byte " << i;
  }
  for (size_t n = 0; n < framed.size(); ++n) {
    EXPECT_EQ(UnframeRemoteValue(name, framed.substr(0, n), {key}),
              std::nullopt)
        << n;
  }
  EXPECT_EQ(UnframeRemoteValue(name, framed + "x", {key}), std::nullopt);
}

// What someone who can write to Redis (but holds no team key) can try:
// an attacker's kernel under a key, the legitimate value of one key moved
// to another, a compile error, a value signed with another key. None is
// served or stored; each is counted; the node compiles the real thing.
TEST_F(RemoteTier, ForgedValuesAreNeverServedNorStored) {
  auto key_of = [](const std::string& line) {
    return line.substr(line.find("key ") + 4, 64);
  };
  auto& a = Node("a");
  const std::string a_key = key_of(Compile(a, Kernel(21), "a"));
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(a.socket()).remote_bytes_up > 0; }));
  auto& b = Node("b");
  const std::string b_key = key_of(Compile(b, Kernel(22), "probe"));
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(b.socket()).remote_bytes_up > 0; }));
  ASSERT_NE(b_key, a_key);

  // Moved: A's signed value copied over B's key. C, which has seen
  // nothing, asks for B's program.
  auto& c = Node("c");
  ASSERT_EQ(redis_->Cli({"COPY", "jitcache:v2:entry:" + a_key,
                         "jitcache:v2:entry:" + b_key, "REPLACE"}),
            "1\n");
  const std::string moved = Compile(c, Kernel(22), "c1");
  EXPECT_TRUE(absl::StartsWith(moved, "MISS key")) << moved;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("probe.cubin")),
            testing::ReadFile(dir_.Sub("c1.cubin")));
  DaemonStats stats = Stats(c.socket());
  // Refused where it looked: before taking the lease and once after.
  EXPECT_GE(stats.remote_corrupt, 1u);
  EXPECT_LE(stats.remote_corrupt, 2u);
  EXPECT_EQ(stats.remote_hits, 0u);
  EXPECT_EQ(stats.compiles, 1u);

  // Signed with a key the team does not have: D, with the team's keys,
  // refuses it; E, which holds that key, would take it.
  const std::string attacker_keys = KeyFile(
      "attacker.keys",
      {"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"});
  auto& e = Node("e", {}, attacker_keys);
  const std::string forged = Compile(e, Kernel(23), "e");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(e.socket()).remote_bytes_up > 0; }));
  auto& d = Node("d");
  const std::string refused = Compile(d, Kernel(23), "d");
  EXPECT_TRUE(absl::StartsWith(refused, "MISS key")) << refused;
  stats = Stats(d.socket());
  // Refused where it looked: before taking the lease and once after.
  EXPECT_GE(stats.remote_corrupt, 1u);
  EXPECT_LE(stats.remote_corrupt, 2u);
  EXPECT_EQ(stats.remote_hits, 0u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.store_entries, 1u);  // its own compile, not the forgery
  EXPECT_FALSE(forged.empty());
}

// A key file with the new key first and the old one after it verifies
// what nodes with the old key wrote.
TEST_F(RemoteTier, KeysRotateNewFirstOldStillVerifying) {
  auto& old_node = Node("old");
  Compile(old_node, Kernel(31), "old");
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Stats(old_node.socket()).remote_bytes_up > 0; }));
  const std::string both = KeyFile(
      "rotated.keys",
      {"ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100",
       kTeamKey});
  auto& new_node = Node("new", {}, both);
  const std::string line = Compile(new_node, Kernel(31), "new");
  EXPECT_TRUE(absl::StartsWith(line, "MISS (remote)")) << line;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("old.cubin")),
            testing::ReadFile(dir_.Sub("new.cubin")));
}

// Leases someone wrote without the team key, with no expiry (or an old
// node's that outlived its signed expiry) do not make a node wait: it takes
// the lease over and compiles at once.
TEST_F(RemoteTier, ForgedOrExpiredLeasesDoNotStallAMiss) {
  // The key of the program, from a node without the remote tier.
  testing::DaemonProcess finder(dir_.Sub("finder.sock"), ":memory:");
  ASSERT_TRUE(finder.Start().ok()) << finder.Log();
  const std::string probe = Compile(finder, Kernel(42), "probe");
  const std::string key = probe.substr(probe.find("key ") + 4, 64);
  // No expiry, no MAC.
  ASSERT_EQ(redis_->Cli({"SET", "jitcache:v2:lease:" + key, "forged"}), "OK\n");
  auto& b = Node("b", {"--compile_time_limit_seconds=300"});
  const absl::Time start = absl::Now();
  const std::string line = Compile(b, Kernel(42), "b");
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(absl::StartsWith(line, "MISS key")) << line;
  // Far under the 300 s it would wait for a lease that counted.
  EXPECT_LT(took, absl::Seconds(150));
  EXPECT_EQ(Stats(b.socket()).compiles, 1u);
  EXPECT_EQ(testing::ReadFile(dir_.Sub("probe.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
  // B took the lease over and let it go once it had published.
  EXPECT_TRUE(testing::WaitFor([&] {
    return redis_->Cli({"EXISTS", "jitcache:v2:lease:" + key}) == "0\n";
  }));
}

// A Redis that admits only an ACL user: nodes log in with the user and
// password of a private credentials file; a node without it is refused by
// Redis, says so, and serves alone.
TEST_F(RemoteTier, NodesLogInWithACredentialsFile) {
  redis_->Kill();
  redis_ = std::make_unique<testing::RedisServer>(
      dir_.Sub("acl.sock"),
      std::vector<std::string>{"--user", "default", "off", "--user", "jc", "on",
                               ">s3cret-pass", "~*", "&*", "+@all"},
      std::vector<std::string>{"--user", "jc", "--pass", "s3cret-pass"});
  ASSERT_TRUE(redis_->Start().ok());
  const std::string credentials = dir_.Sub("redis.credentials");
  testing::WriteFile(credentials, "jc s3cret-pass\n");
  chmod(credentials.c_str(), 0600);

  auto& a = Node("a", {"--remote_credentials_file=" + credentials});
  Compile(a, Kernel(51), "a");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(a.socket()).remote_bytes_up > 0; }));
  auto& b = Node("b", {"--remote_credentials_file=" + credentials});
  const std::string hit = Compile(b, Kernel(51), "b");
  EXPECT_TRUE(absl::StartsWith(hit, "MISS (remote)")) << hit;

  auto& c = Node("c");
  const std::string alone = Compile(c, Kernel(51), "c");
  EXPECT_TRUE(absl::StartsWith(alone, "MISS key")) << alone;
  EXPECT_GT(Stats(c.socket()).remote_errors, 0u);
  EXPECT_TRUE(absl::StrContains(c.Log(), "remote tier unusable")) << c.Log();

  chmod(credentials.c_str(), 0644);
  testing::DaemonProcess readable(
      dir_.Sub("open.sock"), ":memory:",
      {"--remote=" + redis_->url(), "--remote_key_file=" + key_file_,
       "--remote_credentials_file=" + credentials});
  EXPECT_FALSE(readable.Start().ok());
  EXPECT_TRUE(absl::StrContains(readable.Log(), "readable by no one else"))
      << readable.Log();
}

TEST_F(RemoteTier, TheRemoteTierNeedsAPrivateKeyFile) {
  testing::DaemonProcess none(dir_.Sub("none.sock"),
                              ":memory:", {"--remote=" + redis_->url()});
  EXPECT_FALSE(none.Start().ok());
  EXPECT_TRUE(absl::StrContains(none.Log(), "--remote_key_file")) << none.Log();

  const std::string open = KeyFile("open.keys", {kTeamKey});
  chmod(open.c_str(), 0644);
  testing::DaemonProcess readable(
      dir_.Sub("open.sock"),
      ":memory:", {"--remote=" + redis_->url(), "--remote_key_file=" + open});
  EXPECT_FALSE(readable.Start().ok());
  EXPECT_TRUE(absl::StrContains(readable.Log(), "readable by no one else"))
      << readable.Log();

  const std::string short_key = KeyFile("short.keys", {"abcd"});
  testing::DaemonProcess weak(
      dir_.Sub("weak.sock"), ":memory:",
      {"--remote=" + redis_->url(), "--remote_key_file=" + short_key});
  EXPECT_FALSE(weak.Start().ok());
  EXPECT_TRUE(absl::StrContains(weak.Log(), "at least 32 bytes")) << weak.Log();
}

// A read tells absent, damaged and unreachable apart (and counts each as
// it should): the service builds at once when the tier cannot be reached
// instead of waiting on a lease it cannot read.
TEST_F(RemoteTier, AReadTellsAbsentDamagedAndUnreachableApartAndForgets) {
  // As in jitcached: a write to a Redis that went away is an error, not a
  // signal.
  std::signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<std::unique_ptr<RedisTier>> tier =
      testing::OpenTeamTier(redis_->url(), key_file_);
  ASSERT_TRUE(tier.ok()) << tier.status();
  using Outcome = RedisTier::Read::Outcome;
  const Digest key = Digest::Of("a key no node has written");
  EXPECT_EQ((*tier)->Get(key).outcome, Outcome::kAbsent);

  // A value in the entry's place that no team key signed.
  redis_->Cli({"SET", "jitcache:v2:entry:" + key.Hex(), "JCR2 not signed"});
  EXPECT_EQ((*tier)->Get(key).outcome, Outcome::kDamaged);
  EXPECT_EQ((*tier)->stats().misses, 1u);  // the absent one, not the damaged
  EXPECT_EQ((*tier)->stats().corrupt, 1u);

  // A value this node signed comes back whole.
  const Digest published = Digest::Of("published");
  ASSERT_EQ((*tier)->TryLease(published), RedisTier::Lease::kTaken);
  (*tier)->Publish(published, "the entry");
  RedisTier::Read read;
  for (int i = 0; i < 500 && !read.found(); ++i) {
    read = (*tier)->Get(published);
    if (!read.found()) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(read.found());
  EXPECT_EQ(read.entry, "the entry");

  // A record shown wrong is forgotten by the team too: absent after that.
  (*tier)->Forget(published);
  bool forgotten = false;
  for (int i = 0; i < 500 && !forgotten; ++i) {
    forgotten = (*tier)->Get(published).outcome == Outcome::kAbsent;
    if (!forgotten) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(forgotten);

  redis_->Kill();
  EXPECT_EQ((*tier)->Get(key).outcome, Outcome::kUnreachable);
  EXPECT_GE((*tier)->stats().errors, 1u);
  EXPECT_EQ((*tier)->stats().corrupt, 1u);
}

// Two nodes' stores with one team tier behind them (TieredStore over a real
// redis-server): what one node publishes the other fetches whole into its
// own store; a node of another toolchain takes nothing; a key nobody has
// leaves the asker holding its lease.
TEST_F(RemoteTier, TieredStoresShareEntriesThroughTheTeamTier) {
  std::signal(SIGPIPE, SIG_IGN);
  auto tier = [&]() {
    absl::StatusOr<std::unique_ptr<RedisTier>> t =
        testing::OpenTeamTier(redis_->url(), key_file_);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : nullptr;
  };
  const std::string fingerprint(32, '\x5a');
  auto now = [] { return absl::Now(); };
  std::unique_ptr<VerifyingStore> store_a = NewMemoryStore();
  std::unique_ptr<VerifyingStore> store_b = NewMemoryStore();
  std::unique_ptr<VerifyingStore> store_c = NewMemoryStore();
  std::unique_ptr<RedisTier> tier_a = tier(), tier_b = tier(), tier_c = tier();
  ASSERT_TRUE(tier_a && tier_b && tier_c);
  TieredStore a(store_a.get(), tier_a.get(), fingerprint, now);
  TieredStore b(store_b.get(), tier_b.get(), fingerprint, now);
  TieredStore c(store_c.get(), tier_c.get(), std::string(32, '\x33'), now);

  // Node A builds a key (holding its lease), stores and publishes it.
  const Digest key = Digest::Of("a compile both nodes want");
  const std::atomic<bool> stop{false};
  bool leased = false;
  ASSERT_FALSE(a.FetchOrLease(key, absl::Now(), stop, &leased));
  ASSERT_TRUE(leased);
  const std::string bytes = "a cubin's bytes";
  const Digest object = Digest::Of(bytes);
  v1::ActionRecord record;
  record.set_format_version(1);
  record.set_outcome(v1::OUTCOME_OK);
  record.set_target(v1::TARGET_CUBIN);
  record.set_object_digest(std::string(object.AsBytes()));
  record.set_object_size(bytes.size());
  record.set_toolchain_fingerprint(fingerprint);
  const ObjectRef ref{object, ObjectKind::kCubin, bytes};
  ASSERT_TRUE(store_a->PutResult(key, record, {&ref, 1}).ok());
  a.Publish(key, record);

  // Node B waits out A's lease if it must, then has the entry in its store.
  bool b_leased = true;
  EXPECT_TRUE(
      b.FetchOrLease(key, absl::Now() + absl::Seconds(30), stop, &b_leased));
  EXPECT_FALSE(b_leased);
  auto fetched = store_b->GetAction(key);
  ASSERT_TRUE(fetched.ok() && fetched->has_value());
  auto fetched_object = store_b->GetObject(object);
  ASSERT_TRUE(fetched_object.ok() && fetched_object->has_value());
  EXPECT_EQ((*fetched_object)->bytes, bytes);
  EXPECT_EQ(b.stats().hits, 1u);

  // Another toolchain's node takes nothing of it, and counts why.
  bool c_leased = false;
  EXPECT_FALSE(c.FetchOrLease(key, absl::Now(), stop, &c_leased));
  auto absent = store_c->GetAction(key);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  EXPECT_GE(c.stats().corrupt, 1u);  // each read of it counts
  if (c_leased) c.Release(key);
}

}  // namespace
}  // namespace jitcache
