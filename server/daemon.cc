#include "server/daemon.h"

#include <grp.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/cuda_compiler.h"
#include "server/store/rocksdb_kv.h"
#include "server/store/verifying_store.h"

namespace jitcache {

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(DaemonOptions options) {
  auto daemon = std::unique_ptr<Daemon>(new Daemon());

  // The store first: a second daemon on the same store stops here, before it
  // touches the socket of the first.
  if (options.store != nullptr) {
    daemon->store_ = std::move(options.store);
  } else if (options.store_path == ":memory:") {
    daemon->store_ = NewMemoryStore();
  } else {
    absl::StatusOr<std::unique_ptr<VerifyingStore>> store = OpenRocksDbStore(
        options.store_path, {options.compression, options.janitor.max_size});
    if (!store.ok()) return store.status();
    daemon->store_ = *std::move(store);
  }

  AdminPolicy admin;
  admin.daemon_uid = geteuid();
  if (!options.admin_group.empty()) {
    struct group gr;
    struct group* found = nullptr;
    std::vector<char> buffer(16384);
    if (getgrnam_r(options.admin_group.c_str(), &gr, buffer.data(),
                   buffer.size(), &found) != 0 ||
        found == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--admin_group: no group named ", options.admin_group));
    }
    admin.admin_gid = gr.gr_gid;
    admin.admin_group = options.admin_group;
  }

  if (options.compiler != nullptr) {
    daemon->compiler_ = std::move(options.compiler);
  } else {
    absl::StatusOr<std::unique_ptr<CudaCompiler>> compiler =
        CudaCompiler::Create(options.cuda_root.empty() ? DefaultCudaRoot()
                                                       : options.cuda_root);
    if (!compiler.ok()) return compiler.status();
    daemon->compiler_ = *std::move(compiler);
  }

  absl::StatusOr<std::unique_ptr<SocketGuard>> guard =
      SocketGuard::Claim(options.socket_path);
  if (!guard.ok()) return guard.status();
  daemon->guard_ = *std::move(guard);
  daemon->janitor_ =
      std::make_unique<StoreJanitor>(daemon->store_.get(), options.janitor);

  int workers = options.workers;
  if (workers <= 0) workers = std::max(1u, std::thread::hardware_concurrency());
  daemon->pool_ = std::make_unique<CompilePool>(workers, options.max_queued);

  ServiceOptions service;
  service.store = daemon->store_.get();
  service.compiler = daemon->compiler_.get();
  service.pool = daemon->pool_.get();
  service.limits = options.limits;
  service.compile_time_limit = options.compile_time_limit;
  service.store_path = options.store_path;
  service.janitor = daemon->janitor_.get();
  service.admin = admin;
  service.config = options.config;
  // Set once the listener exists; requests arrive only after that.
  Daemon* self = daemon.get();
  service.peer_credentials = [self](absl::string_view peer) {
    return self->listener_->Lookup(peer);
  };
  daemon->service_ = std::make_unique<JitCacheService>(std::move(service));

  // The daemon accepts connections itself, so that it knows each peer's
  // credentials from the kernel; gRPC gets the connected sockets.
  absl::StatusOr<int> listen_fd = ListenUnix(options.socket_path);
  if (!listen_fd.ok()) return listen_fd.status();
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<size_t>(
      options.limits.max_request_bytes, std::numeric_limits<int>::max())));
  builder.SetMaxSendMessageSize(-1);
  // Requests carry sources and headers of up to megabytes: let them flow
  // without waiting for HTTP/2 window updates (the default is 64 KiB).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 << 20);
  builder.RegisterService(daemon->service_.get());
  daemon->server_ = builder.BuildAndStart();
  if (daemon->server_ == nullptr) {
    close(*listen_fd);
    return absl::UnavailableError("cannot start the gRPC server");
  }
  absl::StatusOr<std::unique_ptr<PeerListener>> listener =
      PeerListener::Start(*listen_fd, daemon->server_.get());
  if (!listener.ok()) return listener.status();
  daemon->listener_ = *std::move(listener);
  if (options.hit_socket) {
    JitCacheService* answering = daemon->service_.get();
    absl::StatusOr<std::unique_ptr<HitSocket>> hits = HitSocket::Start(
        options.socket_path + ".hit", options.limits.max_request_bytes,
        [answering](const std::string& request) {
          return answering->AnswerHit(request);
        });
    // Only an optimisation for short-lived clients, which fall back to
    // gRPC: its failure (a socket path too long for the suffix, say) must
    // not keep the daemon down.
    if (hits.ok()) {
      daemon->hit_socket_ = *std::move(hits);
    } else {
      JITCACHE_LOG(Warning) << "no hit socket: " << hits.status();
    }
  }
  JITCACHE_LOG(Info) << "jitcached serving on " << options.socket_path
                     << " with store " << options.store_path << ", " << workers
                     << " compile workers, "
                     << daemon->compiler_->toolchain().description;
  return daemon;
}

void Daemon::Shutdown(absl::Duration grace) {
  if (stopped_) return;
  stopped_ = true;
  // Queued and running compiles answer UNAVAILABLE; nothing half-done is
  // stored.
  const absl::Time start = absl::Now();
  if (hit_socket_ != nullptr) hit_socket_->Stop();
  if (service_ != nullptr) service_->CancelRunningCompiles();
  if (pool_ != nullptr) pool_->Shutdown();
  // Pending admin calls are answered before gRPC waits for them.
  janitor_.reset();
  const absl::Time compiles_stopped = absl::Now();
  if (listener_ != nullptr) listener_->Stop();
  if (server_ != nullptr) {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
    server_->Wait();
    server_.reset();
  }
  JITCACHE_LOG(Info) << "shut down: compiles stopped in "
                     << (compiles_stopped - start) << ", requests drained in "
                     << (absl::Now() - compiles_stopped);
  guard_.reset();
}

Daemon::~Daemon() { Shutdown(absl::Seconds(5)); }

}  // namespace jitcache
