#ifndef JITCACHE_SERVER_DAEMON_H_
#define JITCACHE_SERVER_DAEMON_H_

#include <grpcpp/server.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/build/compile_pool.h"
#include "server/build/compiler.h"
#include "server/engine/request_limits.h"
#include "server/metrics/metrics_exporter.h"
#include "server/net/framed_socket.h"
#include "server/net/peer_listener.h"
#include "server/net/socket_guard.h"
#include "server/net/unix_listen.h"
#include "server/remote/redis_tier.h"
#include "server/rpc/jitcache_service.h"
#include "server/store/object_store.h"
#include "server/store/rocksdb_kv.h"
#include "server/store/store_janitor.h"
#include "server/systemd/listen_sockets.h"
#include "server/systemd/service_notifier.h"

namespace jitcache {

struct DaemonOptions {
  std::string socket_path;
  // Sockets a service manager passed (socket activation): served instead of
  // binding socket_path, and never removed.
  std::optional<InheritedSockets> inherited;
  // Stand-alone only (a .socket unit sets its own): the socket files' group
  // and mode, so that a team's group may connect.
  std::string socket_group;
  std::optional<mode_t> socket_mode;
  // RocksDB directory; ":memory:" keeps the store in memory (tests).
  std::string store_path;
  std::string cuda_root;
  // ptxas binaries besides the toolkit's that may be run (ptxas_registry.h).
  std::vector<std::string> ptxas;
  // The libNVVM libnvvm.so.4 asks the daemon to run (nvvm_library.h): ""
  // for the toolkit's nvvm/lib64/libnvvm.so.4 when there is one, "none" for
  // no libNVVM (every caller's libNVVM runs in its own process).
  std::string libnvvm;
  int workers = 0;  // 0: one per core
  size_t max_queued = 1024;
  size_t max_queued_per_user = 0;  // 0: only max_queued
  // Compiles run in jitcache-worker processes (worker_compiler.h) unless
  // in_process_compiles; each worker's address space is capped at
  // compile_memory_limit bytes (0: no cap).
  bool in_process_compiles = false;
  // Share answers between places where a compile elsewhere proves them
  // the same (ServiceOptions::proves_places).
  bool place_proofs = true;
  std::string worker_binary;  // empty: next to this executable
  uint64_t compile_memory_limit = uint64_t{8} << 30;
  // The cluster tier (redis://... or unix://...); empty url: none.
  RemoteOptions remote;
  // HOST:PORT for Prometheus metrics; empty: none.
  std::string metrics_address;
  absl::Duration compile_time_limit = absl::Minutes(10);
  size_t kept_file_sets = 8;
  uint64_t hot_cache_size = uint64_t{256} << 20;  // see HotAnswers
  // ServiceOptions::shared_answer_size.
  uint64_t shared_answer_size = uint64_t{256} << 10;
  // Also answer hits on socket_path + ".hit" (see FramedSocket).
  bool hit_socket = true;
  RequestLimits limits;
  // The store's bounds (max_size, max_age, watermarks) and compression.
  JanitorOptions janitor;
  Compression compression = Compression::kZstd;
  // Members of this group may run the admin calls (besides root and the
  // daemon's own user); empty: nobody else.
  std::string admin_group;
  // The effective settings `jitcache config` shows (main fills it).
  std::vector<std::pair<std::string, std::string>> config;
  // Injected for tests; when null the daemon makes the real ones.
  std::unique_ptr<Compiler> compiler;
  std::unique_ptr<ObjectStore> store;
};

// A running jitcached: owns the store, the compiler, the pool, the socket
// and the gRPC server. Thread-safety: Shutdown may be called from any thread,
// once; the destructor shuts down if needed.
class Daemon {
 public:
  // Opens everything and starts serving; an error names what failed (the
  // store path, the socket path, the toolkit).
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(DaemonOptions options);
  ~Daemon();

  // Stops taking requests, cancels queued compiles, lets running ones finish
  // within `grace`, then closes the store.
  void Shutdown(absl::Duration grace);

  const ToolchainInfo& toolchain() const { return compiler_->toolchain(); }
  const std::string& socket_path() const { return socket_path_; }

 private:
  Daemon() = default;

  // Start's steps, in order.
  absl::Status OpenStore(DaemonOptions& options);
  absl::Status StartCompiler(DaemonOptions& options);
  void MakeService(const DaemonOptions& options, AdminPolicy admin, int workers,
                   bool compiles_in_views);
  absl::Status StartGrpc(const DaemonOptions& options,
                         const SocketAccess& access);
  void StartFramedSocket(const DaemonOptions& options,
                         const SocketAccess& access);
  absl::Status StartMetrics(const std::string& address);
  void AnnounceReady(const DaemonOptions& options, int workers);

  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<StoreJanitor> janitor_;
  std::unique_ptr<CompilePool> pool_;
  std::unique_ptr<JitCacheService> service_;
  std::unique_ptr<SocketGuard> guard_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<PeerListener> listener_;
  std::unique_ptr<FramedSocket> framed_socket_;
  std::unique_ptr<MetricsExporter> metrics_;
  std::unique_ptr<RedisTier> remote_;
  std::unique_ptr<ServiceNotifier> notifier_;
  std::string socket_path_;
  bool stopped_ = false;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_DAEMON_H_
