#include "server/store/object_frame.h"

#include <xxhash.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/little_endian.h"

namespace jitcache {
namespace {

constexpr char kMagic[4] = {'J', 'C', 'O', 'B'};

}  // namespace

std::string EncodeObjectFrame(ObjectKind kind, absl::string_view bytes) {
  std::string frame(bytes.size() + kObjectFrameTrailerSize, '\0');
  std::memcpy(frame.data(), bytes.data(), bytes.size());
  char* trailer = frame.data() + bytes.size();
  std::memcpy(trailer, kMagic, sizeof(kMagic));
  trailer[4] = static_cast<char>(kObjectFrameVersion);
  trailer[5] = static_cast<char>(kind);
  le::Put<uint64_t>(trailer + 8, bytes.size());
  le::Put<uint64_t>(trailer + 16, XXH3_64bits(bytes.data(), bytes.size()));
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
  const std::optional<ObjectKind> kind =
      ObjectKindFromNumber(static_cast<uint8_t>(trailer[5]));
  if (!kind.has_value()) {
    return absl::DataLossError("object frame has an unknown kind");
  }
  if (le::Get<uint64_t>(trailer + 8) != bytes.size()) {
    return absl::DataLossError(absl::StrCat("object frame says ",
                                            le::Get<uint64_t>(trailer + 8),
                                            " bytes but holds ", bytes.size()));
  }
  if (le::Get<uint64_t>(trailer + 16) !=
      XXH3_64bits(bytes.data(), bytes.size())) {
    return absl::DataLossError("object checksum does not match its bytes");
  }
  return DecodedObject{*kind, bytes};
}

}  // namespace jitcache
