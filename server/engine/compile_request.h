#ifndef JITCACHE_SERVER_ENGINE_COMPILE_REQUEST_H_
#define JITCACHE_SERVER_ENGINE_COMPILE_REQUEST_H_

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/engine/request_limits.h"

namespace jitcache {

// A validated request and its key. Holds no copy of the source or headers:
// a hit needs only the key, and MakeCompileJob copies them for a miss.
struct PreparedCompile {
  // The place-free key (cache_key.h): without the place and without the
  // program's name; the key with the program's name (where the name alone
  // matters), and the keys of this request's place (used when the answer
  // depends on it), which hold the name too.
  Digest key;
  Digest named_key;
  Digest placed_key;
  Digest working_directory_key;    // where the working directory alone matters
  Digest place_key_without_times;  // where the place matters, not the times
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
  // Of the included files by anchored path (includes_resolved only).
  Digest included_set;
  // The included files' anchored paths, sorted, and each one's index in
  // the request's included_files (empty when the request sent the set's
  // digest alone) and modification time, in the same order.
  std::vector<std::string> anchored_paths;
  std::vector<int> file_order;
  std::vector<int64_t> file_mtimes_ns;
  bool exact_include_path = false;
  // CompileRequest.wait_for_proof: an answer kept under this place's key
  // while a proof for `key` runs is no answer yet.
  bool wait_for_proof = false;
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

// The request's included files with their contents, by anchored path in
// `prepared`'s order (for a request that carried them).
std::vector<std::pair<std::string, std::string>> CarriedFiles(
    const v1::CompileRequest& request, const PreparedCompile& prepared);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_COMPILE_REQUEST_H_
