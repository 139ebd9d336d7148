#include "server/compile_pool.h"

#include "absl/strings/str_cat.h"

namespace jitcache {

CompilePool::CompilePool(int workers, size_t max_queued)
    : max_queued_(max_queued) {
  if (workers < 1) workers = 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

CompilePool::~CompilePool() { Shutdown(); }

absl::Status CompilePool::Submit(Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the daemon is shutting down");
  if (queue_.size() >= max_queued_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("compile queue is full (", max_queued_,
                     " waiting); retry in a few seconds"));
  }
  queue_.push_back(std::move(task));
  return absl::OkStatus();
}

void CompilePool::WorkerLoop() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CompilePool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task.run();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

void CompilePool::Shutdown() {
  std::deque<Task> cancelled;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    cancelled.swap(queue_);
  }
  for (Task& task : cancelled) {
    if (task.cancel) task.cancel();
  }
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

size_t CompilePool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t CompilePool::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

}  // namespace jitcache
