#ifndef JITCACHE_SERVER_BUILD_WORKER_MAIN_H_
#define JITCACHE_SERVER_BUILD_WORKER_MAIN_H_

#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "server/build/compiler.h"

namespace jitcache {

// Replaces a job's compile or link when it answers (tests only: a worker
// that crashes, hangs or allocates without bound on cue).
struct WorkerHooks {
  std::function<std::optional<absl::StatusOr<ActionResult>>(const CompileJob&)>
      compile;
  std::function<std::optional<absl::StatusOr<ActionResult>>(const LinkJob&)>
      link;
};

// The body of jitcache-worker:
//   jitcache-worker --fd=N [--include_dir=DIR]... [--memory_limit=BYTES]
// Limits its address space, forbids itself new privileges, the network,
// ptrace and exec (seccomp), then compiles and links the jobs that arrive on
// fd N (see worker_protocol.h) until the daemon closes it. Returns the exit
// status.
int RunWorker(int argc, char** argv, const WorkerHooks& hooks = {});

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_WORKER_MAIN_H_
