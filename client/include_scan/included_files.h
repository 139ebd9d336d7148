#ifndef JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDED_FILES_H_
#define JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDED_FILES_H_

// A compile request's included files, in plain C++ (libnvrtc.so.13 puts
// them in its hand-written requests, libjitcache in its protobuf ones:
// client/api/compile_includes.h).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/include_scan/include_scan.h"
#include "common/digest.h"
#include "common/plain_status.h"

namespace jitcache::internal {

// What the daemon's Ping says of its toolkit.
struct Toolkit {
  std::vector<std::string> include_dirs;
  std::string fingerprint;
};

// What the scan needs of a compile request (views: the caller keeps the
// request alive).
struct IncludeRequest {
  std::span<const std::string> options;  // as spelled
  std::string_view program_name;         // "" for NVRTC's default
  std::string_view source;
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  bool exact_include_path = false;
};

// What the request then carries: its working directory, and the files it
// may read as their set's digest (IncludedSetDigest of their anchored
// paths) with their times in the set's order.
struct ResolvedIncludes {
  std::string working_directory;
  Digest included_set;
  std::vector<int64_t> mtimes_ns;
  // The files, for ReadIncludedFiles; nullptr when the daemon will refuse
  // the request's options: it is then sent as it is, to say why.
  std::shared_ptr<const ScanResult> included;
};

// Makes a request one the daemon can key and compile exactly as NVRTC
// would in this process: its working directory, and the files the program
// may read outside the daemon's toolkit (from Ping), found by
// IncludeScanner. The options stay as spelled. An error (what
// absl::StatusCode::kFailedPrecondition stands for) says why where the
// program reads what the daemon cannot be given. Thread-safe.
PlainStatusOr<ResolvedIncludes> ResolveIncludes(const Toolkit& toolkit,
                                                const IncludeRequest& request);

// One included file's current bytes, to send with a miss.
struct IncludedFileBytes {
  std::string path;
  std::string contents;
  int64_t mtime_ns = 0;
};

// The files with their current bytes (what the daemon asks for to compile
// a miss); the daemon hashes them itself, as a file may have changed
// since it was scanned. An error (kFailedPrecondition) names a file that
// cannot be read.
PlainStatusOr<std::vector<IncludedFileBytes>> ReadIncludedFiles(
    const ScanResult& included);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDED_FILES_H_
