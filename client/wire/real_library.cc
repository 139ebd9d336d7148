#include "client/wire/real_library.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/paths.h"

namespace jitcache {

namespace {

// The file this stand-in was loaded from, resolved ("" if unknown).
std::string OwnFile() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnFile), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) != nullptr ? resolved : "";
}

std::string Resolved(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? resolved : path;
}

// The real toolkit behind the toolkit-shaped directory a stand-in lives in,
// or "": make-cuda-root links its include/ to TOOLKIT/include, as spelled.
// The link itself is read, not resolved: a toolkit's own include/ is often a
// link further on (to targets/x86_64-linux/include), which is no root.
std::string ToolkitBehind(const std::string& own_file,
                          const char* toolkit_dir) {
  std::string root = own_file.substr(0, own_file.rfind('/'));
  for (const char* c = toolkit_dir; *c != '\0'; ++c) {
    if (*c == '/') root = root.substr(0, root.rfind('/'));
  }
  root = root.substr(0, root.rfind('/'));
  char target[PATH_MAX];
  const ssize_t n =
      readlink((root + "/include").c_str(), target, sizeof(target) - 1);
  if (n <= 0) return "";  // not a link: not a directory of ours
  std::string include(target, static_cast<size_t>(n));
  if (include.front() != '/') include = root + "/" + include;
  const size_t slash = include.rfind('/');
  if (slash == std::string::npos || include.substr(slash) != "/include") {
    return "";
  }
  return include.substr(0, slash);
}

}  // namespace

std::string RealLibraryPath(const char* env_var, const char* file_name,
                            const char* toolkit_dir) {
  if (const char* p = std::getenv(env_var); p != nullptr && *p) return p;
  const std::string path = CudaHome() + "/" + toolkit_dir + "/" + file_name;
  // CUDA_HOME may name the stand-ins' own toolkit-shaped directory (it
  // answers for the toolkit): the real library is the toolkit's behind it,
  // never this very file again.
  const std::string own = OwnFile();
  if (!own.empty() && Resolved(path) == own) {
    const std::string behind = ToolkitBehind(own, toolkit_dir);
    if (!behind.empty()) {
      return behind + "/" + toolkit_dir + "/" + file_name;
    }
  }
  return path;
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
