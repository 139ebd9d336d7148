#include "common/object_kind.h"

#include "absl/strings/string_view.h"

namespace jitcache {

absl::string_view ObjectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kPtx:
      return "ptx";
    case ObjectKind::kCubin:
      return "cubin";
    case ObjectKind::kLtoir:
      return "ltoir";
    case ObjectKind::kFatbin:
      return "fatbin";
    case ObjectKind::kObject:
      return "object";
    case ObjectKind::kLibrary:
      return "library";
    case ObjectKind::kOptixIr:
      return "optixir";
  }
  return "unknown";
}

std::optional<ObjectKind> ObjectKindFromNumber(int number) {
  if (number < static_cast<int>(ObjectKind::kPtx) ||
      number > static_cast<int>(ObjectKind::kOptixIr)) {
    return std::nullopt;
  }
  return static_cast<ObjectKind>(number);
}

bool IsLinkInput(ObjectKind kind) { return kind != ObjectKind::kOptixIr; }

}  // namespace jitcache
