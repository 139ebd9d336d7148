#ifndef JITCACHE_SERVER_GRPC_STATUS_H_
#define JITCACHE_SERVER_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace jitcache {

// absl::Status -> grpc::Status; the codes share their numbering.
inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

}  // namespace jitcache

#endif  // JITCACHE_SERVER_GRPC_STATUS_H_
