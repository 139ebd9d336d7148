// The team tier on a Redis Cluster: six real redis-server processes (three
// masters, three replicas) on loopback ports, made with `redis-cli --cluster
// create`, shared by four daemons found from one seed. What one node
// compiles the others hit; a cold start compiles each kernel once; a master
// killed, a slot moved or a master stopped fails no request and serves no
// wrong byte; forged values are never served.
#include "tests/testing/redis_cluster.h"

#include <sys/types.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/remote/redis_slot.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/kernels.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/team_nodes.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::DaemonProcess;

std::string Kernel(int n, int unroll = 1) {
  return kernels::UnrolledKernel(n, unroll);
}

DaemonStats Stats(const DaemonProcess& node) {
  return testing::StatsOf(node.socket());
}

std::string KeyOf(const std::string& line) { return testing::KeyOfLine(line); }

class RedisClusterTier : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available()) {
      GTEST_SKIP() << "redis-server and redis-cli are not installed (Debian: "
                      "redis-server); deploy/install-deps.sh installs them";
    }
    cluster_ = std::make_unique<testing::RedisClusterProcess>(dir_.Sub("rc"));
    const absl::Status started = cluster_->Start();
    ASSERT_TRUE(started.ok()) << started;
    team_ = std::make_unique<testing::TeamNodes>(dir_, cluster_->url());
  }

  std::vector<DaemonProcess*> FourNodes() {
    std::vector<DaemonProcess*> nodes;
    for (int n = 0; n < 4; ++n) {
      nodes.push_back(&team_->Node(absl::StrCat("n", n)));
    }
    return nodes;
  }

  // Load from every node (hits, new keys, failing programs, bad requests:
  // tests/testing/load_client.cc) for about `seconds`; the clients' pids.
  std::vector<pid_t> Load(const std::vector<DaemonProcess*>& nodes,
                          int seconds) {
    std::vector<pid_t> clients;
    for (size_t n = 0; n < nodes.size(); ++n) {
      clients.push_back(testing::SpawnProcess(
          {.argv = {JITCACHE_LOAD_CLIENT_BINARY, nodes[n]->socket(),
                    absl::StrCat(100 + n), "100000", absl::StrCat(seconds)},
           .env = {"JITCACHE_NO_FALLBACK=1"},
           .output_path = dir_.Sub(absl::StrCat("load", n))}));
    }
    return clients;
  }

  // Every client ended well: no request failed.
  // The clients stop asking after their seconds; a request the daemon
  // never answered would keep one running: all of them get two minutes in
  // all, then are killed, and it fails.
  void ExpectNoFailure(const std::vector<pid_t>& clients) {
    const absl::Time deadline = absl::Now() + absl::Minutes(2);
    for (size_t n = 0; n < clients.size(); ++n) {
      const int code = testing::WaitProcess(
          clients[n], std::max(deadline - absl::Now(), absl::Seconds(1)));
      const std::string out =
          testing::ReadFile(dir_.Sub(absl::StrCat("load", n)));
      EXPECT_EQ(code, 0) << "client " << n << " (killed when -1): " << out;
      EXPECT_TRUE(absl::StrContains(out, " unexpected=0 ")) << out;
    }
  }

  // A kernel compiled on `from` is a remote hit on `to`, byte for byte:
  // once `from` has uploaded it, `to`'s first compile of it comes from the
  // cluster. An upload lost while the cluster settles (`from` then goes on
  // alone, which is also right) is tried again with another variant of
  // the kernel, for up to a minute; then a fatal failure that says what the
  // sender saw. `variant`: the variant that was shared.
  void ExpectRemoteHit(const DaemonProcess& from, const DaemonProcess& to,
                       int kernel, int* variant = nullptr) {
    std::string line;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (int v = 1; absl::Now() < deadline; ++v) {
      const std::string a = absl::StrCat("from", kernel, "_", v);
      const std::string b = absl::StrCat("to", kernel, "_", v);
      const uint64_t up = Stats(from).remote_bytes_up;
      team_->Compile(from, Kernel(kernel, v), a);
      if (!testing::WaitFor([&] { return Stats(from).remote_bytes_up > up; },
                            absl::Seconds(10))) {
        continue;  // the upload was lost to the cluster's state
      }
      line = team_->Compile(to, Kernel(kernel, v), b);
      if (absl::StartsWith(line, "MISS (remote)")) {
        EXPECT_EQ(testing::ReadFile(dir_.Sub(a + ".cubin")),
                  testing::ReadFile(dir_.Sub(b + ".cubin")));
        if (variant != nullptr) *variant = v;
        return;
      }
    }
    const DaemonStats sent = Stats(from), got = Stats(to);
    FAIL() << "kernel " << kernel << " was never a remote hit: "
           << (line.empty() ? "nothing was uploaded" : line)
           << "\nthe sender: remote_bytes_up=" << sent.remote_bytes_up
           << " remote_errors=" << sent.remote_errors
           << " remote_cluster_refreshes=" << sent.remote_cluster_refreshes
           << "\nthe receiver: remote_hits=" << got.remote_hits
           << " remote_misses=" << got.remote_misses
           << " remote_errors=" << got.remote_errors
           << " remote_cluster_refreshes=" << got.remote_cluster_refreshes
           << "\nthe sender's log:\n"
           << from.Log() << "\nthe receiver's log:\n"
           << to.Log();
  }

  // `count` kernels (numbered from `first` on) whose entries lie in slots
  // that node `master` serves now: their keys from a node without the tier.
  std::vector<int> KernelsOn(int master, int count, int first) {
    if (finder_ == nullptr) {
      finder_ =
          std::make_unique<DaemonProcess>(dir_.Sub("finder.sock"), ":memory:");
      EXPECT_TRUE(finder_->Start().ok()) << finder_->Log();
    }
    std::vector<int> kernels;
    for (int n = first;
         static_cast<int>(kernels.size()) < count && n < first + 40 * count;
         ++n) {
      const std::string key =
          KeyOf(team_->Compile(*finder_, Kernel(n), absl::StrCat("find", n)));
      const int slot = RedisKeySlot("jitcache:v2:{" + key + "}:entry");
      if (cluster_->MasterOf(slot) == master) kernels.push_back(n);
    }
    EXPECT_EQ(static_cast<int>(kernels.size()), count);
    return kernels;
  }

  // The master of slot 0, its one replica, and a kernel (numbered from
  // `first` on) whose entry lies in that master's slots; once every
  // replica is in CLUSTER SLOTS (before the nodes read their first map).
  struct Shard {
    int master = -1, replica = -1, kernel = -1;
  };
  void ShardOfSlotZero(int first, Shard* shard) {
    const absl::Status listed = cluster_->WaitUntilReplicasListed();
    ASSERT_TRUE(listed.ok()) << listed;
    shard->master = cluster_->MasterOf(0);
    ASSERT_GE(shard->master, 0);
    const std::vector<int> replicas = cluster_->ReplicasOf(shard->master);
    ASSERT_EQ(replicas.size(), 1u)
        << cluster_->Cli(shard->master, {"CLUSTER", "NODES"});
    shard->replica = replicas[0];
    const std::vector<int> kernels = KernelsOn(shard->master, 1, first);
    ASSERT_EQ(kernels.size(), 1u);
    shard->kernel = kernels[0];
  }

  // Replica `replica` stops replicating (it logs in to its master with a
  // password the master does not have) and keeps serving what it has; the
  // cluster still counts it a replica.
  void CutOff(int replica) {
    ASSERT_EQ(cluster_->Cli(replica,
                            {"CONFIG", "SET", "masterauth", "not-the-masters"}),
              "OK\n");
    cluster_->Cli(replica, {"CLIENT", "KILL", "TYPE", "master"});
    ASSERT_TRUE(testing::WaitFor([&] {
      return absl::StrContains(cluster_->Cli(replica, {"INFO", "replication"}),
                               "master_link_status:down");
    }));
  }

  // The number after `field` in node `i`'s INFO `section`, up to `end`
  // ("cmdstat_get:calls=" ... ','); -1 when there is none.
  int64_t InfoNumber(int i, const std::string& section,
                     const std::string& field, char end) {
    const std::string info = cluster_->Cli(i, {"INFO", section});
    const size_t at = info.find(field);
    int64_t value = -1;
    if (at == std::string::npos) return value;
    const size_t from = at + field.size();
    if (!absl::SimpleAtoi(
            absl::StripAsciiWhitespace(absl::string_view(info).substr(
                from, info.find(end, from) - from)),
            &value)) {
      return -1;
    }
    return value;
  }

  // Times node `i` ran `command` (INFO commandstats).
  uint64_t CommandCalls(int i, const std::string& command) {
    return static_cast<uint64_t>(std::max<int64_t>(
        0,
        InfoNumber(i, "commandstats", "cmdstat_" + command + ":calls=", ',')));
  }

  // Whether `replica` has applied all its master wrote (replication
  // offsets, INFO replication).
  bool CaughtUp(int master, int replica) {
    const auto offset = [&](int i, const std::string& field) {
      return InfoNumber(i, "replication", field + ":", '\n');
    };
    const int64_t wrote = offset(master, "master_repl_offset");
    return wrote > 0 && offset(replica, "slave_repl_offset") >= wrote &&
           absl::StrContains(cluster_->Cli(replica, {"INFO", "replication"}),
                             "master_link_status:up");
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::RedisClusterProcess> cluster_;
  std::unique_ptr<testing::TeamNodes> team_;
  std::unique_ptr<DaemonProcess> finder_;
};

