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

std::optional<size_t> SameRealLibrary(
    const std::vector<DaemonLibrary>& daemon_libraries, const char* env_var,
    const char* file_name, const char* toolkit_dir, std::string* why) {
  const std::string path = RealLibraryPath(env_var, file_name, toolkit_dir);
  for (size_t i = 0; i < daemon_libraries.size(); ++i) {
    const DaemonLibrary& lib = daemon_libraries[i];
    if (lib.name != file_name) continue;
    if (StampHolds(path, lib.stamp)) return i;
    *why = "the daemon uses " + std::string(lib.path) +
           ", this process would use " + path + " (" + env_var + " names it)";
    return std::nullopt;
  }
  *why = std::string("the daemon does not say which ") + file_name + " it uses";
  return std::nullopt;
}

}  // namespace jitcache
