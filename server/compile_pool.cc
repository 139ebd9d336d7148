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

absl::Status CompilePool::Submit(const std::string& client, Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the daemon is shutting down");
  if (queued_ >= max_queued_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("compile queue is full (", max_queued_,
                     " waiting); retry in a few seconds"));
  }
  std::deque<Task>& queue = queues_[client];
  if (queue.empty()) turns_.push_back(client);
  queue.push_back(std::move(task));
  ++queued_;
  return absl::OkStatus();
}

void CompilePool::WorkerLoop() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CompilePool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || p->queued_ > 0;
          },
          this));
      if (queued_ == 0) return;  // stopping and drained
      // Serve the client whose turn it is; it goes to the back of the line
      // if it has more.
      std::string client = std::move(turns_.front());
      turns_.pop_front();
      auto it = queues_.find(client);
      task = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) {
        queues_.erase(it);
      } else {
        turns_.push_back(std::move(client));
      }
      --queued_;
      ++running_;
    }
    task.run();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

void CompilePool::Shutdown() {
  std::vector<Task> cancelled;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [client, queue] : queues_) {
      for (Task& t : queue) cancelled.push_back(std::move(t));
    }
    queues_.clear();
    turns_.clear();
    queued_ = 0;
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
  return queued_;
}

size_t CompilePool::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

}  // namespace jitcache
