#ifndef JITCACHE_SERVER_ENGINE_REQUEST_LIMITS_H_
#define JITCACHE_SERVER_ENGINE_REQUEST_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// Bounds on one request; each violation is INVALID_ARGUMENT naming the field
// and the limit. max_request_bytes is also gRPC's receive limit.
struct RequestLimits {
  size_t max_source_bytes = size_t{16} << 20;
  size_t max_header_bytes = size_t{16} << 20;
  size_t max_headers = 4096;
  size_t max_included_files = 16384;
  size_t max_options = 512;
  size_t max_name_expressions = 4096;
  size_t max_request_bytes = size_t{64} << 20;
  size_t max_link_inputs = 1024;  // also digests per FindMissingObjects
};

// OK within the limit; else INVALID_ARGUMENT naming the field and the limit:
// "request has 5 options, over the limit of 4".
absl::Status CheckCount(absl::string_view field, size_t count, size_t limit);
// "source is 17 bytes, over the limit of 16 bytes".
absl::Status CheckSize(absl::string_view field, size_t size, size_t limit);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_REQUEST_LIMITS_H_
