#ifndef JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_H_
#define JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_H_

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/remote/redis_client.h"
#include "server/remote/redis_slot.h"

namespace jitcache {

// A Redis Cluster client: the slot map read with CLUSTER SLOTS from the
// seeds or any node that answers, one connection per node, a command sent
// to the master of its key's slot. MOVED updates the map (and a full read
// follows), ASK is followed once with ASKING; a node that fails, and
// TRYAGAIN, CLUSTERDOWN, MASTERDOWN or LOADING, make the map be read again
// (at most every 100 ms) while the command fails: the caller goes on
// without the tier until the cluster has settled (a replica promoted, a
// slot moved). A node that fails is left alone with backoff (100 ms, then
// doubling to 5 s), so a stopped node costs one timeout, not one per
// request.
// Thread-safety: Run from any thread; commands to different nodes run at
// once, those to one node one after another on its connection.
class RedisCluster final : public RedisClient {
 public:
  RedisCluster(std::vector<RedisEndpoint> seeds, RedisLinkOptions options,
               RedisCounters* counters);
  ~RedisCluster() override;

  RedisReply Run(std::string_view key,
                 std::vector<std::string_view> argv) override;

 private:
  struct Node {
    Node(const RedisEndpoint& at, const RedisLinkOptions& options)
        : endpoint(at), link(at, options) {}
    const RedisEndpoint endpoint;
    absl::Mutex mu;
    RedisLink link ABSL_GUARDED_BY(mu);
    absl::Time retry_at ABSL_GUARDED_BY(mu) = absl::InfinitePast();
    absl::Duration backoff ABSL_GUARDED_BY(mu) = absl::Milliseconds(100);
  };

  // `argv` on `node` (after ASKING, with `asking`); nullptr with `why` when
  // the node cannot be used now (then it backs off).
  RedisReply Ask(Node& node, std::span<const std::string_view> argv,
                 bool asking, std::string* why);
  // The node at `endpoint`, added when new (nodes are never removed: a
  // cluster has a handful, and a node's address outlives its role).
  Node* NodeAt(const RedisEndpoint& endpoint) ABSL_LOCKS_EXCLUDED(mu_);
  Node* NodeForSlot(int slot) ABSL_LOCKS_EXCLUDED(mu_);
  void RefreshSoon() ABSL_LOCKS_EXCLUDED(mu_);
  // Reads the slot map again when it is due and the last read is 100 ms
  // old; one thread at a time, the others go on with the map they have
  // (with none yet, they wait for the read, one timeout at most).
  void MaybeRefresh() ABSL_LOCKS_EXCLUDED(mu_);
  // Reads the map from the nodes; false when no node gave all of it.
  bool Refresh() ABSL_LOCKS_EXCLUDED(mu_);
  // One CLUSTER SLOTS reply into `map`; false when it is not one.
  bool ReadSlotMap(const redisReply& reply, const std::string& asked_host,
                   std::array<Node*, kRedisSlots>& map)
      ABSL_LOCKS_EXCLUDED(mu_);
  RedisReply Fail(const std::string& why);
  void Answered();

  const RedisLinkOptions options_;
  RedisCounters* const counters_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Node>> nodes_ ABSL_GUARDED_BY(mu_);
  std::array<Node*, kRedisSlots> slots_ ABSL_GUARDED_BY(mu_) = {};
  bool refresh_due_ ABSL_GUARDED_BY(mu_) = true;
  bool known_ ABSL_GUARDED_BY(mu_) = false;  // a map was read once
  bool refreshing_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_refresh_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Mutex log_mu_;
  bool down_ ABSL_GUARDED_BY(log_mu_) = false;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_H_
