#ifndef JITCACHE_SERVER_BUILD_WORKER_SANDBOX_H_
#define JITCACHE_SERVER_BUILD_WORKER_SANDBOX_H_

#include <cstdint>

#include "absl/status/status.h"

namespace jitcache {

// What a worker does to itself before it runs anyone's program, in order:
//  - dies with the daemon (PR_SET_PDEATHSIG);
//  - caps its address space at `memory_limit_bytes` (RLIMIT_AS; 0: none);
//  - on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, writes a crash frame
//    with its peak address space to `report_fd`, then dies of the signal;
//  - PR_SET_NO_NEW_PRIVS, then a seccomp filter that answers EPERM to what
//    a compiler never needs: sockets, ptrace and other processes' memory,
//    kernel modules, BPF, keyrings, and exec of anything but the
//    descriptors [first_exec_fd, first_exec_fd + exec_fds) (the registered
//    ptxas binaries, ptxas_run.h).
// An error names the step that failed; the worker must not run jobs then.
absl::Status EnterWorkerSandbox(uint64_t memory_limit_bytes, int report_fd,
                                int first_exec_fd = 0, int exec_fds = 0);

// What a job's child does before it enters its compile view, which has no
// /proc: opens its own status file, for the peak its crash frame reports.
absl::Status KeepCrashReportSource();

// What a job's child does once it has entered its compile view
// (compile_view.h): no more mounts, namespaces or root changes, and no exec
// at all unless it `runs_ptxas`.
absl::Status LockDownCompile(bool runs_ptxas = false);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_WORKER_SANDBOX_H_
