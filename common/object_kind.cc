#include "common/object_kind.h"

#include "absl/strings/ascii.h"
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
  }
  return "unknown";
}

std::optional<ObjectKind> ParseObjectKind(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "ptx") return ObjectKind::kPtx;
  if (lower == "cubin") return ObjectKind::kCubin;
  if (lower == "ltoir" || lower == "lto-ir" || lower == "lto") {
    return ObjectKind::kLtoir;
  }
  if (lower == "fatbin") return ObjectKind::kFatbin;
  if (lower == "object" || lower == "o") return ObjectKind::kObject;
  if (lower == "library" || lower == "a") return ObjectKind::kLibrary;
  return std::nullopt;
}

}  // namespace jitcache
