#ifndef JITCACHE_SERVER_REMOTE_REDIS_TIER_H_
#define JITCACHE_SERVER_REMOTE_REDIS_TIER_H_

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/digest.h"
#include "server/remote/redis_client.h"
#include "server/remote/tls_context.h"
#include "server/store/remote_tier.h"

namespace jitcache {

struct RemoteOptions {
  // One server or a cluster, plain or TLS (server/remote/redis_url.h).
  std::string url;
  TlsOptions tls;  // with rediss:// and redis-cluster+tls://
  uint64_t max_object = uint64_t{64} << 20;  // larger entries stay local
  absl::Duration timeout = absl::Milliseconds(500);  // connect and each command
  absl::Duration lease_ttl = absl::Seconds(10);      // renewed while held
  // The team keys (remote_keys.h): the first signs every value and lease
  // this node writes; a value or lease that none verifies is ignored.
  std::vector<std::string> keys;
  // Redis AUTH after each connect: an ACL user (empty: the default user)
  // and its password; no AUTH when the password is empty.
  std::string user;
  std::string password;
  // RedisLinkOptions::reply_buffer_kept (benchmarks compare values).
  size_t reply_buffer_kept = RedisLinkOptions().reply_buffer_kept;
  // On a cluster: entries are read from a replica of their master first
  // (one in turn), and taken once the master confirms the value's MAC
  // (GETRANGE of its last 32 bytes); from the master where the replica has
  // none (it may lag), holds another (one since deleted or replaced) or
  // cannot answer. So the bytes of hot entries come from the replicas, and
  // the master's word decides what the entry is.
  bool replica_reads = false;
};

// The cluster tier: a Redis server, or a Redis Cluster, shared by every
// node of a team, plain or over TLS (redis_client.h). The node's store
// stays in front; this is asked only on a local miss. Whoever can
// write to Redis is not trusted: every value and lease carries an
// HMAC-SHA-256, under a team key only the daemons hold, over its Redis key
// name and contents, so a value cannot be forged, altered or moved to
// another key, and a lease cannot be forged or kept past the expiry it
// names. What does not verify is ignored and counted as corrupt (not
// deleted: a node with a stale key file must not wipe the others' work);
// the caller also checks every object's SHA-256 before storing. Every operation
// has a timeout; a Redis that is down, slow or answering garbage makes the
// operations fail fast (counted, warned about once per outage, retried
// with backoff), and the caller goes on locally: a request never fails
// because of this tier.
//
// Keys: jitcache:v2:entry:HEX (a signed frame of a BundleEntry) and
// jitcache:v2:lease:HEX (on a cluster jitcache:v2:{HEX}:entry and
// jitcache:v2:{HEX}:lease, one slot for both) (who compiles the key now, until
// when, signed: SET NX with an expiry, re-signed with a later one while the
// compile runs, deleted when its result is published; a lease that does not
// verify or has expired is taken over).
// Thread-safety: every method from any thread.
class RedisTier final : public RemoteTier {
 public:
  static absl::StatusOr<std::unique_ptr<RedisTier>> Create(
      RemoteOptions options);
  ~RedisTier();

  // RemoteTier. A read's entry is unframed and its MAC checked; a value
  // that does not verify is damaged (counted as corrupt). Entries over
  // max_object are not published.
  Read Get(const Digest& key) override;
  void CountHit(uint64_t bytes) override;
  void CountCorrupt(const Digest& key) override;
  Lease TryLease(const Digest& key) override;
  bool LeaseHeld(const Digest& key) override;
  void CountLeaseWait() override;
  void Publish(const Digest& key, std::string entry) override;
  void Release(const Digest& key) override;
  void Forget(const Digest& key) override;
  RemoteStats stats() const override;

 private:
  explicit RedisTier(RemoteOptions options);
  // The payload of `from_replica` (a replica's answer to GET `name`) when
  // it verifies and the master holds that same value; nullopt otherwise,
  // with `master_away` when the master could not be asked.
  std::optional<std::string> ConfirmedByMaster(const std::string& name,
                                               const redisReply* from_replica,
                                               bool* master_away);
  // The background thread: publishes, releases, forgets and renews, one
  // piece of work at a time, until Stop and the queues are empty.
  void Background();
  // What the background thread does next: at most one of each queue's
  // items, and every lease when `next_renewal` has come (then moved on);
  // nullopt once stopping with nothing left.
  struct BackgroundWork {
    std::optional<std::pair<Digest, std::string>> publish;
    std::optional<Digest> release;
    std::optional<Digest> forget;
    std::vector<std::pair<Digest, std::string>> renew;
  };
  std::optional<BackgroundWork> NextWork(absl::Time& next_renewal);
  // Re-signs each lease this node still holds (one taken over is dropped).
  void RenewLeases(const std::vector<std::pair<Digest, std::string>>& leases);
  // Gives up this node's lease on `key`, if it still holds it.
  void ReleaseLease(const Digest& key);
  std::string EntryKey(const Digest& key) const;
  std::string LeaseKey(const Digest& key) const;
  // This node's signed lease value for `name`, valid until `expiry`.
  std::string LeaseValue(const std::string& name, absl::Time expiry) const;
  // Whether `value` is a lease a team node signed for `name` that has not
  // expired (and names no expiry further than one lifetime away).
  bool LeaseValid(const std::string& name, absl::string_view value) const;

  const RemoteOptions options_;
  std::string node_;  // this node's lease token: host:pid:random
  bool cluster_ = false;
  RedisCounters counters_;
  // Requests' reads and leases; the background thread's writes.
  std::unique_ptr<RedisClient> foreground_;
  std::unique_ptr<RedisClient> background_;

  absl::Mutex mu_;
  std::deque<std::pair<Digest, std::string>> to_publish_ ABSL_GUARDED_BY(mu_);
  std::deque<Digest> to_release_ ABSL_GUARDED_BY(mu_);
  std::deque<Digest> to_forget_ ABSL_GUARDED_BY(mu_);
  // The leases this node holds, with the value it last wrote for each.
  absl::flat_hash_map<Digest, std::string> leases_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;

  std::atomic<uint64_t> hits_{0}, misses_{0}, corrupt_{0}, leases_waited_{0};
  std::atomic<uint64_t> replica_hits_{0}, replica_misses_{0};
  std::atomic<uint64_t> bytes_up_{0}, bytes_down_{0};
};

// Frames a value for the remote tier under the Redis key `name`: "JCR2" |
// u64 length | payload | HMAC-SHA-256(key; "jitcache entry", name,
// payload). Unframe returns nullopt for anything else, and for a MAC that
// none of `keys` gives.
std::string FrameRemoteValue(absl::string_view name, absl::string_view payload,
                             absl::string_view key);
std::optional<std::string> UnframeRemoteValue(
    absl::string_view name, absl::string_view value,
    const std::vector<std::string>& keys);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_TIER_H_
