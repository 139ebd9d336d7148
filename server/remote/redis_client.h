#ifndef JITCACHE_SERVER_REMOTE_REDIS_CLIENT_H_
#define JITCACHE_SERVER_REMOTE_REDIS_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/remote/redis_link.h"
#include "server/remote/redis_url.h"

namespace jitcache {

// What the remote tier's Redis clients count, shared by a tier's clients.
struct RedisCounters {
  std::atomic<uint64_t> errors{0};     // commands that could not be done
  std::atomic<uint64_t> redirects{0};  // MOVED and ASK followed
  std::atomic<uint64_t> refreshes{0};  // cluster slot maps read
};

// Runs one command on the Redis server, or the Redis Cluster node, that
// holds its key. A failure of any kind (the server away, slow, refusing,
// answering with an error, the cluster failing over or resharding) is
// nullptr: counted, logged once per outage, retried later with backoff,
// and the caller goes on without the tier.
// Thread-safety: Run from any thread.
class RedisClient {
 public:
  virtual ~RedisClient() = default;
  // `key`: the key the command reads or writes (it picks the cluster node).
  virtual RedisReply Run(std::string_view key,
                         std::vector<std::string_view> argv) = 0;
  // GET `key` from a replica of its master, where there are replicas and
  // reads from them are wanted (a cluster with replica reads on), with
  // `asked` set; nullptr when none was asked, or the one asked cannot
  // answer now. Not a failure of the tier (neither counted in `errors` nor
  // logged): the caller asks the master with Run. A replica may lag
  // behind its master, or hold what the master has since deleted: what it
  // gives is only a candidate, to be confirmed by the master.
  virtual RedisReply GetFromReplica(std::string_view /*key*/, bool* asked) {
    *asked = false;
    return nullptr;
  }
};

// `count` clients for `target`, each with its own connections: to one
// server, or to a cluster found from its seeds, whose map they share (and
// with `replica_reads`, whose replicas answer GetFromReplica).
std::vector<std::unique_ptr<RedisClient>> MakeRedisClients(
    const RedisTarget& target, const RedisLinkOptions& options,
    RedisCounters* counters, int count, bool replica_reads = false);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_CLIENT_H_
