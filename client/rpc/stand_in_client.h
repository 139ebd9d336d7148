#ifndef JITCACHE_CLIENT_RPC_STAND_IN_CLIENT_H_
#define JITCACHE_CLIENT_RPC_STAND_IN_CLIENT_H_

#include <memory>

#include "common/paths.h"
#include "jitcache/client.h"

namespace jitcache {

// What a library that stands in for a toolkit library in unmodified
// programs (libnvrtc.so.13; libnvJitLink.so.13 asks over the framed socket
// instead) is, and the real one it would otherwise forward to
// (client/wire/real_library.h).
struct StandIn {
  const char* disable_var;  // "JITCACHE_NVRTC_DISABLE"
  const char* verbose_var;  // "JITCACHE_NVRTC_VERBOSE"
  const char* real_var;     // "JITCACHE_REAL_NVRTC"
  const char* file_name;    // "libnvrtc.so.13"
};

// The stand-in's daemon connection: no in-process compiles (they would
// load the stand-in itself), the socket from the usual settings. nullptr
// (the caller then uses the real library) when $disable_var is set to
// anything but "0", when no daemon answers, and when the daemon's copy of
// the library is not the very file the real one would be opened from:
// the daemon's answers would then not be that library's.
// `library` (optional) receives the daemon's account of that file.
std::unique_ptr<Client> ConnectStandIn(const StandIn& stand_in,
                                       DaemonInfo::Library* library = nullptr);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_STAND_IN_CLIENT_H_
