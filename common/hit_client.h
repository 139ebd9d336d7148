#ifndef JITCACHE_COMMON_HIT_CLIENT_H_
#define JITCACHE_COMMON_HIT_CLIENT_H_

// The asking side of the daemon's hit socket (server/net/hit_socket.h),
// shared by libjitcache and the `jitcache` front end: plain POSIX and the
// standard library, nothing else, so the front end loads no more.
#include <optional>
#include <string>

namespace jitcache {

// The daemon's serialized CompileResponse to the serialized CompileRequest
// `request`, when its answer is a hit; nullopt for anything else (a miss,
// no hit socket, a daemon too busy to answer within half a second), which
// the caller then asks over gRPC. `socket` is the gRPC socket's path: the
// hit socket is next to it.
std::optional<std::string> AskHitSocket(const std::string& socket,
                                        const std::string& request);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_HIT_CLIENT_H_
