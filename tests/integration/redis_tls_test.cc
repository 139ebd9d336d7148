// The team tier over TLS: a real redis-server that speaks TLS only on its
// TCP port (and plain text on a private Unix socket, for the test's own
// looks), with certificates from a CA the test makes. A daemon with the
// right CA hits; one with another CA, or a server name the certificate
// does not carry, is refused by the handshake, goes on alone and says why;
// a plain-text daemon cannot talk to it; a server that asks for client
// certificates takes a node's and refuses a node without one.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/daemon_stats.h"
#include "tests/testing/kernels.h"
#include "tests/testing/redis_cluster.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/team_nodes.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_ca.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

using testing::DaemonProcess;

DaemonStats Stats(const DaemonProcess& node) {
  return testing::StatsOf(node.socket());
}

class RedisTlsTier : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available() ||
        !testing::FindProgram("openssl").has_value()) {
      GTEST_SKIP() << "redis-server, redis-cli and openssl are needed "
                      "(deploy/install-deps.sh installs them)";
    }
    ASSERT_TRUE(ca_.Create().ok());
    ASSERT_TRUE(
        ca_.Issue("server", "localhost", "DNS:localhost,IP:127.0.0.1").ok());
    ASSERT_TRUE(ca_.Issue("node", "jitcache node", "DNS:node.example").ok());
    ASSERT_TRUE(other_ca_.Create("/CN=someone else's CA").ok());
  }

  // A redis-server with TLS on a loopback port (no plain TCP port);
  // `client_certificates`: it asks clients for one signed by the CA.
  void StartServer(bool client_certificates = false) {
    absl::Status started;
    // A port another process takes before the server binds it makes the
    // server exit: then another port.
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = testing::FreeLoopbackPort();
      ASSERT_GT(port_, 0);
      server_ = std::make_unique<testing::RedisServer>(
          dir_.Sub("redis.sock"),
          std::vector<std::string>{
              "--tls-port", absl::StrCat(port_), "--bind", "127.0.0.1",
              "--tls-cert-file", ca_.Path("server.crt"), "--tls-key-file",
              ca_.Path("server.key"), "--tls-ca-cert-file", ca_.Path("ca.crt"),
              "--tls-auth-clients", client_certificates ? "yes" : "no"});
      started = server_->Start();
      if (started.ok() || !absl::IsUnavailable(started)) break;
    }
    ASSERT_TRUE(started.ok()) << started;
  }

  std::string Url(const std::string& host = "127.0.0.1") const {
    return absl::StrCat("rediss://", host, ":", port_);
  }

  testing::TempDir dir_;
  testing::TestCa ca_{dir_.Sub(".")};
  testing::TempDir other_dir_;
  testing::TestCa other_ca_{other_dir_.Sub(".")};
  int port_ = 0;
  std::unique_ptr<testing::RedisServer> server_;
};

TEST_F(RedisTlsTier, NodesWithTheRightCaShareOthersAreRefusedAndSayWhy) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  testing::TeamNodes team(dir_, Url());
  const std::string ca = "--remote_tls_ca_file=" + ca_.Path("ca.crt");
  DaemonProcess& a = team.Node("a", {ca});
  DaemonProcess& b = team.Node("b", {ca});
  const std::string first = team.Compile(a, kernels::UnrolledKernel(1, 1), "a");
  EXPECT_TRUE(absl::StartsWith(first, "MISS key")) << first;
  ASSERT_TRUE(testing::WaitFor([&] { return Stats(a).remote_bytes_up > 0; }));
  EXPECT_NE(server_->Cli({"DBSIZE"}), "0\n") << "written over TLS";
  const std::string remote =
      team.Compile(b, kernels::UnrolledKernel(1, 1), "b");
  EXPECT_TRUE(absl::StartsWith(remote, "MISS (remote) key")) << remote;
  EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
            testing::ReadFile(dir_.Sub("b.cubin")));

  // Another CA, a name the certificate lacks, and no TLS at all: each node
  // compiles alone, and its log says why.
  struct Refused {
    std::string name;
    testing::TeamNodes* team;
    std::vector<std::string> flags;
    std::string why;
  };
  testing::TeamNodes plain(dir_, absl::StrCat("redis://127.0.0.1:", port_));
  const std::vector<Refused> refused = {
      {"other-ca",
       &team,
       {"--remote_tls_ca_file=" + other_ca_.Path("ca.crt")},
       "certificate does not verify"},
      {"wrong-name",
       &team,
       {ca, "--remote_tls_server_name=redis.elsewhere.example"},
       "certificate does not verify"},
      {"plain", &plain, {}, "remote tier unusable"},
  };
  for (const Refused& r : refused) {
    DaemonProcess& node = r.team->Node(r.name, r.flags);
    const std::string line =
        r.team->Compile(node, kernels::UnrolledKernel(1, 1), r.name);
    EXPECT_TRUE(absl::StartsWith(line, "MISS key")) << r.name << ": " << line;
    const DaemonStats stats = Stats(node);
    EXPECT_EQ(stats.remote_hits, 0u) << r.name;
    EXPECT_GT(stats.remote_errors, 0u) << r.name;
    EXPECT_TRUE(absl::StrContains(node.Log(), r.why))
        << r.name << ": " << node.Log();
    EXPECT_EQ(testing::ReadFile(dir_.Sub("a.cubin")),
              testing::ReadFile(dir_.Sub(r.name + ".cubin")));
  }
}

