#include "server/daemon.h"

#include <grp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "server/build/cuda_compiler.h"
#include "server/build/worker_compiler.h"
#include "server/store/node_store.h"
#include "server/store/verifying_store.h"

namespace jitcache {
namespace {

absl::StatusOr<gid_t> GroupId(const std::string& flag,
                              const std::string& name) {
  struct group gr;
  struct group* found = nullptr;
  std::vector<char> buffer(16384);
  if (getgrnam_r(name.c_str(), &gr, buffer.data(), buffer.size(), &found) !=
          0 ||
      found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": no group named ", name));
  }
  return gr.gr_gid;
}

}  // namespace

namespace {

// Who may run the admin commands (--admin_group besides root and the
// daemon's own user).
absl::StatusOr<AdminPolicy> AdminPolicyOf(const DaemonOptions& options) {
  AdminPolicy admin;
  admin.daemon_uid = geteuid();
  if (!options.admin_group.empty()) {
    absl::StatusOr<gid_t> gid = GroupId("--admin_group", options.admin_group);
    if (!gid.ok()) return gid.status();
    admin.admin_gid = *gid;
    admin.admin_group = options.admin_group;
  }
  return admin;
}

// The group and mode the sockets are born with (--socket_group,
// --socket_mode).
absl::StatusOr<SocketAccess> SocketAccessOf(const DaemonOptions& options) {
  SocketAccess access;
  access.mode = options.socket_mode;
  if (options.socket_group.empty()) return access;
  absl::StatusOr<gid_t> gid = GroupId("--socket_group", options.socket_group);
  if (!gid.ok()) return gid.status();
  access.group = *gid;
  return access;
}

// Each compile runs in a view of its own (user and mount namespaces):
// where the kernel refuses them, every miss would fail. Says so at start.
absl::Status ProbeWorkers(Compiler& workers) {
  CompileJob probe;
  probe.program_name = "jitcache_view_probe.cu";
  probe.source = "__global__ void jitcache_view_probe() {}\n";
  probe.deadline = absl::Now() + absl::Minutes(2);
  absl::StatusOr<ActionResult> checked = workers.Compile(probe);
  if (checked.ok() && checked->ok) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "a compile worker cannot compile (",
      checked.ok() ? checked->log : checked.status().ToString(),
      "). Each compile runs in a user and mount namespace of its own: "
      "the kernel must let this user make them (sysctl "
      "user.max_user_namespaces > 0; on Ubuntu "
      "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor "
      "profile for jitcache-worker; RestrictNamespaces= must allow "
      "user and mnt)"));
}

}  // namespace

absl::Status Daemon::OpenStore(DaemonOptions& options) {
  if (options.store != nullptr) {
    store_ = std::move(options.store);
  } else if (options.store_path == ":memory:") {
    store_ = NewMemoryStore();
  } else {
    absl::StatusOr<std::unique_ptr<VerifyingStore>> store = OpenRocksDbStore(
        options.store_path, {options.compression, options.janitor.max_size});
    if (!store.ok()) return store.status();
    store_ = *std::move(store);
  }
  return absl::OkStatus();
}

