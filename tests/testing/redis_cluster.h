#ifndef JITCACHE_TESTS_TESTING_REDIS_CLUSTER_H_
#define JITCACHE_TESTS_TESTING_REDIS_CLUSTER_H_

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/test_env.h"

namespace jitcache::testing {

// A Redis Cluster of real redis-server processes on loopback TCP ports,
// each in a private directory, made with `redis-cli --cluster create`:
// `masters` masters, each with `replicas` replicas. Nodes can be killed,
// stopped (SIGSTOP) and continued; a failover takes about a second
// (cluster-node-timeout 1000). Not thread-safe.
class RedisClusterProcess {
 public:
  RedisClusterProcess(std::string dir, int masters = 3, int replicas = 1)
      : dir_(std::move(dir)), masters_(masters), replicas_(replicas) {}

  // TLS between clients and nodes, and between nodes (bus, replication):
  // the certificate and key every node presents, and the CA that signed
  // it, which redis-cli trusts. Before Start.
  void UseTls(const std::string& cert, const std::string& key,
              const std::string& ca) {
    tls_server_ = {"--tls-cert-file",    cert,  "--tls-key-file",     key,
                   "--tls-ca-cert-file", ca,    "--tls-auth-clients", "no",
                   "--tls-cluster",      "yes", "--tls-replication",  "yes"};
    tls_cli_ = {"--tls", "--cacert", ca};
  }
  ~RedisClusterProcess() {
    for (size_t i = 0; i < pids_.size(); ++i) Kill(static_cast<int>(i));
  }

  absl::Status Start() {
    const int n = masters_ * (1 + replicas_);
    ports_.assign(n, -1);
    pids_.assign(n, -1);
    stopped_.assign(n, false);
    std::vector<std::string> addresses;
    for (int i = 0; i < n; ++i) {
      if (absl::Status s = StartNode(i); !s.ok()) return s;
      addresses.push_back(absl::StrCat("127.0.0.1:", ports_[i]));
    }
    std::vector<std::string> create = {*FindProgram("redis-cli")};
    create.insert(create.end(), tls_cli_.begin(), tls_cli_.end());
    create.insert(create.end(), {"--cluster", "create"});
    create.insert(create.end(), addresses.begin(), addresses.end());
    create.insert(create.end(), {"--cluster-replicas",
                                 std::to_string(replicas_), "--cluster-yes"});
    ProcessResult made = RunProcess(create);
    if (made.exit_code != 0) {
      return absl::InternalError("redis-cli --cluster create: " + made.output);
    }
    return WaitUntilSettled();
  }

  // Replicas join after the masters, and show in CLUSTER SLOTS some
  // seconds later: until every node's names them all, a client's first map
  // would leave them out. For tests of replica reads (the others need not
  // wait).
  absl::Status WaitUntilReplicasListed() {
    const int n = static_cast<int>(ports_.size());
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      bool all = true;
      for (int i = 0; i < n && all; ++i) {
        all = NamedInSlots(i) == n;
      }
      if (all) return absl::OkStatus();
      absl::SleepFor(absl::Milliseconds(100));
    }
    return absl::DeadlineExceededError(
        "the replicas never all showed in CLUSTER SLOTS: " +
        Cli(0, {"CLUSTER", "SLOTS"}));
  }

  // Until every live node says the cluster is ok and agrees on which
  // nodes are masters.
  absl::Status WaitUntilSettled(absl::Duration within = absl::Seconds(60)) {
    const absl::Time deadline = absl::Now() + within;
    while (absl::Now() < deadline) {
      bool ok = true;
      for (size_t i = 0; i < pids_.size() && ok; ++i) {
        if (pids_[i] <= 0 || stopped_[i]) continue;
        ok = absl::StrContains(Cli(static_cast<int>(i), {"CLUSTER", "INFO"}),
                               "cluster_state:ok");
      }
      if (ok) return absl::OkStatus();
      absl::SleepFor(absl::Milliseconds(100));
    }
    return absl::DeadlineExceededError("the cluster did not settle");
  }