// The slot a key lands in is the cluster's own: every key the tier
// writes, against CLUSTER KEYSLOT of a real node; a value and its lease
// share a slot.
TEST_F(RedisClusterTier, KeySlotsAreTheClustersAndAValueSharesItsLeasesSlot) {
  for (const std::string& key :
       {std::string("foo"), std::string("{user1000}.following"),
        std::string("a{}b"), std::string("{}{x}"), std::string("x{y"),
        std::string("jitcache:v2:{0123abcd}:entry"), std::string(""),
        std::string("\xff\xfe binary")}) {
    int slot = -1;
    const std::string answer = cluster_->Cli(0, {"CLUSTER", "KEYSLOT", key});
    ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(answer), &slot))
        << key << ": " << answer;
    EXPECT_EQ(RedisKeySlot(key), slot) << key;
  }
  for (int i = 0; i < 200; ++i) {
    const std::string hex =
        absl::StrCat(absl::Hex(i * 7919 + 13, absl::kZeroPad16));
    EXPECT_EQ(RedisKeySlot("jitcache:v2:{" + hex + "}:entry"),
              RedisKeySlot("jitcache:v2:{" + hex + "}:lease"));
  }
}

TEST_F(RedisClusterTier, AKernelCompiledOnOneNodeIsARemoteHitOnTheOthers) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  const std::string first = team_->Compile(*nodes[0], Kernel(1), "a");
  EXPECT_TRUE(absl::StartsWith(first, "MISS key")) << first;
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(*nodes[0]).remote_bytes_up > 0; }));
  for (int n = 1; n < 4; ++n) {
    const std::string out = absl::StrCat("n", n);
    const std::string line = team_->Compile(*nodes[n], Kernel(1), out);
    EXPECT_TRUE(absl::StartsWith(line, "MISS (remote) key")) << line;
    EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
              testing::ReadFile(dir_.Sub(out + ".cubin")));
    EXPECT_EQ(Stats(*nodes[n]).compiles, 0u);
  }
  // The entry lives where the cluster says its slot is, under its tag.
  const std::string key = KeyOf(first);
  const std::string name = "jitcache:v2:{" + key + "}:entry";
  EXPECT_NE(cluster_->Cli(0, {"EXISTS", name}), "0\n");
  EXPECT_EQ(cluster_->Cli(0, {"EXISTS", "jitcache:v2:{" + key + "}:lease"}),
            "0\n")
      << "the lease is let go once the result is published";
}

