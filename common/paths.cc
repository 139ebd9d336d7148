#include "common/paths.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

// Plain C++ only: the `jitcache` front end compiles this file in and loads
// no library beyond libc and libstdc++.
namespace jitcache {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string HomeDirectory() {
  if (std::string home = Env("HOME"); !home.empty()) return home;
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir) {
    return pw->pw_dir;
  }
  return "/tmp";
}

}  // namespace

std::string DefaultSocketPath() {
  if (std::string socket = Env("JITCACHE_SOCKET"); !socket.empty()) {
    return socket;
  }
  if (std::string runtime = Env("XDG_RUNTIME_DIR"); !runtime.empty()) {
    return runtime + "/jitcache.sock";
  }
  return "/tmp/jitcache-" + std::to_string(getuid()) + ".sock";
}

std::string DefaultClientSocketPath() {
  if (std::string socket = Env("JITCACHE_SOCKET"); !socket.empty()) {
    return socket;
  }
  if (access(kServiceSocketPath, F_OK) == 0) return kServiceSocketPath;
  return DefaultSocketPath();
}

std::string DefaultStorePath() {
  if (std::string store = Env("JITCACHE_STORE"); !store.empty()) return store;
  if (std::string cache = Env("XDG_CACHE_HOME"); !cache.empty()) {
    return cache + "/jitcache";
  }
  return HomeDirectory() + "/.cache/jitcache";
}

std::string DefaultScanCachePath() {
  if (const char* set = getenv("JITCACHE_SCAN_CACHE"); set != nullptr) {
    return std::string(set) == "off" ? "" : set;
  }
  if (std::string cache = Env("XDG_CACHE_HOME"); !cache.empty()) {
    return cache + "/jitcache-scan";
  }
  return HomeDirectory() + "/.cache/jitcache-scan";
}

bool EnvFlag(const char* var) {
  const char* value = std::getenv(var);
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

bool IsNormalAbsolutePath(std::string_view path) {
  if (path.size() < 2 || path[0] != '/' || path.back() == '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool IsUnder(std::string_view path, std::string_view dir, bool or_equal) {
  if (path == dir) return or_equal;
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() && path.substr(0, dir.size()) == dir &&
         path[dir.size()] == '/';
}

std::string CudaHome() {
  const char* home = std::getenv("CUDA_HOME");
  return home != nullptr && *home != '\0' ? home : "/usr/local/cuda";
}

}  // namespace jitcache
