#ifndef JITCACHE_PROTO_JITCACHE_V1_WIRE_KINDS_H_
#define JITCACHE_PROTO_JITCACHE_V1_WIRE_KINDS_H_

// The one mapping between CodeType (the C++ kind everywhere) and the
// wire's ObjectKind and Target, for the daemon and the client alike.
// CodeType and ObjectKind share their numbers, and Target shares those of
// what a compile makes; whatever arrives from the wire is checked.
#include <optional>

#include "jitcache/code_type.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

inline v1::ObjectKind ToWireKind(CodeType kind) {
  return static_cast<v1::ObjectKind>(kind);
}

// nullopt for UNSPECIFIED and any number that is not a kind.
inline std::optional<CodeType> FromWireKind(int kind) {
  if (kind < static_cast<int>(CodeType::kPtx) ||
      kind > static_cast<int>(CodeType::kLibrary)) {
    return std::nullopt;
  }
  return static_cast<CodeType>(kind);
}

// What a compile or link is asked to make; UNSPECIFIED for a kind no
// compile makes (the daemon refuses it, naming the field).
inline v1::Target ToWireTarget(CodeType kind) {
  switch (kind) {
    case CodeType::kPtx:
      return v1::TARGET_PTX;
    case CodeType::kCubin:
      return v1::TARGET_CUBIN;
    case CodeType::kLtoir:
      return v1::TARGET_LTOIR;
    default:
      return v1::TARGET_UNSPECIFIED;
  }
}

inline std::optional<CodeType> FromWireTarget(int target) {
  switch (target) {
    case v1::TARGET_PTX:
      return CodeType::kPtx;
    case v1::TARGET_CUBIN:
      return CodeType::kCubin;
    case v1::TARGET_LTOIR:
      return CodeType::kLtoir;
    default:
      return std::nullopt;
  }
}

}  // namespace jitcache

#endif  // JITCACHE_PROTO_JITCACHE_V1_WIRE_KINDS_H_
