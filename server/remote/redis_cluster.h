#ifndef JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_H_
#define JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/remote/redis_client.h"
#include "server/remote/redis_cluster_map.h"
#include "server/remote/redis_slot.h"

namespace jitcache {

// A Redis Cluster client: the slot map read with CLUSTER SLOTS from any
// node known (RedisClusterMap, shared with the tier's other clients), one
// connection per node, a command sent to the master of its key's slot.
// MOVED updates the map (and a full read follows), ASK is followed once
// with ASKING; a node that fails, and TRYAGAIN, CLUSTERDOWN, MASTERDOWN or
// LOADING, make the map be read again (at most every 100 ms; and every
// 10 s regardless, so that replicas added are seen) while the command
// fails: the caller goes on without the tier until the cluster has
// settled (a replica promoted, a slot moved). A node that fails is left
// alone with backoff (100 ms, then doubling to 5 s), so a stopped node
// costs one timeout, not one per request.
// With `replica_reads`, GetFromReplica asks the replicas of a key's
// master in turn, on connections of their own that said READONLY (the
// caller has the master confirm what they give).
// Thread-safety: Run from any thread; commands to different nodes run at
// once, those to one node one after another on its connection.
class RedisCluster final : public RedisClient {
 public:
  RedisCluster(std::shared_ptr<RedisClusterMap> map, RedisLinkOptions options,
               RedisCounters* counters, bool replica_reads);
  ~RedisCluster() override;

  RedisReply Run(std::string_view key,
                 std::vector<std::string_view> argv) override
      ABSL_LOCKS_EXCLUDED(nodes_mu_);
  RedisReply GetFromReplica(std::string_view key, bool* asked) override
      ABSL_LOCKS_EXCLUDED(nodes_mu_);

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
  // This client's connection to the map's node `number`; with `reader`,
  // the one that said READONLY.
  // Lock order: nodes_mu_, then the map's.
  Node& NodeNumbered(int number, bool reader = false)
      ABSL_LOCKS_EXCLUDED(nodes_mu_);
  // Reads the slot map when the shared map says this client is to.
  void MaybeRefresh() ABSL_LOCKS_EXCLUDED(nodes_mu_);
  // One CLUSTER SLOTS reply into `slots` and `replicas`; false when it is
  // not one. Every node it names, replicas too, becomes known.
  bool ReadSlotMap(const redisReply& reply, const std::string& asked_host,
                   RedisClusterMap::Slots& slots,
                   RedisClusterMap::Replicas& replicas);
  RedisReply Fail(const std::string& why);
  void Answered();

  const std::shared_ptr<RedisClusterMap> map_;
  const RedisLinkOptions options_;
  const RedisLinkOptions reader_options_;  // options_ with READONLY
  RedisCounters* const counters_;
  const bool replica_reads_;
  std::atomic<uint64_t> next_replica_{0};
  absl::Mutex nodes_mu_;
  // Indexed by the map's node numbers; grown as nodes become known.
  std::vector<std::unique_ptr<Node>> nodes_ ABSL_GUARDED_BY(nodes_mu_);
  std::vector<std::unique_ptr<Node>> readers_ ABSL_GUARDED_BY(nodes_mu_);
  absl::Mutex log_mu_;
  bool down_ ABSL_GUARDED_BY(log_mu_) = false;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_CLUSTER_H_
