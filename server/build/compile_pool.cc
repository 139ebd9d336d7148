#include "server/build/compile_pool.h"

#include "absl/strings/str_cat.h"

namespace jitcache {

CompilePool::CompilePool(int workers, size_t max_queued,
                         size_t max_queued_per_user)
    : max_queued_(max_queued), max_queued_per_user_(max_queued_per_user) {
  if (workers < 1) workers = 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

CompilePool::~CompilePool() { Shutdown(); }

absl::Status CompilePool::Submit(uid_t user, Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the daemon is shutting down");
  if (queued_ >= max_queued_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("compile queue is full (", max_queued_,
                     " waiting); retry in a few seconds"));
  }
  std::deque<Task>& queue = queues_[user];
  if (max_queued_per_user_ > 0 && queue.size() >= max_queued_per_user_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "uid ", user, " already has ", queue.size(),
        " compiles waiting (--max_queued_per_user); retry when some finish"));
  }
  if (queue.empty()) turns_.push_back(user);
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
      // Serve the user whose turn it is; they go to the back of the line if
      // they have more.
      const uid_t user = turns_.front();
      turns_.pop_front();
      auto it = queues_.find(user);
      task = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) {
        queues_.erase(it);
      } else {
        turns_.push_back(user);
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
    for (auto& [user, queue] : queues_) {
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

std::vector<std::pair<uid_t, size_t>> CompilePool::QueuedByUser() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<uid_t, size_t>> out;
  for (const auto& [user, queue] : queues_)
    out.emplace_back(user, queue.size());
  return out;
}

}  // namespace jitcache
