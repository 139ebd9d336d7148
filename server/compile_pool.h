#ifndef JITCACHE_SERVER_COMPILE_POOL_H_
#define JITCACHE_SERVER_COMPILE_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace jitcache {

// A fixed set of worker threads over a bounded queue. Compiles run here,
// never on a gRPC thread. Tasks are queued per client and taken round-robin
// across clients (FIFO within one), so a client that submits 1,000 distinct
// compiles delays another client's one compile by at most one task per
// worker, not by its whole backlog.
// Thread-safety: Submit may be called from any thread; Shutdown once.
class CompilePool {
 public:
  struct Task {
    std::function<void()> run;
    // Called instead of run when the pool shuts down before the task starts.
    std::function<void()> cancel;
  };

  CompilePool(int workers, size_t max_queued);
  ~CompilePool();  // Shutdown()

  // RESOURCE_EXHAUSTED when max_queued tasks already wait; UNAVAILABLE after
  // Shutdown. On error the task is not run and not cancelled.
  absl::Status Submit(const std::string& client, Task task);

  // Stops taking tasks, cancels those still queued and joins the workers
  // (a task already running finishes).
  void Shutdown();

  size_t queued() const;
  size_t running() const;

 private:
  void WorkerLoop();

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  // Per-client FIFOs; `turns_` lists the clients with queued work, in the
  // order they are served.
  absl::flat_hash_map<std::string, std::deque<Task>> queues_
      ABSL_GUARDED_BY(mu_);
  std::deque<std::string> turns_ ABSL_GUARDED_BY(mu_);
  size_t queued_ ABSL_GUARDED_BY(mu_) = 0;
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_COMPILE_POOL_H_
