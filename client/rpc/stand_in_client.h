#ifndef JITCACHE_CLIENT_RPC_STAND_IN_CLIENT_H_
#define JITCACHE_CLIENT_RPC_STAND_IN_CLIENT_H_

#include <memory>

#include "jitcache/client.h"

namespace jitcache {

// The daemon connection of a library that stands in for a toolkit library
// in unmodified programs (libnvrtc.so.13, libnvJitLink.so.13): no
// in-process compiles (they would load the stand-in itself), the socket
// from the usual settings. nullptr when $DISABLE_VAR is set to anything but
// "0", or no daemon answers: the caller then uses the real library.
std::unique_ptr<Client> ConnectStandIn(const char* disable_var);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_STAND_IN_CLIENT_H_
