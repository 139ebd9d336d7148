#include "server/store/object_frame.h"

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
  std::string frame(bytes.size() + kObjectFrameTrailerSize, '\0');
  std::memcpy(frame.data(), bytes.data(), bytes.size());
  char* trailer = frame.data() + bytes.size();
  std::memcpy(trailer, kMagic, sizeof(kMagic));
  trailer[4] = static_cast<char>(kObjectFrameVersion);
  trailer[5] = static_cast<char>(kind);
  PutLe64(trailer + 8, bytes.size());
  PutLe64(trailer + 16, XXH3_64bits(bytes.data(), bytes.size()));
  return frame;
}

absl::StatusOr<DecodedObject> DecodeObjectFrame(absl::string_view frame) {
  if (frame.size() < kObjectFrameTrailerSize) {
    return absl::DataLossError("object frame is shorter than its trailer");
  }
  const absl::string_view bytes =
      frame.substr(0, frame.size() - kObjectFrameTrailerSize);
  const char* trailer = frame.data() + bytes.size();
  if (std::memcmp(trailer, kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("object frame has no valid trailer");
  }
  if (static_cast<uint8_t>(trailer[4]) != kObjectFrameVersion) {
    return absl::DataLossError(absl::StrCat(
        "object frame version ", static_cast<int>(trailer[4]), " is unknown"));
  }
  const auto kind = static_cast<ObjectKind>(trailer[5]);
  if (ObjectKindName(kind) == "unknown") {
    return absl::DataLossError("object frame has an unknown kind");
  }
  if (GetLe64(trailer + 8) != bytes.size()) {
    return absl::DataLossError(absl::StrCat("object frame says ",
                                            GetLe64(trailer + 8),
                                            " bytes but holds ", bytes.size()));
  }
  if (GetLe64(trailer + 16) != XXH3_64bits(bytes.data(), bytes.size())) {
    return absl::DataLossError("object checksum does not match its bytes");
  }
  return DecodedObject{kind, bytes};
}

}  // namespace jitcache
