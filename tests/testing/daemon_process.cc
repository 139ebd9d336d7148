#include "tests/testing/daemon_process.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "jitcache/client.h"

namespace jitcache::testing {
namespace {

extern "C" char** environ;

// Everything is prepared before fork: the child of a threaded process may
// only make async-signal-safe calls.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path,
            const std::optional<RunAs>& as = std::nullopt,
            std::optional<uint64_t> file_size_limit = std::nullopt,
            const std::vector<std::string>& extra_env = {},
            const std::vector<int>& listen_fds = {}) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (listen_fds.empty() || (std::strncmp(*e, "LISTEN_", 7) != 0)) {
      env_strings.emplace_back(*e);
    }
  }
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  size_t pid_slot = 0;
  if (!listen_fds.empty()) {
    env_strings.push_back(absl::StrCat("LISTEN_FDS=", listen_fds.size()));
    pid_slot = env_strings.size();
    env_strings.push_back("LISTEN_PID=" + std::string(12, '\0'));
  }
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (file_size_limit.has_value()) {
    const rlimit limit{*file_size_limit, *file_size_limit};
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  const int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  if (!listen_fds.empty()) {
    // Out of the way first, so that moving one into 3.. never overwrites
    // another.
    std::vector<int> moved;
    for (int f : listen_fds) moved.push_back(fcntl(f, F_DUPFD, 100));
    for (size_t i = 0; i < moved.size(); ++i) {
      dup2(moved[i], 3 + static_cast<int>(i));  // dup2 clears FD_CLOEXEC
    }
    char* slot = env[pid_slot] + std::strlen("LISTEN_PID=");
    char digits[16];
    int n = 0;
    for (pid_t self = getpid(); self > 0; self /= 10) {
      digits[n++] = static_cast<char>('0' + self % 10);
    }
    while (n > 0) *slot++ = digits[--n];
  }
  if (as.has_value() && (setgroups(as->groups.size(), as->groups.data()) != 0 ||
                         setgid(as->gid) != 0 || setuid(as->uid) != 0)) {
    _exit(126);
  }
  execve(args[0], args.data(), env.data());
  _exit(127);
}

int WaitExit(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The build's paths, unless the environment says where the binaries are
// (e.g. when they were copied to another machine to run the GPU tests).
std::string BinaryPath(const char* env, const char* built) {
  const char* path = std::getenv(env);
  return path != nullptr && *path != '\0' ? path : built;
}

}  // namespace

std::string DaemonBinary() {
  return BinaryPath("JITCACHE_DAEMON_BINARY", JITCACHE_DAEMON_BINARY);
}
std::string CliBinary() {
  return BinaryPath("JITCACHE_CLI_BINARY", JITCACHE_CLI_BINARY);
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         absl::Duration timeout) {
  return RunProcessAs(argv, std::nullopt, timeout);
}

LoadedLibraries LibrariesLoadedBy(const std::vector<std::string>& argv,
                                  const std::vector<std::string>& env) {
  std::vector<std::string> command = {"/usr/bin/env",
                                      "LD_TRACE_LOADED_OBJECTS=1"};
  command.insert(command.end(), env.begin(), env.end());
  command.insert(command.end(), argv.begin(), argv.end());
  const ProcessResult traced = RunProcess(command);
  LoadedLibraries loaded{traced.exit_code, traced.output, {}, {}};
  for (absl::string_view line : absl::StrSplit(traced.output, '\n')) {
    if (!absl::StrContains(line, "=>")) continue;
    loaded.all.emplace_back(line);
    const bool runtime = absl::StrContains(line, "libc.so") ||
                         absl::StrContains(line, "libstdc++.so") ||
                         absl::StrContains(line, "libm.so") ||
                         absl::StrContains(line, "libgcc_s.so");
    if (!runtime) loaded.beyond_the_runtimes.emplace_back(line);
  }
  return loaded;
}

pid_t SpawnProcess(const SpawnOptions& options) {
  return Spawn(options.argv, options.output_path, options.as, std::nullopt,
               options.env, options.listen_fds);
}

int WaitProcess(pid_t pid, absl::Duration timeout) {
  return WaitExit(pid, timeout);
}

ProcessResult RunProcessAs(const std::vector<std::string>& argv,
                           const std::optional<RunAs>& as,
                           absl::Duration timeout) {
  char templ[] = "/tmp/jcout.XXXXXX";
  const int fd = mkstemp(templ);
  fchmod(fd, 0666);  // writable by a child that changed its uid
  close(fd);
  const pid_t pid = Spawn(argv, templ, as);
  ProcessResult result;
  result.exit_code = WaitExit(pid, timeout);
  result.output = ReadAll(templ);
  unlink(templ);
  return result;
}

DaemonProcess::DaemonProcess(std::string socket, std::string store,
                             std::vector<std::string> extra_flags)
    : socket_(std::move(socket)),
      store_(std::move(store)),
      extra_flags_(std::move(extra_flags)),
      log_path_(socket_ + ".log") {}

DaemonProcess::~DaemonProcess() { Stop(); }

absl::Status DaemonProcess::Start(absl::Duration timeout) {
  std::vector<std::string> argv = {DaemonBinary(), "--socket=" + socket_,
                                   "--store=" + store_};
  argv.insert(argv.end(), extra_flags_.begin(), extra_flags_.end());
  pid_ = Spawn(argv, log_path_, std::nullopt, file_size_limit_);
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::FailedPreconditionError(
          absl::StrCat("jitcached exited during start: ", Log()));
    }
    // A fresh channel per try: no reconnect backoff carried over.
    absl::StatusOr<Client> client = Client::Connect(
        {.socket_path = socket_, .ping_deadline = absl::Milliseconds(500)});
    if (client.ok() && client->Ping().ok()) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("jitcached did not answer in time: ", Log()));
}

int DaemonProcess::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const int code = WaitExit(pid_, absl::Seconds(60));
  pid_ = -1;
  return code;
}

void DaemonProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  WaitExit(pid_, absl::Seconds(10));
  pid_ = -1;
}

std::string DaemonProcess::Log() const { return ReadAll(log_path_); }

}  // namespace jitcache::testing
