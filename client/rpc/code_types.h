#ifndef JITCACHE_CLIENT_RPC_CODE_TYPES_H_
#define JITCACHE_CLIENT_RPC_CODE_TYPES_H_

// The public API's CodeType and the kind the daemon, keys and the wire use
// (common/object_kind.h): the same numbers, two enums, so that nothing
// below the client depends on the installed headers. The client converts
// here, at its edge, and only here.
#include "common/object_kind.h"
#include "jitcache/code_type.h"

namespace jitcache {

static_assert(static_cast<int>(CodeType::kPtx) ==
              static_cast<int>(ObjectKind::kPtx));
static_assert(static_cast<int>(CodeType::kCubin) ==
              static_cast<int>(ObjectKind::kCubin));
static_assert(static_cast<int>(CodeType::kLtoir) ==
              static_cast<int>(ObjectKind::kLtoir));
static_assert(static_cast<int>(CodeType::kFatbin) ==
              static_cast<int>(ObjectKind::kFatbin));
static_assert(static_cast<int>(CodeType::kObject) ==
              static_cast<int>(ObjectKind::kObject));
static_assert(static_cast<int>(CodeType::kLibrary) ==
              static_cast<int>(ObjectKind::kLibrary));
static_assert(static_cast<int>(CodeType::kOptixIr) ==
              static_cast<int>(ObjectKind::kOptixIr));

constexpr ObjectKind ToObjectKind(CodeType type) {
  return static_cast<ObjectKind>(type);
}

constexpr CodeType ToCodeType(ObjectKind kind) {
  return static_cast<CodeType>(kind);
}

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_CODE_TYPES_H_
