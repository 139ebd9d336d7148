#ifndef JITCACHE_SERVER_BUILD_PTXAS_REGISTRY_H_
#define JITCACHE_SERVER_BUILD_PTXAS_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/build/compiler.h"

namespace jitcache {

// A toolkit file the daemon hashes once at start (a ptxas binary, a
// libNVVM): every link resolved, its FileStamp and the SHA-256 of its
// bytes (name "ptxas"). FAILED_PRECONDITION, naming `flag`, for a path
// that is no readable regular file (executable, when `executable`), or
// that changed while it was read.
absl::StatusOr<ToolchainInfo::Library> HashToolkitFile(const std::string& path,
                                                       absl::string_view flag,
                                                       bool executable);

// The ptxas binaries the daemon may run: the toolkit's bin/ptxas (when
// there is one) and each of `registered` (an administrator's --ptxas),
// each with every link resolved, its FileStamp and the SHA-256 of its
// bytes, read once at start. A binary that changes later no longer
// matches its stamp and is never run (PtxasJob carries the stamp).
// FAILED_PRECONDITION naming a registered path that is no readable,
// executable regular file, or that changed while it was read.
absl::StatusOr<std::vector<ToolchainInfo::Library>> RegisterPtxas(
    const std::string& cuda_root, const std::vector<std::string>& registered);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_PTXAS_REGISTRY_H_
