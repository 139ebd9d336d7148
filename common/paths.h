#ifndef JITCACHE_COMMON_PATHS_H_
#define JITCACHE_COMMON_PATHS_H_

#include <string>

namespace jitcache {

// $JITCACHE_SOCKET, else $XDG_RUNTIME_DIR/jitcache.sock, else
// /tmp/jitcache-$UID.sock. Reads the environment on each call.
std::string DefaultSocketPath();

// $JITCACHE_STORE, else $XDG_CACHE_HOME/jitcache, else ~/.cache/jitcache.
std::string DefaultStorePath();

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PATHS_H_
