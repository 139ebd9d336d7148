#ifndef JITCACHE_SERVER_RPC_WIRE_TARGET_H_
#define JITCACHE_SERVER_RPC_WIRE_TARGET_H_

#include <optional>

#include "common/object_kind.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// The wire's Target and ObjectKind, and the store's ObjectKind.
inline v1::Target ToWireTarget(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kPtx:
      return v1::TARGET_PTX;
    case ObjectKind::kCubin:
      return v1::TARGET_CUBIN;
    case ObjectKind::kLtoir:
      return v1::TARGET_LTOIR;
    default:
      return v1::TARGET_UNSPECIFIED;
  }
}

inline std::optional<ObjectKind> FromWireTarget(v1::Target target) {
  switch (target) {
    case v1::TARGET_PTX:
      return ObjectKind::kPtx;
    case v1::TARGET_CUBIN:
      return ObjectKind::kCubin;
    case v1::TARGET_LTOIR:
      return ObjectKind::kLtoir;
    default:
      return std::nullopt;
  }
}

// The numbering is shared (see jitcache.proto).
inline v1::ObjectKind ToWireKind(ObjectKind kind) {
  return static_cast<v1::ObjectKind>(kind);
}

inline std::optional<ObjectKind> FromWireKind(v1::ObjectKind kind) {
  if (kind < v1::OBJECT_KIND_PTX || kind > v1::OBJECT_KIND_LIBRARY) {
    return std::nullopt;
  }
  return static_cast<ObjectKind>(kind);
}

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_WIRE_TARGET_H_
