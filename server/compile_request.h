#ifndef JITCACHE_SERVER_COMPILE_REQUEST_H_
#define JITCACHE_SERVER_COMPILE_REQUEST_H_

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/compiler.h"
#include "server/request_limits.h"

namespace jitcache {

struct PreparedCompile {
  Digest key;
  CompileJob job;
};

// Validates a request against the limits and the toolchain, canonicalises its
// options and computes its key. INVALID_ARGUMENT, naming the field, for any
// bad input. Pure; thread-safe.
absl::StatusOr<PreparedCompile> PrepareCompile(
    const v1::CompileRequest& request, const ToolchainInfo& toolchain,
    const RequestLimits& limits);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_COMPILE_REQUEST_H_
