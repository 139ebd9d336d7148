#ifndef JITCACHE_SERVER_NET_PEER_LISTENER_H_
#define JITCACHE_SERVER_NET_PEER_LISTENER_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/net/acceptor.h"

namespace grpc {
class Server;
}

namespace jitcache {

// Who is at the other end of a Unix socket, as the kernel says
// (SO_PEERCRED at connect time); never what a request claims.
struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

// The credentials of the process at the other end of a connected Unix
// socket; nullopt if the kernel cannot say.
std::optional<PeerCredentials> PeerOf(int fd);

// Who may run the admin calls: root, the daemon's own user, and members
// (primary or supplementary) of `admin_group`.
struct AdminPolicy {
  uid_t daemon_uid = 0;
  std::optional<gid_t> admin_gid;
  std::string admin_group;  // its name, for messages
};
bool IsAdmin(const PeerCredentials& peer, const AdminPolicy& policy);

// Accepts the connections of a listening Unix socket itself and hands each
// to `server` (grpc::AddInsecureChannelFromFd), remembering each one's peer
// credentials: gRPC names such a connection "fd:N" in
// ServerContext::peer(), which Lookup maps back to the credentials.
// Thread-safety: Lookup from any thread; Start once, then Stop once (or
// destroy).
class PeerListener {
 public:
  // Takes ownership of `listen_fd` (this process's descriptor: a socket a
  // service manager passed keeps listening after Stop). Accepts nothing
  // until Start: whoever answers Lookup must be reachable first, as a
  // passed socket may hold connections already (a request on one would
  // otherwise ask a listener that is not there yet).
  static absl::StatusOr<std::unique_ptr<PeerListener>> Create(
      int listen_fd, grpc::Server* server);
  void Start();
  ~PeerListener();
  void Stop();

  std::optional<PeerCredentials> Lookup(absl::string_view peer) const;

 private:
  PeerListener(std::unique_ptr<Acceptor> acceptor, grpc::Server* server)
      : acceptor_(std::move(acceptor)), server_(server) {}
  void Accept();

  const std::unique_ptr<Acceptor> acceptor_;
  grpc::Server* const server_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int, PeerCredentials> peers_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_PEER_LISTENER_H_