TEST_F(RedisClusterTier, AColdStartOfFiftyKernelsOnFourNodesCompilesEachOnce) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  std::string manifest;
  for (int k = 0; k < 50; ++k) {
    const std::string path = dir_.Sub(absl::StrCat("k", k, ".cu"));
    testing::WriteFile(path, Kernel(300 + k));
    absl::StrAppend(&manifest, path, " --arch sm_90 --target cubin\n");
  }
  testing::WriteFile(dir_.Sub("manifest"), manifest);
  std::vector<pid_t> clients;
  for (int n = 0; n < 4; ++n) {
    clients.push_back(testing::SpawnProcess(
        {.argv = {testing::CliBinary() + "-full", "--socket",
                  nodes[n]->socket(), "precompile", dir_.Sub("manifest")},
         .env = {"JITCACHE_NO_FALLBACK=1"},
         .output_path = dir_.Sub(absl::StrCat("client", n))}));
  }
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(testing::WaitProcess(clients[n], absl::Minutes(10)), 0)
        << testing::ReadFile(dir_.Sub(absl::StrCat("client", n)));
  }
  uint64_t compiles = 0, remote_hits = 0;
  for (DaemonProcess* node : nodes) {
    const DaemonStats stats = Stats(*node);
    compiles += stats.compiles;
    remote_hits += stats.remote_hits;
    std::printf(
        "node: %llu compiles, %llu remote hits, %llu waits, %llu corrupt, %llu "
        "misses\n",
        (unsigned long long)stats.compiles,
        (unsigned long long)stats.remote_hits,
        (unsigned long long)stats.remote_leases_waited,
        (unsigned long long)stats.remote_corrupt,
        (unsigned long long)stats.remote_misses);
    EXPECT_EQ(stats.store_entries, 50u);
    EXPECT_EQ(stats.remote_errors, 0u) << node->Log();
  }
  EXPECT_EQ(compiles, 50u);
  EXPECT_EQ(remote_hits, 150u);
}

