#ifndef JITCACHE_SERVER_RPC_GRPC_STATUS_H_
#define JITCACHE_SERVER_RPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jitcache {

// gRPC carries a status message in HTTP/2 headers, which clients cap at 8 KiB
// by default; a longer one (an NVRTC log, say) would reach the client as an
// unrelated RESOURCE_EXHAUSTED. Messages are cut well below that.
inline constexpr size_t kMaxStatusMessageBytes = 4096;

// absl::Status -> grpc::Status; the codes share their numbering.
inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  std::string message(s.message());
  if (message.size() > kMaxStatusMessageBytes) {
    const size_t cut = message.size() - kMaxStatusMessageBytes;
    message.resize(kMaxStatusMessageBytes);
    absl::StrAppend(&message, "\n... (", cut, " more bytes)");
  }
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), message);
}

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_GRPC_STATUS_H_
