#ifndef JITCACHE_COMMON_PATHS_H_
#define JITCACHE_COMMON_PATHS_H_

#include <string>

namespace jitcache {

// $JITCACHE_SOCKET, else $XDG_RUNTIME_DIR/jitcache.sock, else
// /tmp/jitcache-$UID.sock. Reads the environment on each call.
std::string DefaultSocketPath();

// Where the node's service listens (deploy/systemd/jitcached.socket).
inline constexpr char kServiceSocketPath[] = "/run/jitcache/jitcache.sock";

// Where clients look: $JITCACHE_SOCKET, else the node's service socket when
// it exists, else DefaultSocketPath() (a daemon of one's own).
std::string DefaultClientSocketPath();

// $JITCACHE_STORE, else $XDG_CACHE_HOME/jitcache, else ~/.cache/jitcache.
std::string DefaultStorePath();

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PATHS_H_
