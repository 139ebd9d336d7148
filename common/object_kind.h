#ifndef JITCACHE_COMMON_OBJECT_KIND_H_
#define JITCACHE_COMMON_OBJECT_KIND_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace jitcache {

// What an object is, as the daemon, the store, keys and the wire know it.
// kFatbin, kObject (a host object with device code) and kLibrary (a host
// archive) are link inputs only; kOptixIr (NVRTC's -optix-ir, which OptiX
// loads) is made by a compile only, and is no link input. The numbers are those
// of ObjectKind in jitcache.proto (checked in proto/jitcache/v1/wire_kinds.h)
// and part of the store's format and of cache keys: never renumber. The public
// API's CodeType has the same numbers; the client converts at its edge
// (client/rpc/code_types.h), so that nothing below the client depends on
// the installed headers.
enum class ObjectKind : uint8_t {
  kPtx = 1,
  kCubin = 2,
  kLtoir = 3,
  kFatbin = 4,
  kObject = 5,
  kLibrary = 6,
  kOptixIr = 7,
};

// "ptx", "cubin", "ltoir", "fatbin", "object", "library", "optixir";
// "unknown".
absl::string_view ObjectKindName(ObjectKind kind);

// A kind from its number (the wire's ObjectKind, a store frame, a worker
// message): nullopt for anything but the seven.
std::optional<ObjectKind> ObjectKindFromNumber(int number);

// Whether nvJitLink takes it as an input: every kind but kOptixIr.
bool IsLinkInput(ObjectKind kind);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_OBJECT_KIND_H_
