#ifndef JITCACHE_SERVER_ENGINE_BOUNDED_KEY_SET_H_
#define JITCACHE_SERVER_ENGINE_BOUNDED_KEY_SET_H_

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "common/digest.h"

namespace jitcache {

// Keys the service remembers in memory about requests it need not run
// again: links that read the caller's files (their run stat'ed files by
// path, server/build/path_stats.h: the caller links them), and records a
// caller said were wrong that a second link showed right. At most kMax
// keys (then all forgotten, and learnt again). Thread-safe.
class BoundedKeySet {
 public:
  static constexpr size_t kMax = 100000;

  void Remember(const Digest& key) {
    absl::MutexLock lock(&mu_);
    if (keys_.size() >= kMax) keys_.clear();
    keys_.insert(key);
  }
  bool Has(const Digest& key) const {
    absl::MutexLock lock(&mu_);
    return keys_.contains(key);
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<Digest> keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_BOUNDED_KEY_SET_H_
