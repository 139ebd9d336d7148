#ifndef JITCACHE_COMMON_OBJECT_KIND_H_
#define JITCACHE_COMMON_OBJECT_KIND_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "jitcache/code_type.h"

namespace jitcache {

// The store's name for what an object is: the API's CodeType, one enum.
using ObjectKind = CodeType;

// "ptx", "cubin", "ltoir", "fatbin", "object", "library"; "unknown".
absl::string_view ObjectKindName(ObjectKind kind);

// A kind from its number (the wire's ObjectKind, a store frame, a worker
// message): nullopt for anything but the six.
std::optional<ObjectKind> ObjectKindFromNumber(int number);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_OBJECT_KIND_H_