// A master killed under load: its replica takes over; no request fails
// meanwhile (the nodes compile alone), and remote hits resume without a
// restart of any daemon.
TEST_F(RedisClusterTier, AMasterKilledUnderLoadFailsNoRequestAndHitsResume) {
  // Where the time goes, in the output of a test that runs long.
  const absl::Time start = absl::Now();
  const auto stage = [&](const char* what) {
    std::printf("%s after %s\n", what,
                absl::FormatDuration(absl::Now() - start).c_str());
    std::fflush(stdout);
  };
  std::vector<DaemonProcess*> nodes = FourNodes();
  ASSERT_NO_FATAL_FAILURE(ExpectRemoteHit(*nodes[0], *nodes[1], 10));
  stage("shared before the failover");
  std::vector<pid_t> clients = Load(nodes, 8);
  absl::SleepFor(absl::Seconds(1));
  const int victim = cluster_->MasterOf(0);
  ASSERT_GE(victim, 0);
  cluster_->Kill(victim);
  stage("master killed");
  // Its replica is promoted once the others find it failing (about a
  // second).
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const int now = cluster_->MasterOf(0);
        return now >= 0 && now != victim;
      },
      absl::Seconds(60)))
      << cluster_->Cli(victim == 0 ? 1 : 0, {"CLUSTER", "NODES"});
  stage("replica promoted");
  ASSERT_TRUE(cluster_->WaitUntilSettled().ok());
  stage("cluster settled");
  ExpectNoFailure(clients);
  stage("load ended");
  // Kernels whose keys lie in every slot range, the failed-over one too.
  for (int k = 0; k < 12; ++k)
    ASSERT_NO_FATAL_FAILURE(
        ExpectRemoteHit(*nodes[k % 4], *nodes[(k + 1) % 4], 20 + k));
}

// The daemons' one seed killed after they found the cluster: every node
// goes on sharing, what it reads and what it writes. A node that has only
// read so far has never published: the map its reads found must serve its
// first upload too, since the seed it was given is gone by then.
TEST_F(RedisClusterTier, TheOnlySeedGoneEveryNodeStillReadsAndWrites) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  for (int n = 1; n < 4; ++n) {
    ASSERT_NO_FATAL_FAILURE(ExpectRemoteHit(*nodes[0], *nodes[n], 60 + n));
    ASSERT_EQ(Stats(*nodes[n]).remote_bytes_up, 0u)
        << "node " << n << " published before the seed went: the test "
        << "shows nothing";
  }
  const int seed = 0;  // cluster_->url() names node 0 only
  const bool was_master = cluster_->MasterOf(0) == seed ||
                          cluster_->MasterOf(kRedisSlots / 2) == seed ||
                          cluster_->MasterOf(kRedisSlots - 1) == seed;
  cluster_->Kill(seed);
  if (was_master) {
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          return cluster_->MasterOf(0) >= 0 &&
                 cluster_->MasterOf(kRedisSlots / 2) >= 0 &&
                 cluster_->MasterOf(kRedisSlots - 1) >= 0;
        },
        absl::Seconds(60)))
        << cluster_->Cli(1, {"CLUSTER", "NODES"});
  }
  ASSERT_TRUE(cluster_->WaitUntilSettled().ok());
  // Nodes 1-3 publish for the first time, and every other node reads it.
  for (int n = 1; n < 4; ++n) {
    ASSERT_NO_FATAL_FAILURE(
        ExpectRemoteHit(*nodes[n], *nodes[(n + 1) % 4], 70 + n));
  }
}

