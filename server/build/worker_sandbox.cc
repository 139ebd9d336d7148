#include "server/build/worker_sandbox.h"

#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/length_frame.h"
#include "common/little_endian.h"
#include "server/build/worker_protocol.h"

namespace jitcache {
namespace {

int report_fd = -1;
// This process's /proc/self/status, opened before a compile view hides
// /proc; -1: open it when needed.
int status_fd = -1;

// Async-signal-safe: open/read/write only, no allocation.
uint64_t PeakAddressSpaceBytes() {
  const int fd = status_fd >= 0
                     ? status_fd
                     : open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];
  const ssize_t n = pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (fd != status_fd) close(fd);
  if (n <= 0) return 0;
  buffer[n] = '\0';
  const char* at = strstr(buffer, "VmPeak:");
  if (at == nullptr) return 0;
  at += 7;
  while (*at == ' ' || *at == '\t') ++at;
  uint64_t kib = 0;
  while (*at >= '0' && *at <= '9') kib = kib * 10 + (*at++ - '0');
  return kib * 1024;
}

void OnFatalSignal(int signal) {
  const uint64_t peak = PeakAddressSpaceBytes();
  char report[frame::kHeaderBytes + 8];
  frame::PutHeader(report, kCrashFrameLength);
  le::Put<uint64_t>(report + frame::kHeaderBytes, peak);
  [[maybe_unused]] ssize_t n = write(report_fd, report, sizeof(report));
  // SA_RESETHAND restored the default: the worker dies of `signal`.
  raise(signal);
}

// One EPERM answer: to `syscall`, when every comparison holds (none:
// always).
struct Denial {
  int syscall;
  std::vector<scmp_arg_cmp> when = {};
};

// Adds a seccomp filter answering EPERM to `denials` (filters stack: a
// later one can only take more away).
absl::Status Deny(const std::vector<Denial>& denials) {
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return absl::InternalError("seccomp_init failed");
  int failed = 0;
  for (const Denial& d : denials) {
    if (seccomp_rule_add_array(filter, SCMP_ACT_ERRNO(EPERM), d.syscall,
                               static_cast<unsigned>(d.when.size()),
                               d.when.data()) != 0) {
      ++failed;
    }
  }
  const int loaded = failed == 0 ? seccomp_load(filter) : -1;
  seccomp_release(filter);
  if (failed != 0 || loaded != 0) {
    return absl::InternalError(
        absl::StrCat("seccomp: ", failed, " rules refused, load ",
                     loaded == 0 ? "ok" : std::strerror(-loaded)));
  }
  return absl::OkStatus();
}

absl::Status DenySyscalls(std::initializer_list<int> syscalls) {
  std::vector<Denial> denials;
  for (int syscall : syscalls) denials.push_back({syscall});
  return Deny(denials);
}

// execve never; execveat only of a descriptor in [first, first + count),
// by descriptor alone (AT_EMPTY_PATH).
absl::Status AllowOnlyExecOf(int first, int count) {
  if (count == 0) return DenySyscalls({SCMP_SYS(execve), SCMP_SYS(execveat)});
  // Compared as 64 bits: a descriptor with any high bit set is denied too.
  // A path would be followed instead of the descriptor only when absolute,
  // and the view holds nothing else to run (the toolkit, the loader),
  // read-only and inside this same sandbox.
  return Deny({
      {SCMP_SYS(execve)},
      {SCMP_SYS(execveat),
       {SCMP_A0(SCMP_CMP_LT, static_cast<uint64_t>(first))}},
      {SCMP_SYS(execveat),
       {SCMP_A0(SCMP_CMP_GE, static_cast<uint64_t>(first + count))}},
      {SCMP_SYS(execveat), {SCMP_A4(SCMP_CMP_NE, AT_EMPTY_PATH)}},
  });
}

}  // namespace

absl::Status EnterWorkerSandbox(uint64_t memory_limit_bytes, int fd,
                                int first_exec_fd, int exec_fds) {
  report_fd = fd;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    return absl::InternalError(
        absl::StrCat("PR_SET_PDEATHSIG: ", std::strerror(errno)));
  }
  if (getppid() == 1) {
    return absl::FailedPreconditionError("the daemon is gone");
  }
  if (memory_limit_bytes > 0) {
    const rlimit limit{memory_limit_bytes, memory_limit_bytes};
    if (setrlimit(RLIMIT_AS, &limit) != 0) {
      return absl::InternalError(
          absl::StrCat("RLIMIT_AS: ", std::strerror(errno)));
    }
  }
  // The handler needs a stack of its own: a crash may be a stack overflow
  // (deep template recursion).
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof(alt_stack);
  sigaltstack(&ss, nullptr);
  struct sigaction action {};
  action.sa_handler = &OnFatalSignal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
    sigaction(s, &action, nullptr);
  }

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return absl::InternalError(
        absl::StrCat("PR_SET_NO_NEW_PRIVS: ", std::strerror(errno)));
  }
  // Mounts and namespaces stay allowed until the job's child has entered
  // its compile view (LockDownCompile).
  if (absl::Status s = AllowOnlyExecOf(first_exec_fd, exec_fds); !s.ok()) {
    return s;
  }
  return DenySyscalls(
      {SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect),
       SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept), SCMP_SYS(accept4),
       SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv),
       SCMP_SYS(process_vm_writev), SCMP_SYS(init_module),
       SCMP_SYS(finit_module), SCMP_SYS(kexec_load), SCMP_SYS(bpf),
       SCMP_SYS(perf_event_open), SCMP_SYS(keyctl), SCMP_SYS(add_key),
       SCMP_SYS(request_key), SCMP_SYS(userfaultfd)});
}

absl::Status KeepCrashReportSource() {
  status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (status_fd < 0) {
    return absl::InternalError(
        absl::StrCat("/proc/self/status: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status LockDownCompile(bool runs_ptxas) {
  if (absl::Status s = DenySyscalls({SCMP_SYS(mount), SCMP_SYS(umount2),
                                     SCMP_SYS(unshare), SCMP_SYS(setns),
                                     SCMP_SYS(chroot), SCMP_SYS(pivot_root)});
      !s.ok()) {
    return s;
  }
  return runs_ptxas ? absl::OkStatus() : DenySyscalls({SCMP_SYS(execveat)});
}

}  // namespace jitcache