absl::Status Daemon::StartCompiler(DaemonOptions& options) {
  if (options.compiler != nullptr) {
    compiler_ = std::move(options.compiler);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<CudaCompiler>> compiler = CudaCompiler::Create(
      options.cuda_root.empty() ? DefaultCudaRoot() : options.cuda_root,
      options.ptxas, options.libnvvm);
  if (!compiler.ok()) return compiler.status();
  if (options.in_process_compiles) {
    compiler_ = *std::move(compiler);
    return absl::OkStatus();
  }
  WorkerOptions workers;
  workers.binary = options.worker_binary.empty() ? DefaultWorkerBinary()
                                                 : options.worker_binary;
  workers.memory_limit = options.compile_memory_limit;
  workers.time_limit = options.compile_time_limit;
  absl::StatusOr<std::unique_ptr<WorkerCompiler>> isolated =
      WorkerCompiler::Create(std::move(workers), *std::move(compiler));
  if (!isolated.ok()) return isolated.status();
  if (absl::Status s = ProbeWorkers(**isolated); !s.ok()) return s;
  compiler_ = *std::move(isolated);
  return absl::OkStatus();
}

void Daemon::MakeService(const DaemonOptions& options, AdminPolicy admin,
                         int workers, bool compiles_in_views) {
  ServiceOptions service;
  service.store = store_.get();
  service.compiler = compiler_.get();
  service.pool = pool_.get();
  service.limits = options.limits;
  service.compile_time_limit = options.compile_time_limit;
  service.kept_file_sets = options.kept_file_sets;
  service.hot_cache_size = options.hot_cache_size;
  service.shared_answer_size = options.shared_answer_size;
  service.store_path = options.store_path;
  service.janitor = janitor_.get();
  service.admin = admin;
  service.remote = remote_.get();
  service.config = options.config;
  // An in-process compile runs in the daemon's own place, not the caller's:
  // it cannot show that another place gives the same answer.
  service.proves_places = compiles_in_views && options.place_proofs;
  service.proof_threads = 2 * workers;
  service.max_queued_proofs = options.max_queued;
  // listener_ is set before it accepts anything (see PeerListener::Create):
  // under socket activation connections may be waiting already.
  service.peer_credentials = [this](absl::string_view peer) {
    return listener_->Lookup(peer);
  };
  service_ = std::make_unique<JitCacheService>(std::move(service));
}

absl::Status Daemon::StartGrpc(const DaemonOptions& options,
                               const SocketAccess& access) {
  // The daemon accepts connections itself, so that it knows each peer's
  // credentials from the kernel; gRPC gets the connected sockets.
  absl::StatusOr<int> listen_fd =
      options.inherited.has_value()
          ? absl::StatusOr<int>(options.inherited->grpc_fd)
          : ListenUnix(options.socket_path, access);
  if (!listen_fd.ok()) return listen_fd.status();
  // grpc.health.v1.Health, for load balancers and probes: SERVING until
  // shutdown starts.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<size_t>(
      options.limits.max_request_bytes, std::numeric_limits<int>::max())));
  builder.SetMaxSendMessageSize(-1);
  // Requests carry sources and headers of up to megabytes: let them flow
  // without waiting for HTTP/2 window updates (the default is 64 KiB).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 << 20);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) {
    close(*listen_fd);
    return absl::UnavailableError("cannot start the gRPC server");
  }
  absl::StatusOr<std::unique_ptr<PeerListener>> listener =
      PeerListener::Create(*listen_fd, server_.get());
  if (!listener.ok()) return listener.status();
  listener_ = *std::move(listener);
  listener_->Start();
  return absl::OkStatus();
}

void Daemon::StartFramedSocket(const DaemonOptions& options,
                               const SocketAccess& access) {
  JitCacheService* answering = service_.get();
  FramedSocket::Answer answer = [answering](absl::string_view request,
                                            const PeerCredentials& peer) {
    return answering->framed_door().Answer(request, peer);
  };
  FramedSocket::Options hit_options;
  hit_options.max_request_bytes = options.limits.max_request_bytes;
  const std::string hit_path = options.socket_path + ".hit";
  absl::StatusOr<std::unique_ptr<FramedSocket>> hits =
      absl::FailedPreconditionError(
          "the service manager passed no PATH.hit socket; clients use "
          "gRPC for hits");
  if (!options.inherited.has_value()) {
    hits =
        FramedSocket::Start(hit_path, access, std::move(answer), hit_options);
  } else if (options.inherited->hit_fd.has_value()) {
    hits = FramedSocket::Adopt(*options.inherited->hit_fd, std::move(answer),
                               hit_options);
  }
  // Only an optimisation for short-lived clients, which fall back to
  // gRPC: its failure (a socket path too long for the suffix, say) must
  // not keep the daemon down.
  if (hits.ok()) {
    framed_socket_ = *std::move(hits);
  } else {
    JITCACHE_LOG(Warning) << "no framed socket: " << hits.status();
  }
}

absl::Status Daemon::StartMetrics(const std::string& address) {
  const JitCacheService* serving = service_.get();
  const ServiceCounters& counters = serving->counters();
  absl::StatusOr<std::unique_ptr<MetricsExporter>> metrics =
      MetricsExporter::Start(
          address, {.stats = [serving] { return serving->StatsForAdmin(); },
                    .hit_latency = &counters.hit_latency,
                    .miss_latency = &counters.miss_latency,
                    .compile_time = &counters.compile_time});
  if (!metrics.ok()) return metrics.status();
  metrics_ = *std::move(metrics);
  JITCACHE_LOG(Info) << "metrics on http://" << address << "/metrics (port "
                     << metrics_->port() << ")";
  return absl::OkStatus();
}

