#include "server/engine/request_limits.h"

#include "absl/strings/str_cat.h"

namespace jitcache {

absl::Status CheckCount(absl::string_view field, size_t count, size_t limit) {
  if (count <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "request has ", count, " ", field, ", over the limit of ", limit));
}

absl::Status CheckSize(absl::string_view field, size_t size, size_t limit) {
  if (size <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, " is ", size, " bytes, over the limit of ", limit, " bytes"));
}

}  // namespace jitcache
