#include "server/build/worker_compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/length_frame.h"
#include "common/log.h"
#include "common/size_units.h"
#include "server/build/worker_protocol.h"

namespace jitcache {
namespace {

// A worker's answer holds an object of up to hundreds of MiB.
constexpr size_t kMaxResponseBytes = size_t{1} << 31;

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev)
                           : absl::StrCat("signal ", signal);
}

}  // namespace

bool ChangesCompilerAnswers(std::string_view variable) {
  // libNVVM 13.0 reads these (its getenv calls during a compile say so):
  // the IR version check, the version it claims, the producer it writes,
  // a log file, and its concurrency.
  for (std::string_view prefix :
       {"NVJITLINK_", "NVVM_", "LIBNVVM_", "NV_NVVM_",
        "LLVM_OVERRIDE_PRODUCER=", "AS_SECURE_LOG_FILE="}) {
    if (variable.starts_with(prefix)) return true;
  }
  return false;
}

std::string DefaultWorkerBinary() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "jitcache-worker";
  const std::string self(path, n);
  return self.substr(0, self.rfind('/') + 1) + "jitcache-worker";
}

absl::StatusOr<std::unique_ptr<WorkerCompiler>> WorkerCompiler::Create(
    WorkerOptions options, std::unique_ptr<Compiler> toolchain_source) {
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the compile worker ", options.binary, " cannot be run (",
                     strerror(errno),
                     "); install it next to jitcached or name it with "
                     "--worker_binary"));
  }
  auto compiler = std::unique_ptr<WorkerCompiler>(
      new WorkerCompiler(std::move(options), std::move(toolchain_source)));
  compiler->argv_ = {
      compiler->options_.binary, "--fd=3",
      absl::StrCat("--memory_limit=", compiler->options_.memory_limit),
      "--cuda_root=" + compiler->toolchain().root};
  for (const std::string& dir : compiler->toolchain().include_dirs) {
    compiler->argv_.push_back("--include_dir=" + dir);
  }
  for (const ToolchainInfo::Library& ptxas : compiler->toolchain().ptxas) {
    compiler->argv_.push_back("--ptxas=" + ptxas.path);
  }
  if (compiler->toolchain().libnvvm.has_value()) {
    // With the stamp the daemon hashed: a file replaced since is not loaded.
    const ToolchainInfo::Library& nvvm = *compiler->toolchain().libnvvm;
    compiler->argv_.push_back("--libnvvm=" + nvvm.path);
    compiler->argv_.push_back(absl::StrCat(
        "--libnvvm_stamp=", nvvm.stamp.dev, ":", nvvm.stamp.ino, ":",
        nvvm.stamp.size, ":", nvvm.stamp.mtime_ns, ":", nvvm.stamp.ctime_ns));
  }
  return compiler;
}

WorkerCompiler::~WorkerCompiler() { CancelAll(); }

absl::StatusOr<WorkerCompiler::Worker> WorkerCompiler::Spawn() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("socketpair for a compile worker: ", strerror(errno)));
  }
  // Everything the child needs is made before fork: the daemon has threads.
  std::vector<char*> argv;
  for (std::string& arg : argv_) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // The daemon's own environment must not reach a record: what changes the
  // compilers' answers (nvJitLink's trace lines, what libNVVM reads) is
  // left out.
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (ChangesCompilerAnswers(*e)) continue;
    envp.push_back(*e);
  }
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(sv[0]);
    close(sv[1]);
    return absl::ResourceExhaustedError(
        absl::StrCat("fork for a compile worker: ", strerror(err)));
  }
  if (pid == 0) {
    if (sv[1] == 3) {
      fcntl(3, F_SETFD, 0);
    } else {
      dup2(sv[1], 3);  // clears close-on-exec
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(sv[1]);
  ++started_;
  return Worker{pid, sv[0]};
}

absl::StatusOr<WorkerCompiler::Worker> WorkerCompiler::Acquire() {
  while (true) {
    std::optional<Worker> idle;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) {
        return absl::UnavailableError("the daemon is shutting down");
      }
      if (idle_.empty()) break;
      idle = idle_.back();
      idle_.pop_back();
    }
    // A worker that died while idle (killed, out of memory) is replaced:
    // the job it would have been handed never sees it.
    int status = 0;
    if (waitpid(idle->pid, &status, WNOHANG) == idle->pid) {
      close(idle->fd);
      JITCACHE_LOG(Warning)
          << "compile worker " << idle->pid << " died while idle ("
          << (WIFSIGNALED(status) ? SignalName(WTERMSIG(status))
                                  : absl::StrCat("exit ", WEXITSTATUS(status)))
          << "); starting another";
      continue;
    }
    absl::MutexLock lock(&mu_);
    busy_.push_back(*idle);
    return *idle;
  }
  absl::StatusOr<Worker> w = Spawn();
  if (!w.ok()) return w.status();
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      busy_.push_back(*w);
      return w;
    }
  }
  Reap(*w, /*dying=*/false);
  return absl::UnavailableError("the daemon is shutting down");
}

void WorkerCompiler::Forget(const Worker& worker) {
  busy_.erase(
      std::remove_if(busy_.begin(), busy_.end(),
                     [&](const Worker& w) { return w.pid == worker.pid; }),
      busy_.end());
}

void WorkerCompiler::Release(Worker worker) {
  {
    absl::MutexLock lock(&mu_);
    Forget(worker);
    if (!stopping_) {
      idle_.push_back(worker);
      return;
    }
  }
  Reap(worker, /*dying=*/false);
}

