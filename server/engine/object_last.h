#ifndef JITCACHE_SERVER_ENGINE_OBJECT_LAST_H_
#define JITCACHE_SERVER_ENGINE_OBJECT_LAST_H_

#include <string>

#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// `response` serialised with its object as the last field (protobuf's
// parsers take a message's fields in any order). A caller that maps a large
// answer (the framed socket's sealed files) finds everything else on its
// first pages, and faults in the object's pages only when it reads them.
std::string SerializeObjectLast(v1::CompileResponse response);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_OBJECT_LAST_H_
