#ifndef JITCACHE_COMMON_SIZE_UNITS_H_
#define JITCACHE_COMMON_SIZE_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jitcache {

// "500M", "20G", "1.5GiB", "4096" -> bytes. K, M, G, T are powers of 1024
// (with or without "B"/"iB"); a bare number is bytes. INVALID_ARGUMENT,
// quoting the text, otherwise.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);
// 1536 -> "1.5 KiB".
std::string FormatSize(uint64_t bytes);

// "90s", "30m", "12h", "7d", "2w", or Go-style "1h30m" -> a duration.
absl::StatusOr<absl::Duration> ParseAge(absl::string_view text);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_SIZE_UNITS_H_
