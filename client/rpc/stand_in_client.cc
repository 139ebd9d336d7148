#include "client/rpc/stand_in_client.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "client/wire/real_library.h"
#include "common/file_stamp.h"

namespace jitcache {
namespace {

// The daemon uses the very file this process would open as the real one.
bool SameLibrary(const DaemonInfo& daemon, const StandIn& stand_in,
                 std::string* why, DaemonInfo::Library* same) {
  std::vector<DaemonLibrary> libraries;
  for (const DaemonInfo::Library& lib : daemon.libraries) {
    libraries.push_back({lib.name, lib.path,
                         FileStamp{lib.device, lib.inode, lib.size,
                                   lib.mtime_ns, lib.ctime_ns}});
  }
  const std::optional<size_t> i = SameRealLibrary(
      libraries, stand_in.real_var, stand_in.file_name, "lib64", why);
  if (!i.has_value()) return false;
  if (same != nullptr) *same = daemon.libraries[*i];
  return true;
}

}  // namespace

std::unique_ptr<Client> ConnectStandIn(const StandIn& stand_in,
                                       DaemonInfo::Library* library) {
  if (EnvFlag(stand_in.disable_var)) return nullptr;
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
  if (EnvFlag(stand_in.verbose_var)) {
    std::fprintf(stderr, "jitcache %s: not using the daemon: %s\n",
                 stand_in.file_name, why.c_str());
  }
  return nullptr;
}

}  // namespace jitcache
