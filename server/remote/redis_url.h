#ifndef JITCACHE_SERVER_REMOTE_REDIS_URL_H_
#define JITCACHE_SERVER_REMOTE_REDIS_URL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// One Redis server: HOST:PORT, or a Unix socket.
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string unix_path;  // set: a Unix socket, host and port unused

  // "HOST:PORT" ("[V6]:PORT"), or the socket's path: for logs.
  std::string Name() const;
  bool operator==(const RedisEndpoint&) const = default;
};

// What --remote names:
//   redis://HOST:PORT[/DB]           one server
//   rediss://HOST:PORT[/DB]          one server, over TLS
//   unix:///PATH[?db=N]              one server on a Unix socket
//   redis-cluster://H:P[,H:P...]     a Redis Cluster, found from these seeds
//   redis-cluster+tls://H:P[,...]    a Redis Cluster over TLS
struct RedisTarget {
  bool cluster = false;
  bool tls = false;
  std::vector<RedisEndpoint> endpoints;  // the server, or the seeds
  int db = 0;                            // not with a cluster (it has one)
};

// INVALID_ARGUMENT, naming the flag and what is wrong, for anything else.
absl::StatusOr<RedisTarget> ParseRedisUrl(absl::string_view url);

// "HOST:PORT" or "[V6]:PORT" (as CLUSTER SLOTS and MOVED name nodes, and as
// seeds are given); INVALID_ARGUMENT otherwise.
absl::StatusOr<RedisEndpoint> ParseHostPort(absl::string_view text);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_URL_H_
