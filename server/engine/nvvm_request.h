#ifndef JITCACHE_SERVER_ENGINE_NVVM_REQUEST_H_
#define JITCACHE_SERVER_ENGINE_NVVM_REQUEST_H_

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "common/object_kind.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/engine/request_limits.h"

namespace jitcache {

// An NvvmRequest, checked, with its key (common/cache_key.h's
// ComputeNvvmKey): each module by the digest of its bytes, computed here
// when the bytes came.
struct PreparedNvvm {
  Digest key;
  // What the compiled result is, for the store's listing: LTO-IR for a
  // compile with -gen-lto, else PTX (a verify's is no object).
  ObjectKind target = ObjectKind::kPtx;
  std::vector<std::string> options;  // the last call's
  uint64_t module_bytes = 0;         // when with_modules
};

// FAILED_PRECONDITION when the caller's libNVVM is not the one this daemon
// runs (the caller runs its own); INVALID_ARGUMENT for a malformed request:
// calls that do not end with a compile or a verify, a digest that is not
// one or not of the bytes sent, strings with NUL, counts and sizes past
// `limits`. Pure; thread-safe.
absl::StatusOr<PreparedNvvm> PrepareNvvm(const v1::NvvmRequest& request,
                                         const ToolchainInfo& toolchain,
                                         const RequestLimits& limits);

// The run of a request that came with_modules.
NvvmJob MakeNvvmJob(const v1::NvvmRequest& request);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_NVVM_REQUEST_H_
