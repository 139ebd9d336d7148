#ifndef JITCACHE_SERVER_BUILD_PATH_STATS_H_
#define JITCACHE_SERVER_BUILD_PATH_STATS_H_

// How many times this process stat'ed a file by its path through the C
// library's stat calls, as counted by jitcache-worker's own definitions of
// them (path_stat_watch.cc, in the worker executable; a process without
// them counts nothing).
//
// Why: nvJitLink stats the source files that line information names
// (LTO-IR made with -lineinfo or -G: nvcc's, NVRTC's, numba-cuda's) where
// it runs, and writes their size and time into the cubin. A job's compile
// view holds no file of the caller's, so a link that stats one answers
// for the worker's file system, not the caller's: the worker refuses it
// (and the caller links it itself). A link of inputs that carry no line
// information stats nothing (strace of the real nvJitLink 13.0).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace jitcache {

std::atomic<uint64_t>& PathStatsMade();

// Paths whose stats are not counted: the sources a link's view holds as
// the caller's stat saw them (source_stats.h). Set once, before the link
// runs, in the single-threaded child that runs it; read by any thread.
void AllowPathStats(std::vector<std::string> paths);
bool PathStatAllowed(const char* path);

// The FAILED_PRECONDITION message of a link that stat'ed files by path.
inline constexpr const char* kReadsCallersFiles =
    "the link stats files by path (source files its line information "
    "names), which are the caller's: the caller links it";

// That refusal, marked so (a status payload, which WorkerResponse carries
// as reads_callers_files) that the engine can tell it from other failed
// preconditions without reading its message.
inline constexpr absl::string_view kReadsCallersFilesPayload =
    "jitcache.dev/reads-callers-files";
inline absl::Status ReadsCallersFilesError() {
  absl::Status status = absl::FailedPreconditionError(kReadsCallersFiles);
  status.SetPayload(kReadsCallersFilesPayload, absl::Cord());
  return status;
}
inline bool IsReadsCallersFiles(const absl::Status& status) {
  return status.GetPayload(kReadsCallersFilesPayload).has_value();
}

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_PATH_STATS_H_
