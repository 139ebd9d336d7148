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

// What the dynamic loader maps for `argv` (run with
// LD_TRACE_LOADED_OBJECTS=1 and `env` added): every "name => path" line,
// and those that are not the C and C++ runtimes (libc, libstdc++, libm,
// libgcc_s). A front end that loads nothing of its own (gRPC, protobuf,
// Abseil, libcrypto) has none of the latter.
struct LoadedLibraries {
  int exit_code = -1;
  std::string output;
  std::vector<std::string> all;
  std::vector<std::string> beyond_the_runtimes;
};
LoadedLibraries LibrariesLoadedBy(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& env = {});

// Another user (the caller must be root): supplementary groups set to
// `groups`, then setgid and setuid; exit code 126 when that fails.
struct RunAs {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
};

// A child process as a service manager starts one.
struct SpawnOptions {
  std::vector<std::string> argv = {};  // argv[0] is a path
  std::vector<std::string> env = {};   // "NAME=VALUE", added to this process's
  // Listening sockets passed as fds 3, 4, ... with LISTEN_FDS and
  // LISTEN_PID (the child's pid) set: socket activation.
  std::vector<int> listen_fds = {};
  std::string output_path = "/dev/null";  // stdout and stderr
  std::optional<RunAs> as = std::nullopt;
};
pid_t SpawnProcess(const SpawnOptions& options);
// RunProcess, as another user when `as` is given.
ProcessResult RunProcessAs(const std::vector<std::string>& argv,
                           const std::optional<RunAs>& as,
                           absl::Duration timeout = absl::Minutes(2));
// Waits for `pid` to exit: its exit code, -1 when killed by a signal or
// still running after `timeout` (then it is killed).
int WaitProcess(pid_t pid, absl::Duration timeout);

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
  pid_t pid() const { return pid_; }
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
