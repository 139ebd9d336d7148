#include "client/rpc/stand_in_client.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/file_stamp.h"
#include "common/real_library.h"

namespace jitcache {
namespace {

bool Set(const char* var) {
  const char* value = std::getenv(var);
  return value != nullptr && *value && std::strcmp(value, "0") != 0;
}

// The daemon uses the very file this process would open as the real one.
bool SameLibrary(const DaemonInfo& daemon, const StandIn& stand_in,
                 std::string* why, DaemonInfo::Library* same) {
  const std::string path =
      RealLibraryPath(stand_in.real_var, stand_in.file_name);
  char resolved[PATH_MAX];
  struct stat st;
  if (realpath(path.c_str(), resolved) == nullptr || stat(resolved, &st) != 0) {
    *why = "the real " + path + " cannot be found";
    return false;
  }
  for (const DaemonInfo::Library& lib : daemon.libraries) {
    if (lib.name != stand_in.file_name) continue;
    if (lib.device == static_cast<uint64_t>(st.st_dev) &&
        lib.inode == static_cast<uint64_t>(st.st_ino) &&
        lib.size == static_cast<uint64_t>(st.st_size) &&
        lib.mtime_ns == StampNs(st.st_mtim)) {
      if (same != nullptr) *same = lib;
      return true;
    }
    *why =
        "the daemon uses " + lib.path + ", this process would use " + resolved;
    return false;
  }
  *why = std::string("the daemon does not say which ") + stand_in.file_name +
         " it uses";
  return false;
}

}  // namespace

std::unique_ptr<Client> ConnectStandIn(const StandIn& stand_in,
                                       DaemonInfo::Library* library) {
  if (Set(stand_in.disable_var)) return nullptr;
  ClientOptions options;
  options.local_fallback = false;
  absl::StatusOr<Client> client = Client::Connect(options);
  if (!client.ok()) return nullptr;
  absl::StatusOr<DaemonInfo> daemon = client->Ping();
  std::string why;
  if (!daemon.ok()) {
    why = std::string(daemon.status().message());
  } else if (SameLibrary(*daemon, stand_in, &why, library)) {
    return std::make_unique<Client>(*std::move(client));
  }
  if (Set(stand_in.verbose_var)) {
    std::fprintf(stderr, "jitcache %s: not using the daemon: %s\n",
                 stand_in.file_name, why.c_str());
  }
  return nullptr;
}

}  // namespace jitcache
