#ifndef JITCACHE_CLIENT_INCLUDED_FILES_H_
#define JITCACHE_CLIENT_INCLUDED_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/include_scan.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache::internal {

// Whether the request's options may name an include directory (cheap; a
// request without any needs no ResolveIncludes).
bool MayNameIncludeDirs(const v1::CompileRequest& request);

// Makes a request that names -I directories outside the daemon's toolkit
// (`toolkit_dirs`, from Ping) one the daemon can key and compile: its -I
// options become absolute (relative ones from the working directory; those
// into the toolkit, its canonical path), and the files the program may
// include from the other directories are found (IncludeScanner) and the
// request carries their set's digest; they are returned, for
// AttachIncludedFiles. A request with no such directory is left as it was
// (nullptr). FAILED_PRECONDITION, saying why, where the program includes
// what the daemon cannot be given. Thread-safe.
absl::StatusOr<std::shared_ptr<const ScanResult>> ResolveIncludes(
    const std::vector<std::string>& toolkit_dirs, v1::CompileRequest* request);

// Puts the files in the request with their current bytes (what the daemon
// asks for to compile a miss), and leaves their digests to the daemon, as
// a file may have changed since it was scanned.
absl::Status AttachIncludedFiles(const ScanResult& included,
                                 v1::CompileRequest* request);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDED_FILES_H_
