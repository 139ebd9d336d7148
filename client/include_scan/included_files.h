#ifndef JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDED_FILES_H_
#define JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDED_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/include_scan/include_scan.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache::internal {

// What the daemon's Ping says of its toolkit.
struct Toolkit {
  std::vector<std::string> include_dirs;
  std::string fingerprint;
};

// Makes a request one the daemon can key and compile exactly as NVRTC
// would in this process: its working directory, and the files the program
// may read outside the daemon's toolkit (from Ping), found
// by IncludeScanner and carried as their set's digest; they are returned,
// for AttachIncludedFiles. The options stay as spelled. A request whose
// options the daemon will refuse is left as it was (nullptr).
// FAILED_PRECONDITION, saying why, where the program reads what the daemon
// cannot be given. Thread-safe.
absl::StatusOr<std::shared_ptr<const ScanResult>> ResolveIncludes(
    const Toolkit& toolkit, v1::CompileRequest* request);

// Puts the files in the request with their current bytes (what the daemon
// asks for to compile a miss), and leaves their digests to the daemon, as
// a file may have changed since it was scanned.
absl::Status AttachIncludedFiles(const ScanResult& included,
                                 v1::CompileRequest* request);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDED_FILES_H_
