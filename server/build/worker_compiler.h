#ifndef JITCACHE_SERVER_BUILD_WORKER_COMPILER_H_
#define JITCACHE_SERVER_BUILD_WORKER_COMPILER_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/build/compiler.h"

namespace jitcache {

struct WorkerOptions {
  std::string binary;         // jitcache-worker
  uint64_t memory_limit = 0;  // address space per worker; 0: none
  // Shown in the DEADLINE_EXCEEDED of a compile it kills.
  absl::Duration time_limit = absl::Minutes(10);
};

// Whether an environment entry ("NAME=value") changes what a compiler
// answers, and so never reaches a worker (NVJITLINK_*, libNVVM's).
bool ChangesCompilerAnswers(std::string_view variable);

// A Compiler that runs every compile and link in a jitcache-worker process
// (worker_main.h), so that a program that crashes the compiler, exhausts
// memory or runs for minutes costs a worker, never the daemon. Workers are
// started on demand, serve many jobs each, and are replaced when they die.
// The calling thread waits on its worker's socket, never a gRPC thread
// (callers are the compile pool's threads). The toolchain is the one
// `toolchain_source` found in-process (fingerprint and probe compile).
//
// A job ends one of these ways:
//  - the worker's answer (a result, or the compiler's own error);
//  - past its deadline: the worker is killed, DEADLINE_EXCEEDED;
//  - the compiler ended the job's process without an answer (libNVVM's
//    `-Xopt -help` calls exit): INTERNAL at once, the worker kept;
//  - the worker died: RESOURCE_EXHAUSTED naming --compile_memory_limit when
//    it was near it, else INTERNAL "the compiler crashed (SIGSEGV) on this
//    program";
//  - CancelAll or the job's cancel flag: the worker is killed, UNAVAILABLE.
// Errors are never results: the service caches none of them.
// Thread-safety: any method from any thread.
class WorkerCompiler final : public Compiler {
 public:
  static absl::StatusOr<std::unique_ptr<WorkerCompiler>> Create(
      WorkerOptions options, std::unique_ptr<Compiler> toolchain_source);
  ~WorkerCompiler() override;

  absl::StatusOr<ActionResult> Compile(const CompileJob& job) override;
  absl::StatusOr<ActionResult> Link(const LinkJob& job) override;
  absl::StatusOr<ActionResult> Ptxas(const PtxasJob& job) override;
  absl::StatusOr<ActionResult> Nvvm(const NvvmJob& job) override;
  const ToolchainInfo& toolchain() const override {
    return toolchain_source_->toolchain();
  }
  CompilerStats stats() const override;

  // Kills every worker: running jobs answer UNAVAILABLE.
  void CancelAll() override;

 private:
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
  };
  WorkerCompiler(WorkerOptions options, std::unique_ptr<Compiler> source)
      : options_(std::move(options)), toolchain_source_(std::move(source)) {}

  absl::StatusOr<ActionResult> Run(const std::string& request,
                                   absl::Time deadline,
                                   const std::atomic<bool>* cancelled,
                                   absl::string_view what);
  absl::StatusOr<Worker> Acquire();
  void Release(Worker worker);
  void Forget(const Worker& worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets, kills and reaps `worker`; returns how it ended (waitpid
  // status). `dying`: it is ending by itself, give it a moment first.
  int Kill(Worker worker, bool dying);
  static int Reap(Worker worker, bool dying);
  absl::StatusOr<Worker> Spawn();

  const WorkerOptions options_;
  const std::unique_ptr<Compiler> toolchain_source_;
  std::vector<std::string> argv_;  // the worker's command line

  mutable absl::Mutex mu_;
  std::vector<Worker> idle_ ABSL_GUARDED_BY(mu_);
  std::vector<Worker> busy_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::atomic<uint64_t> started_{0};
  std::atomic<uint64_t> crashed_{0};
  std::atomic<uint64_t> ended_without_answer_{0};
  std::atomic<uint64_t> memory_limited_{0};
  std::atomic<uint64_t> time_limited_{0};
};

// jitcache-worker next to the running executable.
std::string DefaultWorkerBinary();

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_WORKER_COMPILER_H_
