#ifndef JITCACHE_COMMON_WIRE_CONSTANTS_H_
#define JITCACHE_COMMON_WIRE_CONSTANTS_H_

#include <string_view>

namespace jitcache {

// Trailing metadata of a NOT_FOUND Compile answer: the request
// missed, and its included files must come with their contents to be
// compiled (jitcache.proto, CompileRequest.includes_resolved).
inline constexpr std::string_view kSendIncludedMetadata =
    "jitcache-send-included";

}  // namespace jitcache

#endif  // JITCACHE_COMMON_WIRE_CONSTANTS_H_