  void Kill(int i) {
    if (i < 0 || pids_[i] <= 0) return;
    if (stopped_[i]) kill(pids_[i], SIGCONT);
    kill(pids_[i], SIGKILL);
    WaitProcess(pids_[i], absl::Minutes(1));
    pids_[i] = -1;
  }
  // Node `i` (a live one: a pid of -1 would signal every process).
  void Stop(int i) {
    if (i < 0 || pids_[i] <= 0) return;
    kill(pids_[i], SIGSTOP);
    stopped_[i] = true;
  }
  void Continue(int i) {
    if (i < 0 || pids_[i] <= 0) return;
    kill(pids_[i], SIGCONT);
    stopped_[i] = false;
  }

  std::string Cli(int i, const std::vector<std::string>& command,
                  absl::Duration timeout = absl::Minutes(2)) const {
    std::vector<std::string> argv = {*FindProgram("redis-cli"), "-p",
                                     std::to_string(ports_[i]), "-c"};
    argv.insert(argv.end(), tls_cli_.begin(), tls_cli_.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return RunProcess(argv, timeout).output;
  }

  // The node that is the master of `slot` now, as node `asked` sees it;
  // -1 when none.
  int MasterOf(int slot, int asked = -1) const {
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (asked < 0 && (pids_[i] <= 0 || stopped_[i])) continue;
      const int from = asked < 0 ? static_cast<int>(i) : asked;
      for (absl::string_view line :
           absl::StrSplit(Cli(from, {"CLUSTER", "NODES"}), '\n')) {
        const std::vector<std::string> f = absl::StrSplit(line, ' ');
        if (f.size() < 9 || !absl::StrContains(f[2], "master") ||
            absl::StrContains(f[2], "fail")) {
          continue;
        }
        for (size_t k = 8; k < f.size(); ++k) {
          const std::vector<std::string> range = absl::StrSplit(f[k], '-');
          int first = 0, last = 0;
          if (!absl::SimpleAtoi(range[0], &first)) continue;
          last = first;
          if (range.size() == 2 && !absl::SimpleAtoi(range[1], &last)) continue;
          if (slot >= first && slot <= last) return IndexOfPort(f[1]);
        }
      }
      return -1;
    }
    return -1;
  }

