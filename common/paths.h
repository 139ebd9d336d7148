#ifndef JITCACHE_COMMON_PATHS_H_
#define JITCACHE_COMMON_PATHS_H_

#include <string>
#include <string_view>

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

// Where libjitcache keeps its include scans between processes:
// $JITCACHE_SCAN_CACHE ("off" for nowhere: ""), else
// $XDG_CACHE_HOME/jitcache-scan, else ~/.cache/jitcache-scan.
std::string DefaultScanCachePath();

// An environment setting that is on: set, and neither empty nor "0".
bool EnvFlag(const char* var);

// The CUDA toolkit's directory: $CUDA_HOME when set and not empty, else
// /usr/local/cuda. The one lookup every program uses. Reads the
// environment on each call.
std::string CudaHome();

// "/a/b": begins with '/', and has no empty, "." or ".." component and no
// trailing '/'. No file system access.
bool IsNormalAbsolutePath(std::string_view path);

// Whether `path` lies inside directory `dir` (both normal), or is `dir`
// itself when `or_equal`. By text: "/a/bc" is not under "/a/b".
bool IsUnder(std::string_view path, std::string_view dir, bool or_equal);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PATHS_H_
