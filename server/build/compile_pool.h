#ifndef JITCACHE_SERVER_BUILD_COMPILE_POOL_H_
#define JITCACHE_SERVER_BUILD_COMPILE_POOL_H_

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace jitcache {

// A fixed set of worker threads over a bounded queue. Compiles run here,
// never on a gRPC thread. Tasks are queued per user (the uid the kernel
// gave the request's connection) and taken round-robin across users (FIFO
// within one), so a user who submits 1,000 distinct compiles, from however
// many processes, delays another user's one compile by at most one task per
// worker, not by the backlog. Each user may have at most
// `max_queued_per_user` tasks waiting, so one user cannot fill the queue
// that everyone shares.
// Thread-safety: Submit may be called from any thread; Shutdown once.
class CompilePool {
 public:
  struct Task {
    std::function<void()> run;
    // Called instead of run when the pool shuts down before the task starts.
    std::function<void()> cancel;
  };

  // max_queued_per_user 0: only `max_queued` bounds a user.
  CompilePool(int workers, size_t max_queued, size_t max_queued_per_user = 0);
  ~CompilePool();  // Shutdown()

  // RESOURCE_EXHAUSTED when max_queued tasks already wait, or this user's
  // max_queued_per_user; UNAVAILABLE after Shutdown. On error the task is
  // not run and not cancelled.
  absl::Status Submit(uid_t user, Task task);

  // Stops taking tasks, cancels those still queued and joins the workers
  // (a task already running finishes).
  void Shutdown();

  size_t queued() const;
  size_t running() const;
  // Tasks waiting, per user that has any.
  std::vector<std::pair<uid_t, size_t>> QueuedByUser() const;

 private:
  void WorkerLoop();

  const size_t max_queued_;
  const size_t max_queued_per_user_;
  mutable absl::Mutex mu_;
  // Per-user FIFOs; `turns_` lists the users with queued work, in the order
  // they are served.
  absl::flat_hash_map<uid_t, std::deque<Task>> queues_ ABSL_GUARDED_BY(mu_);
  std::deque<uid_t> turns_ ABSL_GUARDED_BY(mu_);
  size_t queued_ ABSL_GUARDED_BY(mu_) = 0;
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_COMPILE_POOL_H_
