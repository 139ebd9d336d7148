#ifndef JITCACHE_CLIENT_RPC_RPC_CHANNEL_H_
#define JITCACHE_CLIENT_RPC_RPC_CHANNEL_H_

#include <grpcpp/channel.h>
#include <grpcpp/support/status.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// A channel to jitcached's Unix socket, tuned for a local daemon (quick
// reconnects, large messages and windows).
std::shared_ptr<grpc::Channel> MakeDaemonChannel(
    const std::string& socket_path);

// The one place grpc::Status becomes absl::Status; UNAVAILABLE names the
// socket.
absl::Status FromGrpc(const grpc::Status& s, absl::string_view socket);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_RPC_CHANNEL_H_
