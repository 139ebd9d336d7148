#ifndef JITCACHE_COMMON_RESOLVE_PATH_H_
#define JITCACHE_COMMON_RESOLVE_PATH_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// A symbolic link met on the way: its path, and its target as stored.
using PathLink = std::pair<std::string, std::string>;

// Resolves absolute `path` as the kernel does, one component at a time:
// the path with no symbolic link, "." or ".." left, appending to `links`
// (if not null) each link it went through. Past the first component that
// does not exist, the rest is taken lexically. FAILED_PRECONDITION for a
// link loop or an unreadable link.
absl::StatusOr<std::string> ResolvePath(absl::string_view path,
                                        std::vector<PathLink>* links);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_RESOLVE_PATH_H_
