#ifndef JITCACHE_CLIENT_WIRE_REAL_LIBRARY_H_
#define JITCACHE_CLIENT_WIRE_REAL_LIBRARY_H_

#include <string>

namespace jitcache {

// The toolkit's own copy of a library that jitcache stands in for
// (libnvrtc.so.13, libnvJitLink.so.13, libnvvm.so.4), opened by path:
// $ENV_VAR, else $CUDA_HOME/TOOLKIT_DIR/FILE_NAME, else
// /usr/local/cuda/TOOLKIT_DIR/FILE_NAME. Never by bare name, which would find
// the stand-in again. nullptr, with a line on stderr, when it cannot be
// opened. Thread-safe; each call opens (dlopen counts references), so
// callers keep the handle.
void* OpenRealLibrary(const char* env_var, const char* file_name,
                      const char* toolkit_dir = "lib64");

// The path OpenRealLibrary opens.
std::string RealLibraryPath(const char* env_var, const char* file_name,
                            const char* toolkit_dir = "lib64");

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_WIRE_REAL_LIBRARY_H_
