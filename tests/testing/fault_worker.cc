// jitcache_fault_worker: the real jitcache-worker, plus faults on cue, for
// the isolation tests (jitcached --worker_binary=...). A compile whose source
// contains
//   JITCACHE_FAULT_CRASH    dies of SIGSEGV
//   JITCACHE_FAULT_HANG     never answers
//   JITCACHE_FAULT_ALLOC    allocates and touches memory until malloc fails,
//                           then aborts (as a compiler that runs out does)
//   JITCACHE_FAULT_ESCAPE   tries exec, a TCP socket and ptrace, and answers
//                           a compile error whose log says what each gave
// and a link whose options name -kernels-used=JITCACHE_FAULT_HANG never
// answers. Everything else is compiled and linked for real.
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/build/worker_main.h"

namespace {

using jitcache::CompileJob;
using jitcache::CompileResult;
using jitcache::LinkJob;
using Faked = std::optional<absl::StatusOr<CompileResult>>;

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
    CompileResult result;
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

Faked Link(const LinkJob& job) {
  for (const std::string& option : job.options) {
    if (absl::StrContains(option, "JITCACHE_FAULT_HANG")) Hang();
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  return jitcache::RunWorker(argc, argv, {&Compile, &Link});
}
