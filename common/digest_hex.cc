// Digest::FromHex, apart from digest.cc: its errors are absl::Status, which
// the plain C++ front ends do not load.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/digest.h"
#include "common/text.h"

namespace jitcache {

absl::StatusOr<Digest> Digest::FromHex(absl::string_view hex) {
  if (hex.size() != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a digest is 64 hex digits, got ", hex.size(), " characters"));
  }
  std::string raw;
  if (!text::BytesOfHex(std::string_view(hex.data(), hex.size()), &raw)) {
    return absl::InvalidArgumentError(
        absl::StrCat("digest '", hex, "' is not hexadecimal"));
  }
  return *FromBytes(raw);
}

}  // namespace jitcache
