#ifndef JITCACHE_SERVER_BUILD_SOURCE_STATS_H_
#define JITCACHE_SERVER_BUILD_SOURCE_STATS_H_

// Source files a job's tool stats but never reads: those the .file
// directives of PTX name (common/ptx_sources.h). ptxas and nvJitLink write
// each one's size and modification time into line information, so a run
// sees files that say what the caller's stat said, and nothing else.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace jitcache {

// What the caller's stat said of one source.
struct SourceStat {
  std::string path;  // absolute, lexically normal
  bool exists = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// Lays the sources out in the job's view (a process in its own view, not
// the daemon's): a file of that size and time where one exists (of no
// bytes the tool reads), none where none does. FAILED_PRECONDITION when the
// view already holds something else at one of the paths.
absl::Status PlaceSources(const std::vector<SourceStat>& sources);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_SOURCE_STATS_H_
