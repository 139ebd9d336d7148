#ifndef JITCACHE_SERVER_ENGINE_USER_STATS_H_
#define JITCACHE_SERVER_ENGINE_USER_STATS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// What each user (by uid) has asked of the daemon. A user's counters are
// made on their first request and live as long as the daemon: the users of
// one node are few.
// Thread-safety: any thread; For's reference stays valid for the object's
// lifetime.
class UserStats {
 public:
  struct Counters {
    std::atomic<uint64_t> requests{0};
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
    std::atomic<uint64_t> joins{0};
    std::atomic<uint64_t> rejected{0};
    std::atomic<int64_t> compile_us{0};
  };

  Counters& For(uid_t uid);

  // One row per user seen (only `only` when given), with the user's name
  // and `queued` (uid -> compiles waiting) filled in.
  std::vector<v1::UserStats> Read(
      const std::vector<std::pair<uid_t, size_t>>& queued,
      std::optional<uid_t> only = std::nullopt) const;
  void Zero();

 private:
  mutable absl::Mutex mu_;
  absl::node_hash_map<uid_t, Counters> users_ ABSL_GUARDED_BY(mu_);
};

// The name of `uid` in the user database; empty when it has none.
std::string UserName(uid_t uid);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_USER_STATS_H_