// A node started while its first seed is down (killed, with a kernel
// another node published on it, and its replica promoted since) finds the
// cluster through its next seed: its very first request is a remote hit.
// A seed that fails does not end the search for the map: every seed, and
// every node a map has named, is asked.
TEST_F(RedisClusterTier, ANodeWhoseFirstSeedIsDownHitsOnItsFirstRequest) {
  Shard shard;
  ASSERT_NO_FATAL_FAILURE(ShardOfSlotZero(90, &shard));
  DaemonProcess& publisher = team_->Node("publisher");
  const uint64_t up = Stats(publisher).remote_bytes_up;
  team_->Compile(publisher, Kernel(shard.kernel), "published");
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Stats(publisher).remote_bytes_up > up; }, absl::Seconds(30)))
      << publisher.Log();
  ASSERT_TRUE(
      testing::WaitFor([&] { return CaughtUp(shard.master, shard.replica); },
                       absl::Seconds(30)));
  cluster_->Kill(shard.master);
  ASSERT_TRUE(
      testing::WaitFor([&] { return cluster_->MasterOf(0) == shard.replica; },
                       absl::Seconds(60)))
      << cluster_->Cli(shard.replica, {"CLUSTER", "NODES"});
  ASSERT_TRUE(cluster_->WaitUntilSettled().ok());
  // Seeds: the dead master first, then a node that lives.
  int alive = 0;
  while (alive == shard.master) ++alive;
  testing::TeamNodes late(
      dir_,
      absl::StrCat("redis-cluster://127.0.0.1:", cluster_->port(shard.master),
                   ",127.0.0.1:", cluster_->port(alive)));
  DaemonProcess& fresh = late.Node("fresh");
  const std::string line = late.Compile(fresh, Kernel(shard.kernel), "fresh");
  EXPECT_TRUE(absl::StartsWith(line, "MISS (remote)")) << line << "\n"
                                                       << fresh.Log();
  EXPECT_EQ(testing::ReadFile(dir_.Sub("published.cubin")),
            testing::ReadFile(dir_.Sub("fresh.cubin")));
  EXPECT_EQ(Stats(fresh).remote_hits, 1u) << fresh.Log();
}

// With --remote_replica_reads a kernel another node compiled is read from
// a replica of its master, once the replica has it: the replica counts
// the GET, the node counts a replica hit, the bytes are the compiler's.
TEST_F(RedisClusterTier, WithReplicaReadsAReplicaAnswersAHit) {
  DaemonProcess& a = team_->Node("ra", {"--remote_replica_reads"});
  DaemonProcess& b = team_->Node("rb", {"--remote_replica_reads"});
  Shard shard;
  ASSERT_NO_FATAL_FAILURE(ShardOfSlotZero(500, &shard));
  const int master = shard.master, replica = shard.replica;
  const int kernel = shard.kernel;

  EXPECT_TRUE(
      absl::StartsWith(team_->Compile(a, Kernel(kernel), "a"), "MISS key"));
  ASSERT_TRUE(testing::WaitFor([&] { return Stats(a).remote_bytes_up > 0; }));
  ASSERT_TRUE(testing::WaitFor([&] { return CaughtUp(master, replica); }))
      << cluster_->Cli(replica, {"INFO", "replication"});
  const uint64_t gets = CommandCalls(replica, "get");
  const std::string line = team_->Compile(b, Kernel(kernel), "b");
  EXPECT_TRUE(absl::StartsWith(line, "MISS (remote)")) << line;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
  const DaemonStats stats = Stats(b);
  EXPECT_EQ(stats.remote_replica_hits, 1u) << b.Log();
  EXPECT_EQ(stats.remote_replica_misses, 0u);
  EXPECT_EQ(stats.compiles, 0u);
  EXPECT_GT(CommandCalls(replica, "get"), gets);
}

