#ifndef JITCACHE_COMMON_PTX_SOURCES_H_
#define JITCACHE_COMMON_PTX_SOURCES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// The source files a PTX module names in its `.file` directives, in order.
// ptxas stats each (where it runs) and writes what it found into the
// cubin's line table: ptxas 12.8 the size and modification time (to the
// second), so two callers with one PTX but sources of other sizes or ages
// get other cubins. A ptxas run's key holds what the caller's stat says
// of each, and the run sees files that say the same.
// FAILED_PRECONDITION for a directive this cannot read exactly (an escape
// in the name, more than 4096 of them): the caller runs its own ptxas.
absl::StatusOr<std::vector<std::string>> PtxSourceFiles(absl::string_view ptx);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PTX_SOURCES_H_
