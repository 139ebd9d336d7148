#ifndef JITCACHE_SERVER_STORE_REMOTE_TIER_H_
#define JITCACHE_SERVER_STORE_REMOTE_TIER_H_

#include <cstdint>
#include <string>

#include "common/digest.h"

namespace jitcache {

struct RemoteStats {
  uint64_t hits = 0, misses = 0, errors = 0, corrupt = 0;
  uint64_t leases_waited = 0, bytes_up = 0, bytes_down = 0;
  uint64_t redirects = 0, cluster_refreshes = 0;  // a Redis Cluster's
  // Reads a cluster's replica answered with the value its master
  // confirmed, and those it did not (none there yet, another, or away),
  // which the master answered.
  uint64_t replica_hits = 0, replica_misses = 0;
};

// The seam between the node's store and a tier shared by the team's nodes
// (server/remote/ implements it with Redis): entries by key, checked before
// they are returned, and leases that say which node compiles a key now.
// The tier is never trusted with an answer the store has not checked
// (bundle_entries.h), and a request never fails because of it.
// Thread-safety: every method from any thread.
class RemoteTier {
 public:
  virtual ~RemoteTier() = default;

  // What a read of a key found: its entry (a serialized BundleEntry whose
  // signature held), or why there is none. Absent, unreachable and damaged
  // stay apart: nobody waits on a tier that cannot be reached, and damage
  // is counted, not taken for a miss.
  struct Read {
    enum class Outcome { kFound, kAbsent, kUnreachable, kDamaged };
    Outcome outcome = Outcome::kAbsent;
    std::string entry;  // kFound only
    bool found() const { return outcome == Outcome::kFound; }
  };
  virtual Read Get(const Digest& key) = 0;
  virtual void CountHit(uint64_t bytes) = 0;
  // The caller found the entry bad after all (ignored, never stored).
  virtual void CountCorrupt(const Digest& key) = 0;

  enum class Lease { kTaken, kHeldByOther, kUnavailable };
  // Takes the key's lease for this node (kept until Publish or Release).
  virtual Lease TryLease(const Digest& key) = 0;
  // Whether any node holds the key's lease; false when unreachable.
  virtual bool LeaseHeld(const Digest& key) = 0;
  virtual void CountLeaseWait() = 0;
  // Writes `entry` (a serialized BundleEntry) in the background, then
  // releases this node's lease on the key.
  virtual void Publish(const Digest& key, std::string entry) = 0;
  // Releases this node's lease without a result (a failed compile).
  virtual void Release(const Digest& key) = 0;
  // Deletes the team's entry for `key` in the background (a record shown
  // wrong): the next node to miss builds it again.
  virtual void Forget(const Digest& key) = 0;

  virtual RemoteStats stats() const = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_REMOTE_TIER_H_
