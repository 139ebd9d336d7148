#include "client/rpc/rpc_channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/strings/str_cat.h"

namespace jitcache {

std::shared_ptr<grpc::Channel> MakeDaemonChannel(
    const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // A local daemon that restarts is back within a second: retry the socket
  // quickly instead of gRPC's network-sized backoff. The minimum stays at
  // gRPC's 20 s because gRPC also takes it as the time a connection may
  // take to be answered: under socket activation the kernel accepts at
  // once, and the daemon answers when it has started.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // Objects of hundreds of KiB are the common answer: let a whole one flow
  // without waiting for HTTP/2 window updates (the default is 64 KiB).
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 << 20);
  return grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                   grpc::InsecureChannelCredentials(), args);
}

absl::Status FromGrpc(const grpc::Status& s, absl::string_view socket) {
  if (s.ok()) return absl::OkStatus();
  std::string message = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    message =
        absl::StrCat("jitcached is not reachable at ", socket, ": ", message);
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), message);
}

}  // namespace jitcache
