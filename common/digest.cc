#include "common/digest.h"

#include <cstring>

#include "common/sha256.h"
#include "common/text.h"

namespace jitcache {

Digest Digest::Of(std::string_view data) { return Digest{Sha256::Hash(data)}; }

std::optional<Digest> Digest::FromBytes(std::string_view raw) {
  Digest d;
  if (raw.size() != d.bytes.size()) return std::nullopt;
  std::memcpy(d.bytes.data(), raw.data(), raw.size());
  return d;
}

std::string Digest::Hex() const { return text::HexOf(AsBytes()); }

}  // namespace jitcache
