#ifndef JITCACHE_SERVER_BUILD_PTXAS_RUN_H_
#define JITCACHE_SERVER_BUILD_PTXAS_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/build/compile_view.h"
#include "server/build/compiler.h"

namespace jitcache {

// The registered ptxas binaries, opened by a worker before its sandbox, at
// consecutive descriptors from kFirstPtxasFd: the only files the sandbox
// lets it execute (execveat on one of them, AT_EMPTY_PATH).
inline constexpr int kFirstPtxasFd = 100;

struct PtxasBinaries {
  std::vector<std::string> paths;  // paths[i] is open at kFirstPtxasFd + i
  // What the binaries need to start besides the toolkit: the directory of
  // their program interpreter (the dynamic loader, and with it libc) and
  // the links on the way to it (/lib64 -> usr/lib64 -> ...).
  std::vector<std::string> loader_dirs;
  std::vector<PathLink> loader_links;
  // Why a binary's descriptor is left closed (gone, no ELF executable):
  // its jobs fail and its callers run their own; the worker goes on.
  std::vector<std::string> unusable;
};

// Opens `paths` (a worker's --ptxas arguments) at their descriptors and
// finds their loader. An error (the worker cannot run at all) only for a
// descriptor that cannot be placed or a loader path that cannot be
// resolved.
absl::StatusOr<PtxasBinaries> OpenPtxasBinaries(
    const std::vector<std::string>& paths);

// Runs `job` in this process's compile view (entered, locked down): the
// binary is checked against the job's FileStamp, then run in a child with
// stdout and stderr captured, and the output file read back. A run that
// ended is a result (ok, with ptxas_run), whatever its exit status; a
// binary that changed, a crash, or a run that failed for memory (the
// worker's limit, not the caller's) is an error, never stored.
absl::StatusOr<ActionResult> RunPtxas(const PtxasJob& job,
                                      const PtxasBinaries& binaries);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_PTXAS_RUN_H_
