#ifndef JITCACHE_SERVER_RPC_SINGLE_FLIGHT_H_
#define JITCACHE_SERVER_RPC_SINGLE_FLIGHT_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/digest.h"

namespace jitcache {

// Joins concurrent requests for one key onto one piece of work. The first
// joiner leads: it starts the work and, when it ends, calls Complete, which
// hands the result to every joiner (leader first) on the completing thread.
// No joiner holds a thread while it waits.
// Thread-safety: all methods may be called from any thread.
template <typename Result>
class SingleFlight {
 public:
  // `leader` is true for the joiner that started the work.
  using Waiter = std::function<void(const Result& result, bool leader)>;

  // Returns true when the caller leads and must start the work.
  bool Join(const Digest& key, Waiter waiter) {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = flights_.try_emplace(key);
    it->second.push_back(std::move(waiter));
    return inserted;
  }

  // Ends the flight for `key`; waiters run outside the lock, so a waiter may
  // join a new flight for the same key.
  void Complete(const Digest& key, const Result& result) {
    std::vector<Waiter> waiters;
    {
      absl::MutexLock lock(&mu_);
      auto it = flights_.find(key);
      if (it == flights_.end()) return;
      waiters = std::move(it->second);
      flights_.erase(it);
    }
    for (size_t i = 0; i < waiters.size(); ++i) waiters[i](result, i == 0);
  }

  // Joiners waiting, over all flights.
  size_t waiters() const {
    absl::MutexLock lock(&mu_);
    size_t n = 0;
    for (const auto& [key, waiters] : flights_) n += waiters.size();
    return n;
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Digest, std::vector<Waiter>> flights_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_SINGLE_FLIGHT_H_
