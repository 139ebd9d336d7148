#ifndef JITCACHE_COMMON_RESOLVE_PATH_H_
#define JITCACHE_COMMON_RESOLVE_PATH_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitcache {

// A symbolic link met on the way: its path, and its target as stored.
using PathLink = std::pair<std::string, std::string>;

// Resolves absolute `path` as the kernel does, one component at a time:
// the path with no symbolic link, "." or ".." left, appending to `links`
// (if not null) each link it went through. Past the first component that
// does not exist, the rest is taken lexically. nullopt, saying why in
// `error`, for a link loop or an unreadable link. Plain C++ (the include
// scan of the front ends uses it).
std::optional<std::string> ResolvePath(std::string_view path,
                                       std::vector<PathLink>* links,
                                       std::string* error);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_RESOLVE_PATH_H_
