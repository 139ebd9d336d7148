#include "client/wire/real_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/paths.h"

namespace jitcache {

std::string RealLibraryPath(const char* env_var, const char* file_name,
                            const char* toolkit_dir) {
  if (const char* p = std::getenv(env_var); p != nullptr && *p) return p;
  return CudaHome() + "/" + toolkit_dir + "/" + file_name;
}

void* OpenRealLibrary(const char* env_var, const char* file_name,
                      const char* toolkit_dir) {
  const std::string path = RealLibraryPath(env_var, file_name, toolkit_dir);
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "jitcache: cannot open the real %s (%s): %s\n",
                 file_name, path.c_str(), dlerror());
  }
  return lib;
}

}  // namespace jitcache
