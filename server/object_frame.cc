#include "server/object_frame.h"

#include <xxhash.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace jitcache {
namespace {

constexpr char kMagic[4] = {'J', 'C', 'O', 'B'};

void PutLe64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}

uint64_t GetLe64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
  }
  return v;
}

}  // namespace

std::string EncodeObjectFrame(ObjectKind kind, absl::string_view bytes) {
  std::string frame(kObjectFrameHeaderSize + bytes.size(), '\0');
  std::memcpy(frame.data(), kMagic, sizeof(kMagic));
  frame[4] = static_cast<char>(kObjectFrameVersion);
  frame[5] = static_cast<char>(kind);
  PutLe64(frame.data() + 8, bytes.size());
  PutLe64(frame.data() + 16, XXH3_64bits(bytes.data(), bytes.size()));
  std::memcpy(frame.data() + kObjectFrameHeaderSize, bytes.data(),
              bytes.size());
  return frame;
}

absl::StatusOr<DecodedObject> DecodeObjectFrame(absl::string_view frame) {
  if (frame.size() < kObjectFrameHeaderSize ||
      std::memcmp(frame.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("object frame has no valid header");
  }
  if (static_cast<uint8_t>(frame[4]) != kObjectFrameVersion) {
    return absl::DataLossError(absl::StrCat(
        "object frame version ", static_cast<int>(frame[4]), " is unknown"));
  }
  const auto kind = static_cast<ObjectKind>(frame[5]);
  if (ObjectKindName(kind) == "unknown") {
    return absl::DataLossError("object frame has an unknown kind");
  }
  const absl::string_view bytes = frame.substr(kObjectFrameHeaderSize);
  if (GetLe64(frame.data() + 8) != bytes.size()) {
    return absl::DataLossError(absl::StrCat("object frame says ",
                                            GetLe64(frame.data() + 8),
                                            " bytes but holds ", bytes.size()));
  }
  if (GetLe64(frame.data() + 16) != XXH3_64bits(bytes.data(), bytes.size())) {
    return absl::DataLossError("object checksum does not match its bytes");
  }
  return DecodedObject{kind, bytes};
}

}  // namespace jitcache