TEST_F(RedisTlsTier, AServerThatAsksForClientCertificatesTakesANodes) {
  ASSERT_NO_FATAL_FAILURE(StartServer(/*client_certificates=*/true));
  testing::TeamNodes team(dir_, Url("localhost"));
  const std::string ca = "--remote_tls_ca_file=" + ca_.Path("ca.crt");
  DaemonProcess& with =
      team.Node("with", {ca, "--remote_tls_cert_file=" + ca_.Path("node.crt"),
                         "--remote_tls_key_file=" + ca_.Path("node.key")});
  team.Compile(with, kernels::UnrolledKernel(2, 1), "with");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Stats(with).remote_bytes_up > 0; }));
  DaemonProcess& without = team.Node("without", {ca});
  team.Compile(without, kernels::UnrolledKernel(3, 1), "without");
  EXPECT_GT(Stats(without).remote_errors, 0u);
  EXPECT_EQ(Stats(without).remote_bytes_up, 0u);
}

// A Redis Cluster that speaks TLS only (clients, bus and replication):
// found from one seed, followed, shared.
TEST_F(RedisTlsTier, ATlsClusterIsFoundAndShared) {
  testing::RedisClusterProcess cluster(dir_.Sub("rc"));
  cluster.UseTls(ca_.Path("server.crt"), ca_.Path("server.key"),
                 ca_.Path("ca.crt"));
  const absl::Status started = cluster.Start();
  ASSERT_TRUE(started.ok()) << started;
  testing::TeamNodes team(dir_, cluster.url());
  const std::string ca = "--remote_tls_ca_file=" + ca_.Path("ca.crt");
  DaemonProcess& a = team.Node("a", {ca});
  DaemonProcess& b = team.Node("b", {ca});
  for (int k = 0; k < 6; ++k) {
    const std::string key = testing::KeyOfLine(team.Compile(
        a, kernels::UnrolledKernel(10 + k, 1), absl::StrCat("a", k)));
    // Published in the background: once its entry is in the cluster.
    ASSERT_TRUE(testing::WaitFor([&] {
      return cluster.Cli(0, {"EXISTS", "jitcache:v2:{" + key + "}:entry"}) ==
             "1\n";
    }));
  }
  for (int k = 0; k < 6; ++k) {
    const std::string line = team.Compile(b, kernels::UnrolledKernel(10 + k, 1),
                                          absl::StrCat("b", k));
    EXPECT_TRUE(absl::StartsWith(line, "MISS (remote) key")) << line;
    EXPECT_EQ(testing::ReadFile(dir_.Sub(absl::StrCat("a", k, ".cubin"))),
              testing::ReadFile(dir_.Sub(absl::StrCat("b", k, ".cubin"))));
  }
  EXPECT_EQ(Stats(b).remote_errors, 0u);
  EXPECT_GT(Stats(b).remote_cluster_refreshes, 0u);
}

// Files that cannot serve refuse the start, naming the flag: a key others
// can read, a CA that is no certificate, TLS files with a plain URL.
TEST_F(RedisTlsTier, BadTlsFilesRefuseTheStartNamingTheFlag) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string loose = dir_.Sub("loose.key");
  testing::WriteFile(loose, testing::ReadFile(ca_.Path("node.key")));
  chmod(loose.c_str(), 0644);
  const std::string not_a_ca = dir_.Sub("not-a-ca.crt");
  testing::WriteFile(not_a_ca, "not a certificate\n");
  const std::string keys =
      testing::TeamNodes(dir_, "unused")
          .KeyFile("k.keys", {testing::TeamNodes::kTeamKey});
  struct Case {
    std::string url;
    std::vector<std::string> flags;
    std::string says;
  };
  const std::vector<Case> cases = {
      {Url(),
       {"--remote_tls_ca_file=" + ca_.Path("ca.crt"),
        "--remote_tls_cert_file=" + ca_.Path("node.crt"),
        "--remote_tls_key_file=" + loose},
       "--remote_tls_key_file"},
      {Url(), {"--remote_tls_ca_file=" + not_a_ca}, "--remote_tls_ca_file"},
      {Url(), {}, "--remote_tls_ca_file"},
      {absl::StrCat("redis://127.0.0.1:", port_),
       {"--remote_tls_ca_file=" + ca_.Path("ca.crt")},
       "is not TLS"},
  };
  int n = 0;
  for (const Case& c : cases) {
    std::vector<std::string> flags = c.flags;
    flags.push_back("--remote=" + c.url);
    flags.push_back("--remote_key_file=" + keys);
    const std::string name = absl::StrCat("bad", n++);
    DaemonProcess daemon(dir_.Sub(name + ".sock"), dir_.Sub(name + ".store"),
                         flags);
    EXPECT_FALSE(daemon.Start().ok()) << c.says;
    EXPECT_TRUE(absl::StrContains(daemon.Log(), c.says))
        << c.says << ": " << daemon.Log();
  }
}

}  // namespace
}  // namespace jitcache
