#ifndef JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_
#define JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_

#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "server/build/compile_pool.h"
#include "server/build/compiler.h"
#include "server/build/kept_file_sets.h"
#include "server/build/path_stats.h"
#include "server/engine/action_kinds.h"
#include "server/engine/cache_engine.h"
#include "server/engine/compile_request.h"
#include "server/engine/conversation.h"
#include "server/engine/link_request.h"
#include "server/engine/nvvm_request.h"
#include "server/engine/ptxas_request.h"
#include "server/engine/request_limits.h"
#include "server/engine/service_counters.h"
#include "server/engine/user_stats.h"
#include "server/net/kept_connection.h"
#include "server/net/peer_listener.h"
#include "server/rpc/answer_reactor.h"
#include "server/rpc/framed_door.h"
#include "server/rpc/request_counting.h"
#include "server/store/object_store.h"
#include "server/store/remote_tier.h"
#include "server/store/store_janitor.h"
#include "server/store/tiered_store.h"

namespace jitcache {

// The engine's options (store, compiler, pool, team tier, limits of a run,
// hot answers, proof threads: cache_engine.h) and the doors' own. The
// service fills EngineOptions::counters with its own.
struct ServiceOptions : EngineOptions {
  RequestLimits limits;
  std::string store_path;  // reported by Ping
  // Background store housekeeping; null: no eviction (admin calls that need
  // it answer UNIMPLEMENTED). Not owned.
  StoreJanitor* janitor = nullptr;
  // The kernel's credentials of a gRPC peer ("fd:N"); unset or nullopt: not
  // known, which is never an administrator.
  std::function<std::optional<PeerCredentials>(absl::string_view peer)>
      peer_credentials;
  AdminPolicy admin;
  // The effective settings GetConfig reports, in order.
  std::vector<std::pair<std::string, std::string>> config;
  // How many sets of included files are kept for the next miss.
  size_t kept_file_sets = 8;
  // Whether the compiler runs each compile in a view of the caller's place
  // (compile workers), so that a compile run elsewhere proves whether an
  // answer depends on the place (place_proof.h). Without, every compile
  // is kept for its own place.
  bool proves_places = true;
  // A hit at least this large goes to a caller that takes them that way
  // (kCompileShared, kHitShared) as a sealed memory file (sealed_file.h); 0:
  // never.
  uint64_t shared_answer_size = uint64_t{256} << 10;
};

// The JitCache gRPC service (callback API). A handler validates, computes the
// key and reads the store; a hit finishes at once on the gRPC thread. A miss
// joins the single flight for its key; the first joiner queues one compile on
// the pool, and the worker that runs it stores the result and finishes every
// joined request. No gRPC thread waits for a compile. A request that is
// cancelled (or whose deadline passes) while it waits is answered at once and
// leaves its flight; the compile goes on for the others and for the store.
// Thread-safety: handlers run concurrently on gRPC's threads.
class JitCacheService final : public v1::JitCache::CallbackService {
 public:
  explicit JitCacheService(ServiceOptions options);

  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context,
                                 const v1::PingRequest* request,
                                 v1::PingResponse* response) override;
  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const v1::CompileRequest* request,
                                    v1::CompileResponse* response) override;
  grpc::ServerUnaryReactor* Link(grpc::CallbackServerContext* context,
                                 const v1::LinkRequest* request,
                                 v1::CompileResponse* response) override;
  // jitcache-ptxas: one run of a registered ptxas (ptxas_request.h).
  grpc::ServerUnaryReactor* Ptxas(grpc::CallbackServerContext* context,
                                  const v1::PtxasRequest* request,
                                  v1::CompileResponse* response) override;
  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const v1::StatsRequest* request,
                                     v1::StatsResponse* response) override;
  // Content-addressed objects (object_rpcs.cc).
  grpc::ServerUnaryReactor* FindMissingObjects(
      grpc::CallbackServerContext* context,
      const v1::FindMissingObjectsRequest* request,
      v1::FindMissingObjectsResponse* response) override;
  grpc::ServerUnaryReactor* UploadObject(
      grpc::CallbackServerContext* context,
      const v1::UploadObjectRequest* request,
      v1::UploadObjectResponse* response) override;
  grpc::ServerUnaryReactor* FetchObject(
      grpc::CallbackServerContext* context,
      const v1::FetchObjectRequest* request,
      v1::FetchObjectResponse* response) override;
  // Inspection (inspect_rpcs.cc).
  grpc::ServerUnaryReactor* ListEntries(
      grpc::CallbackServerContext* context,
      const v1::ListEntriesRequest* request,
      v1::ListEntriesResponse* response) override;
  grpc::ServerUnaryReactor* ShowEntry(grpc::CallbackServerContext* context,
                                      const v1::ShowEntryRequest* request,
                                      v1::ShowEntryResponse* response) override;
  grpc::ServerUnaryReactor* ExportEntries(
      grpc::CallbackServerContext* context, const v1::ExportRequest* request,
      v1::ExportResponse* response) override;
  // Admin (admin_rpcs.cc): PERMISSION_DENIED unless the peer is an admin.
  grpc::ServerUnaryReactor* Evict(grpc::CallbackServerContext* context,
                                  const v1::EvictRequest* request,
                                  v1::EvictResponse* response) override;
  grpc::ServerUnaryReactor* Clear(grpc::CallbackServerContext* context,
                                  const v1::ClearRequest* request,
                                  v1::EvictResponse* response) override;
  grpc::ServerUnaryReactor* GetConfig(grpc::CallbackServerContext* context,
                                      const v1::ConfigRequest* request,
                                      v1::ConfigResponse* response) override;
  grpc::ServerUnaryReactor* ImportEntries(
      grpc::CallbackServerContext* context, const v1::ImportRequest* request,
      v1::ImportResponse* response) override;

  // The framed socket's door (framed_door.h), beside this gRPC one, over
  // the same engine and counters.
  FramedDoor& framed_door() { return framed_door_; }

  // The counters and histograms (for the metrics exporter), and a stats
  // snapshot as an administrator sees it.
  const ServiceCounters& counters() const { return counters_; }
  v1::StatsResponse StatsForAdmin() const;

  // Makes running compiles stop (they answer UNAVAILABLE). Queued ones are
  // cancelled by the pool's own Shutdown.
  void CancelRunningCompiles() { engine_.CancelRunning(); }

 private:
  using SharedResult = CacheEngine::SharedResult;
  using KeyLevel = ActionKinds::KeyLevel;

  // A connection whose user the kernel did not tell (an in-process channel).
  static constexpr uid_t kUnknownUser = static_cast<uid_t>(-1);
  std::optional<PeerCredentials> PeerOfCall(
      const grpc::CallbackServerContext& context) const;
  uid_t UserOfCall(const grpc::CallbackServerContext& context) const;
  // Everything GetStats answers; the per-user rows of `only_user` only,
  // when given.
  void FillStats(v1::StatsResponse* response,
                 std::optional<uid_t> only_user) const;

  // Finishes a short call on the gRPC thread, counting an error.
  grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context,
                                   const absl::Status& status);
  // OK for an administrator; PERMISSION_DENIED, naming who may, otherwise.
  absl::Status CheckAdmin(const grpc::CallbackServerContext& context,
                          absl::string_view what) const;
  // The bundle entry of a stored result, with every object it names;
  // nullopt when the record is damaged or an object is gone.
  absl::StatusOr<std::optional<v1::BundleEntry>> EntryFor(
      const Digest& key, const v1::ActionRecord& record);
  // Imports one bundle entry after every check (counted in `response`);
  // an error only when the store cannot be written.
  absl::Status ImportEntry(const v1::BundleEntry& entry,
                           v1::ImportResponse* response);

  // What Ping answers: this daemon and its toolkit.
  v1::PingResponse PingAnswer() const;
  // The gRPC door's side of a conversation (server/engine/conversation.h):
  // `turn`'s answer now, or when its miss is answered; the reactor is
  // finished once (a cancelled call's answer is dropped).
  void Converse(Turn turn, AnswerReactor* reactor,
                v1::CompileResponse* response,
                grpc::CallbackServerContext* context);
  // Finishes `reactor` with `answer`, counted (`claimed`: the caller
  // already took the finish).
  void FinishWith(const CacheAnswer& answer, AnswerReactor* reactor,
                  v1::CompileResponse* response,
                  grpc::CallbackServerContext* context, bool claimed);

  ServiceOptions options_;
  ServiceCounters counters_;
  UserStats users_;
  // The cache behind both doors, and what each kind of action is to it.
  CacheEngine engine_;
  ActionKinds kinds_{&engine_, options_.compiler, options_.store,
                     options_.proves_places, options_.kept_file_sets};
  // Each kind's conversation with them, for both doors.
  Conversations conversations_{&engine_, &kinds_, &counters_,
                               &options_.compiler->toolchain(),
                               options_.limits};
  RequestCounting counting_{&counters_, &users_};
  // The framed socket's door, with PingAnswer serialized once for it.
  FramedDoor framed_door_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_
