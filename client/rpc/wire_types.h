#ifndef JITCACHE_CLIENT_RPC_WIRE_TYPES_H_
#define JITCACHE_CLIENT_RPC_WIRE_TYPES_H_

#include "common/object_kind.h"
#include "jitcache/object_code.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// The client's CodeType and the wire's Target (what a compile produces).
inline v1::Target ToWireTarget(CodeType type) {
  switch (type) {
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

inline CodeType FromWireTarget(v1::Target target) {
  switch (target) {
    case v1::TARGET_CUBIN:
      return CodeType::kCubin;
    case v1::TARGET_LTOIR:
      return CodeType::kLtoir;
    default:
      return CodeType::kPtx;
  }
}

// The kind NVRTC is asked for, as the option rules name it.
inline ObjectKind ObjectKindOf(CodeType type) {
  switch (type) {
    case CodeType::kCubin:
      return ObjectKind::kCubin;
    case CodeType::kLtoir:
      return ObjectKind::kLtoir;
    default:
      return ObjectKind::kPtx;
  }
}

// CodeType and the wire's ObjectKind list the same kinds, the wire from 1.
inline v1::ObjectKind ToWireKind(CodeType type) {
  return static_cast<v1::ObjectKind>(static_cast<int>(type) + 1);
}

inline CodeType FromWireKind(v1::ObjectKind kind) {
  return static_cast<CodeType>(static_cast<int>(kind) - 1);
}

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_WIRE_TYPES_H_
