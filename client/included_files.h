#ifndef JITCACHE_CLIENT_INCLUDED_FILES_H_
#define JITCACHE_CLIENT_INCLUDED_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache::internal {

// Whether the request's options may name an include directory (cheap; a
// request without any needs no ResolveIncludes).
bool MayNameIncludeDirs(const v1::CompileRequest& request);

// Makes a request that names -I directories outside the daemon's toolkit
// (`toolkit_dirs`, from Ping) one the daemon can key and compile: its -I
// options become absolute (relative ones from the working directory; those
// into the toolkit, its canonical path), and the files the program may
// include from the other directories go into included_files, by digest
// (IncludeScanner). A request with no such directory is left as it was.
// FAILED_PRECONDITION, saying why, where the program includes what the
// daemon cannot be given (see IncludeScanner). Thread-safe.
absl::Status ResolveIncludes(const std::vector<std::string>& toolkit_dirs,
                             v1::CompileRequest* request);

// Puts each included file's current bytes, and their digest, in the
// request: what the daemon asks for to compile a miss.
absl::Status AttachIncludedContents(v1::CompileRequest* request);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDED_FILES_H_