  // The live nodes that replicate node `master`, as node `master` sees it.
  std::vector<int> ReplicasOf(int master) const {
    const std::string id = Id(master);
    std::vector<int> replicas;
    for (absl::string_view line :
         absl::StrSplit(Cli(master, {"CLUSTER", "NODES"}), '\n')) {
      const std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() < 8 || !absl::StrContains(f[2], "slave") ||
          absl::StrContains(f[2], "fail") || f[3] != id) {
        continue;
      }
      const int i = IndexOfPort(f[1]);
      if (i >= 0 && pids_[i] > 0) replicas.push_back(i);
    }
    return replicas;
  }

  // The node id of node `i`.
  std::string Id(int i) const {
    std::string id = Cli(i, {"CLUSTER", "MYID"});
    while (!id.empty() && id.back() == '\n') id.pop_back();
    return id;
  }

  int port(int i) const { return ports_[i]; }
  int size() const { return static_cast<int>(ports_.size()); }

  // redis-cluster://127.0.0.1:P, or redis-cluster+tls://, (one seed: the
  // rest is found from it).
  std::string url() const {
    return absl::StrCat(
        tls_cli_.empty() ? "redis-cluster" : "redis-cluster+tls",
        "://127.0.0.1:", ports_[0]);
  }

 private:
  // Starts node `i` on a free port and waits until it answers. A port
  // that another process took meanwhile makes the server exit: then it is
  // started again on another.
  absl::Status StartNode(int i) {
    const std::string dir = absl::StrCat(dir_, "/node", i);
    std::filesystem::create_directories(dir);
    std::string log;
    for (int attempt = 0; attempt < 5; ++attempt) {
      const int port = FreeLoopbackPort(/*with_bus=*/true);
      if (port < 0) return absl::UnavailableError("no free ports");
      ports_[i] = port;
      std::vector<std::string> argv = {*FindProgram("redis-server")};
      if (tls_server_.empty()) {
        argv.insert(argv.end(), {"--port", std::to_string(port)});
      } else {
        argv.insert(argv.end(),
                    {"--port", "0", "--tls-port", std::to_string(port)});
        argv.insert(argv.end(), tls_server_.begin(), tls_server_.end());
      }
      std::filesystem::remove(dir + "/nodes.conf");
      argv.insert(argv.end(),
                  {"--bind", "127.0.0.1", "--cluster-enabled", "yes",
                   "--cluster-config-file", dir + "/nodes.conf",
                   "--cluster-node-timeout", "1000",
                   // A replica takes over however long since it last
                   // heard from its master (an idle test cluster's
                   // replicas hear little).
                   "--cluster-replica-validity-factor", "0", "--dir", dir,
                   "--save", "", "--appendonly", "no", "--protected-mode", "no",
                   "--unixsocket", dir + "/redis.sock"});
      pids_[i] =
          SpawnProcess({.argv = argv, .output_path = dir + "/redis.log"});
      const absl::Time deadline = absl::Now() + absl::Seconds(30);
      bool exited = false;
      while (!exited && absl::Now() < deadline) {
        // Asked on its own Unix socket (nothing else can answer there, and
        // a probe cannot hang on whatever else holds the TCP port), then on
        // the port: this server, not another test's that took it first.
        const std::string me = absl::StrCat("process_id:", pids_[i], "\r");
        const std::string on_socket =
            RunProcess({*FindProgram("redis-cli"), "-s", dir + "/redis.sock",
                        "INFO", "server"},
                       absl::Seconds(5))
                .output;
        if (absl::StrContains(on_socket, me) &&
            absl::StrContains(Cli(i, {"INFO", "server"}, absl::Seconds(5)),
                              me)) {
          return absl::OkStatus();
        }
        exited = ChildExited(pids_[i]);
        if (!exited) absl::SleepFor(absl::Milliseconds(20));
      }
      log = ReadFile(dir + "/redis.log");
      if (!exited) {
        Kill(i);
        return absl::DeadlineExceededError(absl::StrCat(
            "redis-server on port ", port, " did not answer: ", log));
      }
      pids_[i] = -1;  // a port taken meanwhile: try another
    }
    return absl::UnavailableError("redis-server did not start: " + log);
  }

  // How many nodes (masters and replicas) node `i`'s CLUSTER SLOTS names.
  int NamedInSlots(int i) const {
    // redis-cli prints each field of the reply on a line of its own: a
    // node is its host's line, then its port's (not a slot number).
    const std::string slots = "\n" + Cli(i, {"CLUSTER", "SLOTS"});
    int named = 0;
    for (int port : ports_) {
      named +=
          absl::StrContains(slots, absl::StrCat("\n127.0.0.1\n", port, "\n"));
    }
    return named;
  }

  int IndexOfPort(absl::string_view address) const {
    // "127.0.0.1:PORT@BUSPORT"
    const size_t colon = address.find(':');
    const size_t at = address.find('@');
    int port = 0;
    if (colon == absl::string_view::npos ||
        !absl::SimpleAtoi(address.substr(colon + 1, at - colon - 1), &port)) {
      return -1;
    }
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (ports_[i] == port) return static_cast<int>(i);
    }
    return -1;
  }

  const std::string dir_;
  const int masters_;
  const int replicas_;
  std::vector<int> ports_;
  std::vector<pid_t> pids_;
  std::vector<bool> stopped_;
  std::vector<std::string> tls_server_;
  std::vector<std::string> tls_cli_;
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_REDIS_CLUSTER_H_
