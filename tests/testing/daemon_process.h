#ifndef JITCACHE_TESTS_TESTING_DAEMON_PROCESS_H_
#define JITCACHE_TESTS_TESTING_DAEMON_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace jitcache::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

// Runs a program to completion and captures its output.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         absl::Duration timeout = absl::Minutes(2));

// The same, as another user (the caller must be root): supplementary groups
// dropped, then setgid and setuid. Exit code 126 when that fails.
ProcessResult RunProcessAs(const std::vector<std::string>& argv,
                           std::optional<std::pair<uid_t, gid_t>> as,
                           absl::Duration timeout = absl::Minutes(2));

// A jitcached child process on a given socket and store. Not thread-safe.
class DaemonProcess {
 public:
  DaemonProcess(std::string socket, std::string store,
                std::vector<std::string> extra_flags = {});
  ~DaemonProcess();  // Stop()

  // Starts the daemon and waits until it answers Ping.
  absl::Status Start(absl::Duration timeout = absl::Seconds(60));
  // SIGTERM and wait; returns the exit code.
  int Stop();
  // SIGKILL: a crash, leaving the socket file behind.
  void Kill();
  bool running() const { return pid_ > 0; }
  // From the next Start: no file the daemon writes may grow past `bytes`
  // (RLIMIT_FSIZE), so its writes fail as on a full disk.
  void set_file_size_limit(uint64_t bytes) { file_size_limit_ = bytes; }
  // What the daemon printed so far.
  std::string Log() const;

  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  std::string store_;
  std::vector<std::string> extra_flags_;
  std::string log_path_;
  pid_t pid_ = -1;
  std::optional<uint64_t> file_size_limit_;
};

// Path of the built jitcached and jitcache binaries.
std::string DaemonBinary();
std::string CliBinary();

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_DAEMON_PROCESS_H_