// A replica that lags (its link to its master cut: it keeps serving what
// it had) has no value for a kernel just published: the read goes on to
// the master, so the node still hits and nothing is compiled twice. Once
// the replica has caught up, it answers again.
TEST_F(RedisClusterTier, AReplicaThatLagsLeavesTheReadToItsMaster) {
  DaemonProcess& a = team_->Node("la", {"--remote_replica_reads"});
  DaemonProcess& b = team_->Node("lb", {"--remote_replica_reads"});
  DaemonProcess& c = team_->Node("lc", {"--remote_replica_reads"});
  Shard shard;
  ASSERT_NO_FATAL_FAILURE(ShardOfSlotZero(600, &shard));
  const int master = shard.master, replica = shard.replica;
  const int kernel = shard.kernel;
  ASSERT_NO_FATAL_FAILURE(CutOff(replica));

  EXPECT_TRUE(
      absl::StartsWith(team_->Compile(a, Kernel(kernel), "a"), "MISS key"));
  ASSERT_TRUE(testing::WaitFor([&] { return Stats(a).remote_bytes_up > 0; }));
  const std::string line = team_->Compile(b, Kernel(kernel), "b");
  EXPECT_TRUE(absl::StartsWith(line, "MISS (remote)")) << line;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
  DaemonStats stats = Stats(b);
  EXPECT_EQ(stats.compiles, 0u) << "a replica's nil taken for a miss";
  EXPECT_EQ(stats.remote_replica_hits, 0u);
  EXPECT_GE(stats.remote_replica_misses, 1u) << b.Log();

  ASSERT_EQ(cluster_->Cli(replica, {"CONFIG", "SET", "masterauth", ""}),
            "OK\n");
  ASSERT_TRUE(testing::WaitFor([&] { return CaughtUp(master, replica); },
                               absl::Seconds(30)))
      << cluster_->Cli(replica, {"INFO", "replication"});
  const std::string again = team_->Compile(c, Kernel(kernel), "c");
  EXPECT_TRUE(absl::StartsWith(again, "MISS (remote)")) << again;
  stats = Stats(c);
  EXPECT_EQ(stats.remote_replica_hits, 1u) << c.Log();
  EXPECT_EQ(stats.compiles, 0u);
}

// A replica cut off from its master still holds an entry the master has
// since deleted (as a node deletes a link record a caller disproved): the
// master does not confirm it, so the node compiles, and never takes the
// replica's value.
TEST_F(RedisClusterTier, AValueItsMasterNoLongerHoldsIsNotTakenFromAReplica) {
  DaemonProcess& a = team_->Node("sa", {"--remote_replica_reads"});
  DaemonProcess& b = team_->Node("sb", {"--remote_replica_reads"});
  Shard shard;
  ASSERT_NO_FATAL_FAILURE(ShardOfSlotZero(700, &shard));
  const int master = shard.master, replica = shard.replica;
  const int kernel = shard.kernel;

  const std::string first = team_->Compile(a, Kernel(kernel), "a");
  EXPECT_TRUE(absl::StartsWith(first, "MISS key")) << first;
  ASSERT_TRUE(testing::WaitFor([&] { return Stats(a).remote_bytes_up > 0; }));
  // The entry alone (its lease let go), on the master and the replica.
  ASSERT_TRUE(testing::WaitFor(
      [&] { return cluster_->Cli(master, {"DBSIZE"}) == "1\n"; }));
  ASSERT_TRUE(testing::WaitFor([&] { return CaughtUp(master, replica); }));
  ASSERT_NO_FATAL_FAILURE(CutOff(replica));
  const std::string entry = "jitcache:v2:{" + KeyOf(first) + "}:entry";
  ASSERT_EQ(cluster_->Cli(master, {"DEL", entry}), "1\n");
  ASSERT_EQ(cluster_->Cli(master, {"DBSIZE"}), "0\n");
  ASSERT_EQ(cluster_->Cli(replica, {"DBSIZE"}), "1\n")
      << "the replica no longer holds the value: the test shows nothing";

  const uint64_t gets = CommandCalls(replica, "get");
  const std::string line = team_->Compile(b, Kernel(kernel), "b");
  EXPECT_TRUE(absl::StartsWith(line, "MISS key")) << line;
  EXPECT_GT(CommandCalls(replica, "get"), gets) << "the replica was asked";
  const DaemonStats stats = Stats(b);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.remote_replica_hits, 0u);
  EXPECT_GE(stats.remote_replica_misses, 1u);
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
}

// Replica reads need a cluster: with one server the start is refused and
// says why.
TEST_F(RedisClusterTier, ReplicaReadsWithOneServerRefuseTheStart) {
  const std::string keys =
      team_->KeyFile("one.keys", {testing::TeamNodes::kTeamKey});
  DaemonProcess daemon(
      dir_.Sub("one.sock"), dir_.Sub("one.store"),
      {"--remote=redis://127.0.0.1:" + std::to_string(cluster_->port(0)),
       "--remote_key_file=" + keys, "--remote_replica_reads"});
  EXPECT_FALSE(daemon.Start().ok());
  EXPECT_TRUE(absl::StrContains(daemon.Log(), "--remote_replica_reads"))
      << daemon.Log();
  EXPECT_TRUE(absl::StrContains(daemon.Log(), "redis-cluster://"))
      << daemon.Log();
}

