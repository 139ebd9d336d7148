#ifndef JITCACHE_SERVER_RPC_COMPILE_REQUEST_H_
#define JITCACHE_SERVER_RPC_COMPILE_REQUEST_H_

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/rpc/request_limits.h"

namespace jitcache {

// A validated request and its key. Holds no copy of the source or headers:
// a hit needs only the key, and MakeCompileJob copies them for a miss.
struct PreparedCompile {
  Digest key;
  ObjectKind target = ObjectKind::kPtx;
  std::string program_name;
  std::string arch;                           // "sm_90", "compute_90", ...
  uint64_t source_bytes = 0;                  // source and headers
  std::vector<std::string> options;           // canonical
  std::vector<std::string> name_expressions;  // sorted, unique
  // Whether the request carries files (includes_resolved), and whether
  // every one came with its contents: a miss cannot be compiled without
  // them.
  bool has_included_contents = true;
  std::string working_directory;
  Digest included_set;  // of the included files (includes_resolved only)
  bool exact_include_path = false;
};

// Validates a request against the limits and the toolchain, canonicalises its
// options and computes its key. INVALID_ARGUMENT, naming the field, for any
// bad input. Pure; thread-safe.
absl::StatusOr<PreparedCompile> PrepareCompile(
    const v1::CompileRequest& request, const ToolchainInfo& toolchain,
    const RequestLimits& limits);

// The compile to run on a miss: `prepared` plus the request's source and
// headers (the caller adds the included files' bytes).
CompileJob MakeCompileJob(const v1::CompileRequest& request,
                          const PreparedCompile& prepared);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_COMPILE_REQUEST_H_
