#include "common/digest.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/sha256.h"

namespace jitcache {

Digest Digest::Of(absl::string_view data) { return Digest{Sha256::Hash(data)}; }

absl::StatusOr<Digest> Digest::FromHex(absl::string_view hex) {
  if (hex.size() != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a digest is 64 hex digits, got ", hex.size(), " characters"));
  }
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("digest '", hex, "' is not hexadecimal"));
    }
  }
  return FromBytes(absl::HexStringToBytes(hex));
}

absl::StatusOr<Digest> Digest::FromBytes(absl::string_view raw) {
  Digest d;
  if (raw.size() != d.bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a raw digest is 32 bytes, got ", raw.size()));
  }
  std::memcpy(d.bytes.data(), raw.data(), raw.size());
  return d;
}

std::string Digest::Hex() const { return absl::BytesToHexString(AsBytes()); }

}  // namespace jitcache