// Slots moved from one master to another under load (`redis-cli --cluster
// reshard`): MOVED and ASK are followed; no request fails.
TEST_F(RedisClusterTier, SlotsMovedUnderLoadAreFollowed) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  const int from = cluster_->MasterOf(0);
  const int to = cluster_->MasterOf(kRedisSlots - 1);
  ASSERT_NE(from, to);
  // Kernels whose entries the move may take along: all on `from`.
  const std::vector<int> kernels = KernelsOn(from, 8, 40);
  std::vector<int> variants;
  for (int k : kernels) {
    variants.push_back(1);
    ASSERT_NO_FATAL_FAILURE(
        ExpectRemoteHit(*nodes[0], *nodes[1], k, &variants.back()));
  }
  std::vector<pid_t> clients = Load(nodes, 8);
  testing::ProcessResult moved = testing::RunProcess(
      {*testing::FindProgram("redis-cli"), "--cluster", "reshard",
       absl::StrCat("127.0.0.1:", cluster_->port(0)), "--cluster-from",
       cluster_->Id(from), "--cluster-to", cluster_->Id(to), "--cluster-slots",
       "3000", "--cluster-yes"});
  ASSERT_EQ(moved.exit_code, 0) << moved.output;
  ExpectNoFailure(clients);
  // What was written before the move is read where it is now.
  int now_elsewhere = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int k = kernels[i];
    const std::string line = team_->Compile(*nodes[2], Kernel(k, variants[i]),
                                            absl::StrCat("after", k));
    EXPECT_TRUE(absl::StartsWith(line, "MISS (remote)")) << line;
    const int slot = RedisKeySlot("jitcache:v2:{" + KeyOf(line) + "}:entry");
    now_elsewhere += cluster_->MasterOf(slot) == to;
  }
  EXPECT_GT(now_elsewhere, 0) << "no entry of these moved: the test shows "
                                 "nothing";
  uint64_t redirects_followed = 0;
  for (DaemonProcess* node : nodes) {
    redirects_followed += Stats(*node).remote_redirects;
  }
  EXPECT_GT(redirects_followed, 0u);
}

// A slot in the middle of a migration (CLUSTER SETSLOT MIGRATING on its
// master, IMPORTING on another): the old master answers a key it does not
// hold with ASK, and the tier asks the new one, after ASKING, for the value
// and its lease. What one node compiles then lands on the new master, and
// is a remote hit on another node.
TEST_F(RedisClusterTier, AKeyInASlotBeingMigratedIsFollowedByAsk) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  const int from = cluster_->MasterOf(0);
  const int to = cluster_->MasterOf(kRedisSlots - 1);
  ASSERT_GE(from, 0);
  ASSERT_GE(to, 0);
  ASSERT_NE(from, to);
  const std::vector<int> kernels = KernelsOn(from, 1, 200);
  ASSERT_EQ(kernels.size(), 1u);
  const int k = kernels[0];
  const int slot = RedisKeySlot(
      "jitcache:v2:{" +
      KeyOf(team_->Compile(*finder_, Kernel(k), "find-again")) + "}:entry");
  const std::string at = absl::StrCat(slot);
  ASSERT_EQ(cluster_->Cli(to, {"CLUSTER", "SETSLOT", at, "IMPORTING",
                               cluster_->Id(from)}),
            "OK\n");
  ASSERT_EQ(cluster_->Cli(from, {"CLUSTER", "SETSLOT", at, "MIGRATING",
                                 cluster_->Id(to)}),
            "OK\n");
  uint64_t redirects_before = 0;
  for (DaemonProcess* node : nodes) {
    redirects_before += Stats(*node).remote_redirects;
  }

  ASSERT_NO_FATAL_FAILURE(ExpectRemoteHit(*nodes[0], *nodes[1], k));
  // The value and its lease went to the new master, none to the old.
  EXPECT_NE(cluster_->Cli(to, {"CLUSTER", "COUNTKEYSINSLOT", at}), "0\n");
  EXPECT_EQ(cluster_->Cli(from, {"CLUSTER", "COUNTKEYSINSLOT", at}), "0\n");
  uint64_t redirects_after = 0;
  for (DaemonProcess* node : nodes) {
    redirects_after += Stats(*node).remote_redirects;
  }
  EXPECT_GT(redirects_after, redirects_before);
}

