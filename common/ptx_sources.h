#ifndef JITCACHE_COMMON_PTX_SOURCES_H_
#define JITCACHE_COMMON_PTX_SOURCES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

// The source files a PTX module names in its `.file` directives, in order.
// ptxas stats each (where it runs) and writes what it found into the
// cubin's line table: ptxas 12.8 the size and modification time (to the
// second), so two callers with one PTX but sources of other sizes or ages
// get other cubins. A ptxas run's key holds what the caller's stat says
// of each, and the run sees files that say the same.
// A directive counts wherever ptxas reads one: at a line's start, after
// another statement or a brace on the same line, after a comment; not in a
// comment or a string. nullopt, with `why`, for a directive this cannot
// read exactly (an escape in the name, more than 4096 of them, an
// unterminated comment) or a name that means the process that stats it
// ("/proc/self/exe": ptxas's own file there): the caller runs its own
// ptxas. Plain C++: jitcache-ptxas loads nothing else.
std::optional<std::vector<std::string>> PtxSourceFiles(std::string_view ptx,
                                                       std::string* why);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PTX_SOURCES_H_
