#ifndef JITCACHE_SERVER_REQUEST_LIMITS_H_
#define JITCACHE_SERVER_REQUEST_LIMITS_H_

#include <cstddef>

namespace jitcache {

// Bounds on one request; each violation is INVALID_ARGUMENT naming the field
// and the limit. max_request_bytes is also gRPC's receive limit.
struct RequestLimits {
  size_t max_source_bytes = size_t{16} << 20;
  size_t max_header_bytes = size_t{16} << 20;
  size_t max_headers = 4096;
  size_t max_options = 512;
  size_t max_name_expressions = 4096;
  size_t max_request_bytes = size_t{64} << 20;
  size_t max_link_inputs = 1024;  // also digests per FindMissingObjects
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REQUEST_LIMITS_H_
