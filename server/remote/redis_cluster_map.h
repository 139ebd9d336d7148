#ifndef JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_MAP_H_
#define JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_MAP_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/remote/redis_slot.h"
#include "server/remote/redis_url.h"

namespace jitcache {

// What the clients of one Redis Cluster know of it, shared by them: the
// nodes' addresses (the seeds, then every master and replica a slot map
// named), the master of each slot, and when the map is to be read again.
// A tier's clients keep connections of their own (reads are not queued
// behind large writes), but what one learns the others use: a client that
// first speaks after the seeds are gone (the one that publishes, on a node
// that had only read so far) still finds the cluster.
// Nodes are numbered in the order they became known; a number always
// names the same address (nodes are never forgotten: a cluster has a
// handful, and an address outlives its role).
// Thread-safety: every method from any thread.
class RedisClusterMap {
 public:
  // Slot -> node number, -1 where none is known.
  using Slots = std::array<int, kRedisSlots>;
  // A master's number -> its replicas' numbers (empty: none known).
  using Replicas = std::vector<std::vector<int>>;

  // How often the map is read: no sooner than `least` after the last read
  // began (a failing cluster is not asked for its map on every request),
  // and once it is `most` old even when nothing failed (what changes
  // without an error, a replica added, is seen within that time).
  struct Pace {
    absl::Duration least = absl::Milliseconds(100);
    absl::Duration most = absl::Seconds(10);
  };

  explicit RedisClusterMap(const std::vector<RedisEndpoint>& seeds);
  RedisClusterMap(const std::vector<RedisEndpoint>& seeds, Pace pace);

  // The number of `endpoint`, which becomes known when new.
  int NumberOf(const RedisEndpoint& endpoint) ABSL_LOCKS_EXCLUDED(mu_);
  RedisEndpoint EndpointOf(int node) const ABSL_LOCKS_EXCLUDED(mu_);
  // The master of `slot` (0 to kRedisSlots - 1); -1 where none is known.
  int MasterOf(int slot) const ABSL_LOCKS_EXCLUDED(mu_);
  // The replicas the last map named for `master` (none for -1).
  std::vector<int> ReplicasOf(int master) const ABSL_LOCKS_EXCLUDED(mu_);

  // A MOVED: `slot` is served by `node` now; the whole map is read again
  // soon, since one slot seldom moves alone.
  void Moved(int slot, int node) ABSL_LOCKS_EXCLUDED(mu_);
  // Something failed that a newer map may mend.
  void RefreshSoon() ABSL_LOCKS_EXCLUDED(mu_);

  // Whether the caller is to read the map now: it is due (or old), no
  // other client reads it, and the last read began long enough ago.
  // With no map yet and another client reading one, waits for that read
  // (`wait` at most) rather than go on with nothing.
  bool StartRead(absl::Duration wait) ABSL_LOCKS_EXCLUDED(mu_);
  // Whom to ask for the map: the masters of the map first, then every node
  // known, seeds and replicas included.
  std::vector<int> Candidates() const ABSL_LOCKS_EXCLUDED(mu_);
  // The read that StartRead began is over: `slots` covers `covered` slots
  // (0: no node gave a map, and the old one stays), with the masters'
  // `replicas`. The map is due again when it leaves slots out, or when a
  // MOVED or a failure came while it was read (the read may predate it).
  void FinishRead(const Slots& slots, int covered, Replicas replicas = {})
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const Pace pace_;
  mutable absl::Mutex mu_;
  std::vector<RedisEndpoint> nodes_ ABSL_GUARDED_BY(mu_);
  Slots slots_ ABSL_GUARDED_BY(mu_);
  Replicas replicas_ ABSL_GUARDED_BY(mu_);
  bool due_ ABSL_GUARDED_BY(mu_) = true;
  bool known_ ABSL_GUARDED_BY(mu_) = false;  // a map was read once
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_read_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // Moves and failures told, and how many had been when the read began.
  uint64_t told_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t told_at_read_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_MAP_H_
