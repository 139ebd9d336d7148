#ifndef JITCACHE_CLIENT_API_COMPILE_INCLUDES_H_
#define JITCACHE_CLIENT_API_COMPILE_INCLUDES_H_

// The include scan's answer (client/include_scan/included_files.h) put
// into libjitcache's protobuf CompileRequest.
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/include_scan/included_files.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache::internal {

// Sets the request's working directory, includes_resolved, the included
// set's digest and the files' times; returns the files (null, the request
// left as it was, where the daemon will refuse its options).
// FAILED_PRECONDITION, saying why, where the program reads what the daemon
// cannot be given. Thread-safe.
absl::StatusOr<std::shared_ptr<const ScanResult>> ResolveIncludes(
    const Toolkit& toolkit, v1::CompileRequest* request);

// Puts the files in the request with their current bytes (what the daemon
// asks for to compile a miss), in place of their set's digest.
absl::Status AttachIncludedFiles(const ScanResult& included,
                                 v1::CompileRequest* request);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_API_COMPILE_INCLUDES_H_
