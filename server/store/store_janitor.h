#ifndef JITCACHE_SERVER_STORE_STORE_JANITOR_H_
#define JITCACHE_SERVER_STORE_STORE_JANITOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/object_store.h"

namespace jitcache {

struct JanitorOptions {
  uint64_t max_size = 0;  // bytes the store's files may take; 0: no cap
  // Past high * max_size, eviction runs until the store is at low * max_size.
  double high_watermark = 0.95;
  double low_watermark = 0.85;
  std::optional<absl::Duration> max_age;  // entries unused this long go
  absl::Duration tick = absl::Seconds(1);
  absl::Duration persist_every = absl::Minutes(1);
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// The store's background housekeeping, on one thread of its own: holds the
// store between the watermarks (exact LRU, see ObjectStore::Evict), drops
// entries older than max_age, writes hits' last-used times back, and runs
// the administrator's evictions and clears. Nothing here runs on a request's
// thread: a write only pokes it.
// Thread-safety: every public method may be called from any thread.
class StoreJanitor {
 public:
  StoreJanitor(ObjectStore* store, JanitorOptions options);
  // Stops the thread; queued admin work is answered UNAVAILABLE.
  ~StoreJanitor();

  // A write happened: check the size now rather than at the next tick.
  void Poke();
  // The store's write listener (ObjectStore::OnWrite): pokes, and past the
  // high watermark makes the writer wait for (and run) an eviction, so that
  // writers faster than eviction cannot push the store past the cap.
  void AfterWrite();

  struct Report {
    absl::Status status;
    EvictionResult evicted;
    uint64_t bytes_before = 0, bytes_after = 0;
  };
  // Runs on the janitor's thread, then calls `done` there. An eviction to
  // `to_size` (file bytes) and/or of entries unused since `older_than`.
  void EvictNow(std::optional<uint64_t> to_size,
                std::optional<absl::Time> older_than,
                std::function<void(Report)> done);
  void ClearNow(std::function<void(Report)> done);

  const JanitorOptions& options() const { return options_; }
  uint64_t runs() const;  // size-driven eviction passes so far

 private:
  // Queues admin work; `done` gets its result and the sizes around it, or
  // UNAVAILABLE when the janitor stops first.
  void Enqueue(std::function<absl::StatusOr<EvictionResult>()> work,
               std::function<void(Report)> done);
  void Loop();
  // Evicts and reclaims until the store's files take at most `target`.
  absl::StatusOr<EvictionResult> EvictToSize(uint64_t target);
  // A size-driven pass down to the low watermark, counted and logged.
  void EvictToLowWatermark() ABSL_EXCLUSIVE_LOCKS_REQUIRED(evict_mu_);
  void Housekeep();
  uint64_t HighWatermarkBytes() const;

  ObjectStore* const store_;
  const JanitorOptions options_;
  // One eviction at a time: the janitor's, a writer's (AfterWrite) or an
  // administrator's.
  absl::Mutex evict_mu_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  // Each runs with true, or with false when the janitor stops first.
  std::deque<std::function<void(bool run)>> work_ ABSL_GUARDED_BY(mu_);
  uint64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_persist_;  // janitor thread only
  std::thread thread_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_STORE_JANITOR_H_
