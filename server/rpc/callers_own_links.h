#ifndef JITCACHE_SERVER_RPC_CALLERS_OWN_LINKS_H_
#define JITCACHE_SERVER_RPC_CALLERS_OWN_LINKS_H_

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/digest.h"
#include "server/build/path_stats.h"

namespace jitcache {

// Links the caller must run itself: their run stat'ed files by path
// (source files that line information names; server/build/path_stats.h),
// which only the caller's own nvJitLink sees. Remembered in memory, so that
// a later request for one is refused at once rather than linked again for
// nothing while its caller waits. At most kMax keys (then forgotten and
// learnt again). Thread-safe.
class CallersOwnLinks {
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
  // Whether a run's error is a worker's refusal for that reason.
  static bool IsRefusal(const absl::Status& status) {
    return absl::IsFailedPrecondition(status) &&
           status.message() == kReadsCallersFiles;
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<Digest> keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_CALLERS_OWN_LINKS_H_