int WorkerCompiler::Kill(Worker worker, bool dying) {
  {
    absl::MutexLock lock(&mu_);
    Forget(worker);
  }
  return Reap(worker, dying);
}

int WorkerCompiler::Reap(Worker worker, bool dying) {
  // A worker that is dying of its own signal (it closed its socket, or sent
  // its crash frame) gets a moment to finish, so that its status says which
  // signal; one that is merely late is killed at once.
  int status = 0;
  for (int i = 0; dying && i < 200; ++i) {
    if (waitpid(worker.pid, &status, WNOHANG) == worker.pid) {
      close(worker.fd);
      return status;
    }
    usleep(10000);
  }
  kill(worker.pid, SIGKILL);
  waitpid(worker.pid, &status, 0);
  close(worker.fd);
  return status;
}

absl::StatusOr<ActionResult> WorkerCompiler::Compile(const CompileJob& job) {
  return Run(ToWorkerRequest(job).SerializeAsString(), job.deadline,
             job.cancelled, "compile");
}

absl::StatusOr<ActionResult> WorkerCompiler::Link(const LinkJob& job) {
  return Run(ToWorkerRequest(job).SerializeAsString(), job.deadline, nullptr,
             "link");
}

absl::StatusOr<ActionResult> WorkerCompiler::Ptxas(const PtxasJob& job) {
  return Run(ToWorkerRequest(job).SerializeAsString(), job.deadline, nullptr,
             "ptxas run");
}

absl::StatusOr<ActionResult> WorkerCompiler::Nvvm(const NvvmJob& job) {
  if (!toolchain().libnvvm.has_value()) {
    return absl::FailedPreconditionError(
        "this daemon runs no libNVVM (jitcached --libnvvm)");
  }
  return Run(ToWorkerRequest(job).SerializeAsString(), job.deadline, nullptr,
             "libNVVM compile");
}

absl::StatusOr<ActionResult> WorkerCompiler::Run(
    const std::string& request, absl::Time deadline,
    const std::atomic<bool>* cancelled, absl::string_view what) {
  const absl::Time start = absl::Now();
  absl::StatusOr<Worker> acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  const Worker worker = *acquired;
  auto stopping = [&] {
    if (cancelled != nullptr && cancelled->load()) return true;
    absl::MutexLock lock(&mu_);
    return stopping_;
  };
  std::optional<uint64_t> crash_peak;
  bool sent = frame::Write(worker.fd, request);
  while (sent) {
    if (stopping()) {
      Kill(worker, /*dying=*/false);
      return absl::UnavailableError(
          absl::StrCat(what, " cancelled: the daemon is shutting down"));
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      Kill(worker, /*dying=*/false);
      ++time_limited_;
      return absl::DeadlineExceededError(absl::StrCat(
          what, " killed after ", absl::FormatDuration(now - start),
          ": it ran past the daemon's compile-time limit (",
          absl::FormatDuration(options_.time_limit), ")"));
    }
    pollfd p{worker.fd, POLLIN, 0};
    const int wait_ms = static_cast<int>(std::clamp<int64_t>(
        absl::ToInt64Milliseconds(deadline - now) + 1, 1, 100));
    if (poll(&p, 1, wait_ms) <= 0) continue;
    std::optional<std::string> frame =
        ReadFrame(worker.fd, kMaxResponseBytes, &crash_peak);
    if (!frame.has_value()) break;  // the worker died
    v1::WorkerResponse response;
    if (!response.ParseFromString(*frame)) break;
    Release(worker);
    if (response.ended_without_answer()) {
      ++ended_without_answer_;
      JITCACHE_LOG(Warning) << "compile worker " << worker.pid << ": the "
                            << what << " " << response.status_message();
    }
    absl::StatusOr<ActionResult> result =
        FromWorkerResponse(std::move(response));
    if (absl::IsResourceExhausted(result.status())) ++memory_limited_;
    return result;
  }

  const int status = Kill(worker, /*dying=*/true);
  if (stopping()) {
    return absl::UnavailableError(
        absl::StrCat(what, " cancelled: the daemon is shutting down"));
  }
  const uint64_t limit = options_.memory_limit;
  if (limit > 0 && crash_peak.has_value() && *crash_peak >= limit / 10 * 9) {
    ++memory_limited_;
    return absl::ResourceExhaustedError(absl::StrCat(
        "the ", what, " needed more memory than --compile_memory_limit (",
        FormatSize(limit), ") allows"));
  }
  ++crashed_;
  std::string how;
  if (WIFSIGNALED(status)) {
    how = absl::StrCat("crashed (", SignalName(WTERMSIG(status)), ")");
  } else {
    how = absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  JITCACHE_LOG(Warning) << "compile worker " << worker.pid << " " << how
                        << " during a " << what;
  return absl::InternalError(absl::StrCat("the compiler ", how,
                                          " on this program",
                                          what == "link" ? " (link)" : ""));
}

void WorkerCompiler::CancelAll() {
  std::vector<Worker> idle;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    idle.swap(idle_);
    // Running jobs see their worker die and answer UNAVAILABLE.
    for (const Worker& w : busy_) kill(w.pid, SIGKILL);
  }
  for (const Worker& w : idle) Reap(w, /*dying=*/false);
}

CompilerStats WorkerCompiler::stats() const {
  CompilerStats s;
  s.workers_started = started_;
  s.crashes = crashed_;
  s.ended_without_answer = ended_without_answer_;
  s.memory_limited = memory_limited_;
  s.time_limited = time_limited_;
  return s;
}

}  // namespace jitcache
