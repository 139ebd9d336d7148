#include "server/engine/object_last.h"

#include <cstdint>
#include <utility>

namespace jitcache {

std::string SerializeObjectLast(v1::CompileResponse response) {
  std::string object = std::move(*response.mutable_object());
  response.clear_object();
  std::string out = response.SerializeAsString();
  if (object.empty()) return out;  // proto3 leaves an empty field out
  // Field 2 (object), length-delimited: its tag, its size as a varint,
  // then its bytes.
  constexpr char kObjectTag =
      (v1::CompileResponse::kObjectFieldNumber << 3) | 2;
  out.reserve(out.size() + 11 + object.size());
  out.push_back(kObjectTag);
  for (uint64_t size = object.size(); true; size >>= 7) {
    if (size < 0x80) {
      out.push_back(static_cast<char>(size));
      break;
    }
    out.push_back(static_cast<char>((size & 0x7f) | 0x80));
  }
  out.append(object);
  return out;
}

}  // namespace jitcache
