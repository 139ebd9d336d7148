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

}  // namespace jitcache
