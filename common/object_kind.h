#ifndef JITCACHE_COMMON_OBJECT_KIND_H_
#define JITCACHE_COMMON_OBJECT_KIND_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace jitcache {

// What an object in the store is. The numeric values are part of the store
// format and of the cache key: never renumber.
enum class ObjectKind : uint8_t {
  kPtx = 1,
  kCubin = 2,
  kLtoir = 3,
  kFatbin = 4,
  kObject = 5,   // host object holding device code (nvJitLink input)
  kLibrary = 6,  // host archive holding device code (nvJitLink input)
};

// "ptx", "cubin", "ltoir", "fatbin", "object", "library"; "unknown".
absl::string_view ObjectKindName(ObjectKind kind);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_OBJECT_KIND_H_
