#ifndef JITCACHE_CLIENT_API_MAPPED_HIT_H_
#define JITCACHE_CLIENT_API_MAPPED_HIT_H_

#include <optional>
#include <string>

#include "client/wire/framed_channel.h"
#include "jitcache/object_code.h"

namespace jitcache::internal {

// The answer the daemon handed over as a sealed file: a binary object
// stays in the mapping (ObjectBytes shares it) while the process keeps
// under 256 MiB of them mapped, else it and PTX are copied; nullopt when
// the file is not a well-formed CompileResponse. Thread-safe.
std::optional<ObjectCode> ObjectCodeFromMapped(MappedAnswer answer,
                                               CodeType target,
                                               const std::string& name);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_API_MAPPED_HIT_H_
