#ifndef JITCACHE_SERVER_ENGINE_SINGLE_FLIGHT_H_
#define JITCACHE_SERVER_ENGINE_SINGLE_FLIGHT_H_

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
    it->second.waiters.push_back(std::move(waiter));
    return inserted;
  }

  // Hands `result` to the flight's leader alone, before the work has
  // fully ended (a compile whose place proof still runs); the others keep
  // waiting, and new joiners keep joining, until Complete. At most once
  // per flight; a waiter runs outside the lock.
  void AnswerLeader(const Digest& key, const Result& result) {
    Waiter leader;
    {
      absl::MutexLock lock(&mu_);
      auto it = flights_.find(key);
      if (it == flights_.end() || it->second.leader_answered) return;
      leader = std::move(it->second.waiters.front());
      it->second.waiters.erase(it->second.waiters.begin());
      it->second.leader_answered = true;
    }
    leader(result, true);
  }

  // Ends the flight for `key`; waiters run outside the lock, so a waiter may
  // join a new flight for the same key.
  void Complete(const Digest& key, const Result& result) {
    Flight flight;
    {
      absl::MutexLock lock(&mu_);
      auto it = flights_.find(key);
      if (it == flights_.end()) return;
      flight = std::move(it->second);
      flights_.erase(it);
    }
    for (size_t i = 0; i < flight.waiters.size(); ++i) {
      flight.waiters[i](result, i == 0 && !flight.leader_answered);
    }
  }

  // Whether work for `key` is under way.
  bool Open(const Digest& key) const {
    absl::MutexLock lock(&mu_);
    return flights_.contains(key);
  }

  // Joiners waiting, over all flights.
  size_t waiters() const {
    absl::MutexLock lock(&mu_);
    size_t n = 0;
    for (const auto& [key, flight] : flights_) n += flight.waiters.size();
    return n;
  }

 private:
  struct Flight {
    std::vector<Waiter> waiters;  // the leader first, until answered
    bool leader_answered = false;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Digest, Flight> flights_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_SINGLE_FLIGHT_H_