// A master that neither answers nor closes (SIGSTOP): every request is
// still answered, each within its deadline (a command to it times out
// once; the node is then left alone while it backs off).
TEST_F(RedisClusterTier, AStoppedMasterDelaysNoRequestPastItsDeadline) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  const int victim = cluster_->MasterOf(0);
  // Kernels whose entries live on the master about to stop.
  const std::vector<int> kernels = KernelsOn(victim, 6, 60);
  cluster_->Stop(victim);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const absl::Time start = absl::Now();
    const std::string line = team_->Compile(
        *nodes[i % 4], Kernel(kernels[i]), absl::StrCat("stopped", kernels[i]));
    EXPECT_TRUE(absl::StartsWith(line, "MISS")) << line;
    // A stopped node costs a timeout (0.5 s) or two, not a stall.
    EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << line;
  }
  uint64_t errors = 0;
  for (DaemonProcess* node : nodes) errors += Stats(*node).remote_errors;
  EXPECT_GT(errors, 0u) << "the stopped master was never asked";
  cluster_->Continue(victim);
}

// What anyone who can write to the cluster puts there is never served: a
// value not signed by a team key, moved from another key, or changed.
TEST_F(RedisClusterTier, ForgedValuesAreNeverServed) {
  std::vector<DaemonProcess*> nodes = FourNodes();
  const std::string first = team_->Compile(*nodes[0], Kernel(70), "a");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(*nodes[0]).remote_bytes_up > 0; }));
  const std::string name = "jitcache:v2:{" + KeyOf(first) + "}:entry";
  // One byte changed inside the object.
  const std::string length = cluster_->Cli(0, {"STRLEN", name});
  EXPECT_EQ(cluster_->Cli(0, {"SETRANGE", name, "2000", "X"}), length);
  const std::string line = team_->Compile(*nodes[1], Kernel(70), "b");
  EXPECT_TRUE(absl::StartsWith(line, "MISS key")) << line;
  EXPECT_GE(Stats(*nodes[1]).remote_corrupt, 1u);
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
  // A value no team key signed under another key's name.
  const std::string other = team_->Compile(*nodes[0], Kernel(71), "c");
  ASSERT_TRUE(testing::WaitFor([&] {
    return cluster_->Cli(0, {"EXISTS", "jitcache:v2:{" + KeyOf(other) +
                                           "}:entry"}) == "1\n";
  }));
  const std::string victim = "jitcache:v2:{" + KeyOf(other) + "}:entry";
  EXPECT_EQ(cluster_->Cli(0, {"DEL", victim}), "1\n");
  EXPECT_EQ(cluster_->Cli(0, {"SET", victim, "JCR2 forged"}), "OK\n");
  const std::string forged = team_->Compile(*nodes[2], Kernel(71), "d");
  EXPECT_TRUE(absl::StartsWith(forged, "MISS key")) << forged;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("c.cubin")),
            testing::ReadFile(dir_.Sub("d.cubin")));
}

// A lease no team key signed, as anyone who can write to the cluster could
// set it, does not stall a miss: the node takes it over, compiles, and
// lets it go once it has published.
TEST_F(RedisClusterTier, AForgedLeaseDoesNotStallAMiss) {
  DaemonProcess finder(dir_.Sub("finder.sock"), ":memory:");
  ASSERT_TRUE(finder.Start().ok()) << finder.Log();
  const std::string key = KeyOf(team_->Compile(finder, Kernel(80), "probe"));
  const std::string lease = "jitcache:v2:{" + key + "}:lease";
  ASSERT_EQ(cluster_->Cli(0, {"SET", lease, "forged"}), "OK\n");
  DaemonProcess& node = team_->Node("b", {"--compile_time_limit_seconds=300"});
  const absl::Time start = absl::Now();
  const std::string line = team_->Compile(node, Kernel(80), "b");
  EXPECT_TRUE(absl::StartsWith(line, "MISS key")) << line;
  // Far under the 300 s it would wait for a lease that counted.
  EXPECT_LT(absl::Now() - start, absl::Seconds(150));
  EXPECT_EQ(Stats(node).compiles, 1u);
  EXPECT_EQ(testing::ReadFile(dir_.Sub("probe.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));
  EXPECT_TRUE(testing::WaitFor([&] {
    return cluster_->Cli(0, {"EXISTS", lease}) == "0\n";
  }));
}

}  // namespace
}  // namespace jitcache
