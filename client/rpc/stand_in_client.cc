#include "client/rpc/stand_in_client.h"

#include <cstdlib>
#include <cstring>

namespace jitcache {

std::unique_ptr<Client> ConnectStandIn(const char* disable_var) {
  if (const char* off = std::getenv(disable_var);
      off != nullptr && *off && std::strcmp(off, "0") != 0) {
    return nullptr;
  }
  ClientOptions options;
  options.local_fallback = false;
  absl::StatusOr<Client> client = Client::Connect(options);
  if (!client.ok()) return nullptr;
  return std::make_unique<Client>(*std::move(client));
}

}  // namespace jitcache
