#ifndef JITCACHE_CODE_TYPE_H_
#define JITCACHE_CODE_TYPE_H_

#include <cstdint>

namespace jitcache {

// What an object is: the one enum for it, in the API, the daemon and the
// store. kFatbin, kObject (a host object with device code) and kLibrary (a
// host archive) are link inputs only; kOptixIr (NVRTC's -optix-ir, which
// OptiX loads) is made by a compile only. The numbers are those of ObjectKind
// in jitcache.proto and part of the store's format and of cache keys:
// never renumber.
enum class CodeType : uint8_t {
  kPtx = 1,
  kCubin = 2,
  kLtoir = 3,
  kFatbin = 4,
  kObject = 5,
  kLibrary = 6,
  kOptixIr = 7,
};

}  // namespace jitcache

#endif  // JITCACHE_CODE_TYPE_H_
