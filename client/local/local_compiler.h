#ifndef JITCACHE_CLIENT_LOCAL_LOCAL_COMPILER_H_
#define JITCACHE_CLIENT_LOCAL_LOCAL_COMPILER_H_

#include "absl/status/statusor.h"
#include "jitcache/object_code.h"
#include "jitcache/program.h"

namespace jitcache::internal {

// Compiles in this process with NVRTC opened at run time (libnvrtc.so.13,
// $JITCACHE_LIBNVRTC overrides), the way the daemon does: the same
// canonical options, the toolkit's include directories ($CUDA_HOME or
// /usr/local/cuda) after them, name expressions sorted. For the same NVRTC
// and toolkit the bytes and lowered names equal the daemon's (include
// directories of the program's own are read here directly). The result is
// served LOCAL and has no cache key. Thread-safe.
absl::StatusOr<ObjectCode> CompileLocally(const Program& program,
                                          const ProgramOptions& options,
                                          CodeType target);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_LOCAL_LOCAL_COMPILER_H_
