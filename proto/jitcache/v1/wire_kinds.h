#ifndef JITCACHE_PROTO_JITCACHE_V1_WIRE_KINDS_H_
#define JITCACHE_PROTO_JITCACHE_V1_WIRE_KINDS_H_

// The one mapping between ObjectKind (the C++ kind below the client) and
// the wire's ObjectKind and Target, for the daemon and the client alike.
// ObjectKind and the wire's ObjectKind share their numbers (checked
// below), and Target shares those of what a compile makes; whatever
// arrives from the wire is checked.
#include <optional>

#include "common/object_kind.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

static_assert(static_cast<int>(ObjectKind::kPtx) == v1::OBJECT_KIND_PTX);
static_assert(static_cast<int>(ObjectKind::kCubin) == v1::OBJECT_KIND_CUBIN);
static_assert(static_cast<int>(ObjectKind::kLtoir) == v1::OBJECT_KIND_LTOIR);
static_assert(static_cast<int>(ObjectKind::kFatbin) == v1::OBJECT_KIND_FATBIN);
static_assert(static_cast<int>(ObjectKind::kObject) == v1::OBJECT_KIND_OBJECT);
static_assert(static_cast<int>(ObjectKind::kLibrary) ==
              v1::OBJECT_KIND_LIBRARY);
static_assert(static_cast<int>(ObjectKind::kOptixIr) ==
              v1::OBJECT_KIND_OPTIXIR);
static_assert(static_cast<int>(ObjectKind::kOptixIr) == v1::TARGET_OPTIXIR);

inline v1::ObjectKind ToWireKind(ObjectKind kind) {
  return static_cast<v1::ObjectKind>(kind);
}

// nullopt for UNSPECIFIED and any number that is not a kind.
inline std::optional<ObjectKind> FromWireKind(int kind) {
  return ObjectKindFromNumber(kind);
}

// What a compile or link is asked to make; UNSPECIFIED for a kind no
// compile makes (the daemon refuses it, naming the field).
inline v1::Target ToWireTarget(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kPtx:
      return v1::TARGET_PTX;
    case ObjectKind::kCubin:
      return v1::TARGET_CUBIN;
    case ObjectKind::kLtoir:
      return v1::TARGET_LTOIR;
    case ObjectKind::kOptixIr:
      return v1::TARGET_OPTIXIR;
    default:
      return v1::TARGET_UNSPECIFIED;
  }
}

inline std::optional<ObjectKind> FromWireTarget(int target) {
  switch (target) {
    case v1::TARGET_PTX:
      return ObjectKind::kPtx;
    case v1::TARGET_CUBIN:
      return ObjectKind::kCubin;
    case v1::TARGET_LTOIR:
      return ObjectKind::kLtoir;
    case v1::TARGET_OPTIXIR:
      return ObjectKind::kOptixIr;
    default:
      return std::nullopt;
  }
}

}  // namespace jitcache

#endif  // JITCACHE_PROTO_JITCACHE_V1_WIRE_KINDS_H_
