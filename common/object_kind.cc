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
  return std::nullopt;
}

}  // namespace jitcache