void Daemon::AnnounceReady(const DaemonOptions& options, int workers) {
  ObjectStore* store = store_.get();
  notifier_ = std::make_unique<ServiceNotifier>([store] {
    // A store that answers is a daemon that serves; one wedged on a lock
    // or a disk stops the pings and gets restarted.
    (void)store->Stats();
    return true;
  });
  JITCACHE_LOG(Info) << "jitcached serving on " << options.socket_path
                     << " with store " << options.store_path << ", " << workers
                     << " compile workers, "
                     << compiler_->toolchain().description
                     << (options.inherited.has_value()
                             ? " (sockets from the service manager)"
                             : "");
  notifier_->Ready(absl::StrCat("serving on ", options.socket_path, ", ",
                                store_->Stats().actions,
                                " entries in the store"));
}

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(DaemonOptions options) {
  auto daemon = std::unique_ptr<Daemon>(new Daemon());
  // The store first: a second daemon on the same store stops here, before it
  // touches the socket of the first.
  if (absl::Status s = daemon->OpenStore(options); !s.ok()) return s;
  absl::StatusOr<AdminPolicy> admin = AdminPolicyOf(options);
  if (!admin.ok()) return admin.status();
  absl::StatusOr<SocketAccess> socket_access = SocketAccessOf(options);
  if (!socket_access.ok()) return socket_access.status();
  const bool compiles_in_views =
      options.compiler != nullptr || !options.in_process_compiles;
  if (absl::Status s = daemon->StartCompiler(options); !s.ok()) return s;

  // A socket the service manager passed is its own: no claim, no unlink.
  if (options.inherited.has_value()) {
    options.socket_path = options.inherited->grpc_path;
  } else {
    absl::StatusOr<std::unique_ptr<SocketGuard>> guard =
        SocketGuard::Claim(options.socket_path);
    if (!guard.ok()) return guard.status();
    daemon->guard_ = *std::move(guard);
  }
  daemon->socket_path_ = options.socket_path;
  daemon->janitor_ =
      std::make_unique<StoreJanitor>(daemon->store_.get(), options.janitor);
  int workers = options.workers;
  if (workers <= 0) workers = std::max(1u, std::thread::hardware_concurrency());
  daemon->pool_ = std::make_unique<CompilePool>(workers, options.max_queued,
                                                options.max_queued_per_user);
  if (!options.remote.url.empty()) {
    absl::StatusOr<std::unique_ptr<RedisTier>> remote =
        RedisTier::Create(options.remote);
    if (!remote.ok()) return remote.status();
    daemon->remote_ = *std::move(remote);
  }
  daemon->MakeService(options, *admin, workers, compiles_in_views);
  // Every door is open with its access before the first connection is
  // accepted: PATH.hit is in place (and answers) before PATH appears, and
  // each file is born with its final group and mode.
  if (options.hit_socket) daemon->StartFramedSocket(options, *socket_access);
  if (absl::Status s = daemon->StartGrpc(options, *socket_access); !s.ok()) {
    return s;
  }
  if (!options.metrics_address.empty()) {
    if (absl::Status s = daemon->StartMetrics(options.metrics_address);
        !s.ok()) {
      return s;
    }
  }
  daemon->AnnounceReady(options, workers);
  return daemon;
}

void Daemon::Shutdown(absl::Duration grace) {
  if (stopped_) return;
  stopped_ = true;
  const absl::Time start = absl::Now();
  if (notifier_ != nullptr) notifier_->Stopping();
  if (server_ != nullptr) {
    server_->GetHealthCheckService()->SetServingStatus(false);
  }
  metrics_.reset();
  // No new connections: under socket activation they wait in the socket's
  // backlog for the next daemon.
  if (framed_socket_ != nullptr) framed_socket_->Stop();
  if (listener_ != nullptr) listener_->Stop();
  // gRPC tells connected clients to go (GOAWAY: their next calls open a new
  // connection) and waits for the calls in flight, while queued and running
  // compiles are made to answer UNAVAILABLE: nothing half-done is stored.
  std::thread drain;
  if (server_ != nullptr) {
    drain = std::thread([this, grace] {
      server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
    });
  }
  if (service_ != nullptr) service_->CancelRunningCompiles();
  if (compiler_ != nullptr) compiler_->CancelAll();
  if (pool_ != nullptr) pool_->Shutdown();
  // Pending admin calls are answered, so that the drain does not wait.
  janitor_.reset();
  const absl::Time compiles_stopped = absl::Now();
  if (drain.joinable()) drain.join();
  if (server_ != nullptr) {
    server_->Wait();
    server_.reset();
  }
  JITCACHE_LOG(Info) << "shut down: compiles stopped in "
                     << (compiles_stopped - start) << ", requests drained in "
                     << (absl::Now() - compiles_stopped);
  guard_.reset();
  notifier_.reset();
}

Daemon::~Daemon() { Shutdown(absl::Seconds(5)); }

}  // namespace jitcache
