#ifndef JITCACHE_SERVER_COMPILE_POOL_H_
#define JITCACHE_SERVER_COMPILE_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace jitcache {

// A fixed set of worker threads over a bounded FIFO queue. Compiles run here,
// never on a gRPC thread.
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
  absl::Status Submit(Task task);

  // Stops taking tasks, cancels those still queued and joins the workers
  // (a task already running finishes).
  void Shutdown();

  size_t queued() const;
  size_t running() const;

 private:
  void WorkerLoop();

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_COMPILE_POOL_H_
