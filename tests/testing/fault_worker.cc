// jitcache_fault_worker: the real jitcache-worker, plus faults on cue, for
// the isolation tests (jitcached --worker_binary=...). A compile whose source
// contains
//   JITCACHE_FAULT_CRASH    dies of SIGSEGV
//   JITCACHE_FAULT_HANG     never answers
//   JITCACHE_FAULT_EXIT     prints a line and exits the process with status
//                           0, as libNVVM does for `-Xopt -help`
//   JITCACHE_FAULT_ALLOC    allocates and touches memory until malloc fails,
//                           then aborts (as a compiler that runs out does)
//   JITCACHE_FAULT_ESCAPE   tries exec, a TCP socket and ptrace, and answers
//                           a compile error whose log says what each gave
// and a link whose options name -kernels-used=JITCACHE_FAULT_HANG never
// answers; one that names -kernels-used=JITCACHE_FAULT_WRONG_ONCE is linked
// for real, but the first such link of this worker answers with a line
// added to nvJitLinkCreate's info log (a record no real nvJitLink gives).
// Everything else is compiled and linked for real.
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/build/cuda_compiler.h"
#include "server/build/worker_main.h"

namespace {

using jitcache::ActionResult;
using jitcache::CompileJob;
using jitcache::LinkJob;
using Faked = std::optional<absl::StatusOr<ActionResult>>;

[[noreturn]] void Hang() {
  while (true) pause();
}

std::string Outcome(int result) {
  return result < 0 ? strerror(errno) : "allowed";
}

Faked Compile(const CompileJob& job) {
  if (absl::StrContains(job.source, "JITCACHE_FAULT_CRASH")) {
    raise(SIGSEGV);
  }
  if (absl::StrContains(job.source, "JITCACHE_FAULT_HANG")) Hang();
  if (absl::StrContains(job.source, "JITCACHE_FAULT_EXIT")) {
    std::puts("USAGE: a compiler's own help, then exit(0)");
    std::exit(0);
  }
  if (absl::StrContains(job.source, "JITCACHE_FAULT_ALLOC")) {
    std::vector<char*> blocks;
    while (true) {
      char* block = static_cast<char*>(malloc(64 << 20));
      if (block == nullptr) abort();
      memset(block, 1, 64 << 20);
      blocks.push_back(block);
    }
  }
  if (absl::StrContains(job.source, "JITCACHE_FAULT_ESCAPE")) {
    ActionResult result;
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    const int exec = execv("/bin/true", argv);
    result.log = absl::StrCat("exec: ", Outcome(exec), "\n");
    const int tcp = socket(AF_INET, SOCK_STREAM, 0);
    absl::StrAppend(&result.log, "socket: ", Outcome(tcp), "\n");
    const int traced = static_cast<int>(ptrace(PTRACE_ATTACH, getppid(), 0, 0));
    absl::StrAppend(&result.log, "ptrace: ", Outcome(traced), "\n");
    result.ok = false;
    return result;
  }
  return std::nullopt;
}

// Shared by this worker and every job's child it forks: how many
// JITCACHE_FAULT_WRONG_ONCE links it has answered.
std::atomic<int>* wrong_links = nullptr;

Faked Link(const LinkJob& job) {
  bool wrong_once = false;
  for (const std::string& option : job.options) {
    if (absl::StrContains(option, "JITCACHE_FAULT_HANG")) Hang();
    wrong_once |= absl::StrContains(option, "JITCACHE_FAULT_WRONG_ONCE");
  }
  if (!wrong_once || wrong_links == nullptr || wrong_links->fetch_add(1) > 0) {
    return std::nullopt;
  }
  absl::StatusOr<ActionResult> result =
      jitcache::CudaCompiler::ForWorker({})->Link(job);
  if (result.ok() && result->link_trace.has_value() &&
      result->link_trace->steps_size() > 0) {
    auto* logs = result->link_trace->mutable_steps(0)->mutable_logs();
    logs->set_info_log(logs->info_log() + "jitcache fault: a wrong record\n");
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  void* shared = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared != MAP_FAILED) wrong_links = new (shared) std::atomic<int>(0);
  return jitcache::RunWorker(argc, argv, {&Compile, &Link});
}
