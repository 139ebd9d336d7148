#ifndef JITCACHE_TESTS_TESTING_REDIS_SERVER_H_
#define JITCACHE_TESTS_TESTING_REDIS_SERVER_H_

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/testing/daemon_process.h"
#include "tests/testing/test_env.h"

namespace jitcache::testing {

// Whether `port` on the loopback address can be bound now.
inline bool LoopbackPortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// The first port the kernel hands out for outgoing connections (32768
// unless configured otherwise). Ports below it are only taken by bind, so
// a port found free there is not taken meanwhile by some connection.
// A range that leaves less than that (it starts below 12000) is not
// followed: there is no safe port then, and 32768 is as good as any.
inline int FirstEphemeralPort() {
  int first = 32768;
  const std::string range = ReadFile("/proc/sys/net/ipv4/ip_local_port_range");
  if (!range.empty()) first = std::atoi(range.c_str());
  return first > 12000 ? first : 32768;
}

// A loopback port that is free now, below the ephemeral range, and
// (`with_bus`) port + 10000 too, which a Redis Cluster node takes for its
// bus; -1 when none is found. Another process may still take it before it
// is bound: starters retry with another port when theirs exits.
inline int FreeLoopbackPort(bool with_bus = false) {
  static std::mt19937 random(std::random_device{}());
  const int end = FirstEphemeralPort() - (with_bus ? 10000 : 0);
  constexpr int kFirst = 1024;
  for (int tries = 0; tries < 200; ++tries) {
    const int port = kFirst + static_cast<int>(random() % (end - kFirst));
    if (LoopbackPortFree(port) &&
        (!with_bus || LoopbackPortFree(port + 10000))) {
      return port;
    }
  }
  return -1;
}

// Whether child `pid` has exited (it is reaped then, or was already: no
// such child); false while it runs.
inline bool ChildExited(pid_t pid) {
  if (pid <= 0) return true;
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

// A private redis-server (Debian's) on a Unix socket, with no persistence.
// Start, Kill (SIGKILL, as a crash) and Start again on the same socket.
// Not thread-safe.
class RedisServer {
 public:
  // `config`: more redis-server arguments (ACL users, say); `cli_auth`:
  // what redis-cli needs to log in then (--user U --pass P).
  explicit RedisServer(std::string socket, std::vector<std::string> config = {},
                       std::vector<std::string> cli_auth = {})
      : socket_(std::move(socket)),
        config_(std::move(config)),
        cli_auth_(std::move(cli_auth)) {}
  ~RedisServer() { Kill(); }

  static bool Available() {
    return FindProgram("redis-server").has_value() &&
           FindProgram("redis-cli").has_value();
  }

  absl::Status Start() {
    unlink(socket_.c_str());
    std::vector<std::string> argv = {*FindProgram("redis-server"),
                                     "--port",
                                     "0",
                                     "--unixsocket",
                                     socket_,
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no"};
    argv.insert(argv.end(), config_.begin(), config_.end());
    pid_ = SpawnProcess({.argv = argv, .output_path = socket_ + ".log"});
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      if (Cli({"PING"}) == "PONG\n") return absl::OkStatus();
      if (ChildExited(pid_)) {
        pid_ = -1;
        return absl::UnavailableError(
            absl::StrCat("redis-server exited: ", ReadFile(socket_ + ".log")));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "redis-server did not start: ", ReadFile(socket_ + ".log")));
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    WaitProcess(pid_, absl::Minutes(1));
    pid_ = -1;
  }

  // redis-cli's output for one command.
  std::string Cli(const std::vector<std::string>& command) const {
    std::vector<std::string> argv = {*FindProgram("redis-cli"), "-s", socket_,
                                     "--no-auth-warning"};
    argv.insert(argv.end(), cli_auth_.begin(), cli_auth_.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return RunProcess(argv).output;
  }

  std::string url() const { return "unix://" + socket_; }

 private:
  std::string socket_;
  std::vector<std::string> config_;
  std::vector<std::string> cli_auth_;
  pid_t pid_ = -1;
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_REDIS_SERVER_H_
