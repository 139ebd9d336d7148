#ifndef JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_
#define JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_

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
#include "server/engine/link_request.h"
#include "server/engine/nvvm_request.h"
#include "server/engine/ptxas_request.h"
#include "server/engine/request_limits.h"
#include "server/engine/service_counters.h"
#include "server/engine/user_stats.h"
#include "server/net/kept_connection.h"
#include "server/net/peer_listener.h"
#include "server/rpc/answer_reactor.h"
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

  // The path of FramedSocket (framed_socket_rpcs.cc): a request payload of
  // common/framed_protocol.h in. Out: a hit's (or the toolkit's) serialized
  // answer; on a miss of a front end without gRPC (a compile, ptxas run,
  // as-called link or libNVVM call sequence), the promise of its answer
  // when the engine's run is done; a FramedRefusal when it is refused; and
  // "ask gRPC" (null) for a hit-only ask (libjitcache's, the `jitcache`
  // command's) that misses or cannot be read. Runs on the caller's thread.
  // A single hit's bytes are shared with the hot answers: the caller writes
  // them, never copies them.
  KeptConnection::Reply AnswerFramed(absl::string_view payload,
                                     const PeerCredentials& peer);

  // The counters and histograms (for the metrics exporter), and a stats
  // snapshot as an administrator sees it.
  const ServiceCounters& counters() const { return counters_; }
  v1::StatsResponse StatsForAdmin() const;

  // Makes running compiles stop (they answer UNAVAILABLE). Queued ones are
  // cancelled by the pool's own Shutdown.
  void CancelRunningCompiles() { engine_.CancelRunning(); }

 private:
  using SharedResult = CacheEngine::SharedResult;

  // A Compile call while it is served: what its build and a second lookup
  // need (the request and context live until the call is finished).
  struct CompileCall {
    // Null for the framed socket's (it has no trailing metadata).
    grpc::CallbackServerContext* context = nullptr;
    const v1::CompileRequest* request = nullptr;
    // The framed socket's request, which `request` points into: its call
    // owns it (gRPC's owns its own).
    std::shared_ptr<const v1::CompileRequest> owned;
    PreparedCompile prepared;
    std::shared_ptr<const FileSet> kept;  // the included files, once found
  };
  using KeyLevel = ActionKinds::KeyLevel;
  // Serves a Compile call under the key of `level` (kPlaceFree: a miss
  // proves whether its answer depends on the place).
  grpc::ServerUnaryReactor* ServeCompile(uid_t uid,
                                         v1::CompileResponse* response,
                                         AnswerReactor* reactor,
                                         std::shared_ptr<CompileCall> call,
                                         KeyLevel level);
  // A call that joined a place-free build whose answer turned out to depend
  // on another place: served under its own place's key. The reactor's
  // finish is already taken (it stays until this finishes it).
  void ServeTakenUnderPlace(uid_t uid, v1::CompileResponse* response,
                            AnswerReactor* reactor,
                            std::shared_ptr<CompileCall> call);
  // The files a miss of `call` compiles with: a set kept from an earlier
  // request, or the request's own. False when it has neither (a gRPC
  // client is told, in the trailing metadata, to send them).
  bool FindIncludedFiles(CompileCall& call);
  // What a compile that lacks its included files' bytes is told, on either
  // door: NOT_FOUND, to send them with the same request.
  static absl::Status SendIncludedFiles();
  // A connection whose user the kernel did not tell (an in-process channel).
  static constexpr uid_t kUnknownUser = static_cast<uid_t>(-1);
  std::optional<PeerCredentials> PeerOfCall(
      const grpc::CallbackServerContext& context) const;
  uid_t UserOfCall(const grpc::CallbackServerContext& context) const;
  // A request from `uid` arrived: counted for the daemon and for the user,
  // whose counters are returned.
  UserStats::Counters& CountRequest(uid_t uid);
  // A request that arrived at `start` was answered from the store (either
  // socket).
  void CountHit(UserStats::Counters& user, const HotAnswer& answer,
                absl::Time start);
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
  // A framed socket's compile request that arrived at `start`, answered when
  // it hits; null otherwise.
  std::shared_ptr<const HotAnswer> AnswerOne(const v1::CompileRequest& request,
                                             const PeerCredentials& peer,
                                             absl::Time start);
  // A serialized HitBatchRequest: every request answered, hit or not.
  std::shared_ptr<const std::string> AnswerBatch(absl::string_view batch,
                                                 const PeerCredentials& peer);

  // Finishes `reactor` with a lookup's error or hit; false on a miss.
  bool FinishedByLookup(
      const absl::StatusOr<std::shared_ptr<const HotAnswer>>& hit,
      v1::CompileResponse* response, AnswerReactor* reactor);
  // Finishes the call with a hit's answer (`claimed`: the caller already
  // took the finish).
  void FinishWithHit(const HotAnswer& hit, v1::CompileResponse* response,
                     AnswerReactor* reactor, bool claimed = false);
  // Serves a call whose lookup missed: join the flight for `key` and,
  // leading, queue the build. `make_build` runs only for the request that
  // leads: a hit copies nothing out of its request. `ask_for_inputs` (if
  // any) says whether the request lacks inputs it must be sent again with
  // (having told the client so in its trailing metadata).
  // `taken_elsewhere` (if any) sees a build's answer before this call is
  // answered with it, and returns true when it serves the call itself (its
  // finish taken). `log_for`: a compile's program name, for which a log
  // template is written (CacheEngine::Join).
  grpc::ServerUnaryReactor* ServeMiss(
      uid_t uid, v1::CompileResponse* response, AnswerReactor* reactor,
      const Digest& key, const std::function<Action()>& make_build,
      const std::function<bool()>& ask_for_inputs,
      std::function<bool(const v1::CompileResponse&)> taken_elsewhere,
      std::string log_for = "");
  // A request that arrived at `start` was answered by a build (`response`
  // says whether it led it or joined it).
  void CountBuilt(UserStats::Counters& user,
                  const v1::CompileResponse& response, absl::Time start);
  // A framed socket's ptxas request (framed_socket_rpcs.cc): its answer now on
  // a hit, else promised for when its run (or the one it joins) is done.
  KeptConnection::Reply AnswerPtxas(absl::string_view request,
                                    const PeerCredentials& peer);
  // A framed socket's compile (kCompile: libnvrtc.so.13's, which has no
  // gRPC): its answer now on a hit, else promised for when its compile (or
  // the one it joins) is done; NOT_FOUND when the daemon lacks the included
  // files' bytes (the caller sends them and asks again).
  // `shared`: the caller takes a large hit as a sealed file
  // (kCompileShared).
  KeptConnection::Reply AnswerCompile(absl::string_view request,
                                      const PeerCredentials& peer, bool shared);
  // The promise of AnswerCompile, under the key of `level`: a place-free
  // build whose answer turns out to depend on another place is built again
  // under this caller's place, as ServeTakenUnderPlace does for gRPC.
  void PromiseCompile(std::shared_ptr<CompileCall> call, KeyLevel level,
                      AnswerLater later, uid_t uid, UserStats::Counters& user,
                      absl::Time start);
  // The place-taken part of PromiseCompile.
  void PromiseUnderPlace(std::shared_ptr<CompileCall> call, AnswerLater later,
                         uid_t uid, UserStats::Counters& user,
                         absl::Time start);
  // A framed socket's libNVVM compile or verify (libnvvm.so.4's): its answer
  // now on a hit; on a miss, promised for when its run is done when the
  // request holds the modules, else nothing (the caller sends them).
  KeptConnection::Reply AnswerNvvm(absl::string_view request,
                                   const PeerCredentials& peer);
  // The framed socket's waiter for a link's flight: when the flight was keyed
  // without names and its answer shows the leader's names, this caller's
  // answer is built under its own names' key instead.
  CacheEngine::Waiter LinkAnswerWhenBuilt(
      std::shared_ptr<const PreparedLink> link, bool named, AnswerLater later,
      uid_t uid, UserStats::Counters& user, absl::Time start);
  // A waiter that finishes a reactor whose finish is already taken.
  CacheEngine::Waiter FinishClaimedWhenBuilt(AnswerReactor* reactor,
                                             v1::CompileResponse* response);
  // A framed socket's as-called link (libnvJitLink.so.13's): recorded steps
  // (a hit, or nothing), or the whole link, promised on a miss.
  KeptConnection::Reply AnswerLink(absl::string_view request,
                                   const PeerCredentials& peer);
  // A framed socket's request whose lookup gave `hit`: answered now when it
  // is a hit (HitReply), or with a FramedRefusal when it was refused
  // (counted, logged as `what`); nullopt for a miss, which the caller
  // promises.
  std::optional<KeptConnection::Reply> AnswerNow(
      const absl::StatusOr<std::shared_ptr<const HotAnswer>>& hit,
      UserStats::Counters& user, uid_t uid, absl::Time start,
      absl::string_view what, bool shared = false);
  // A hit's reply: its bytes, and with `shared` (the caller takes a file),
  // at least --shared_answer_size of them and room under the bound, its
  // sealed file too (counted in shared_answers).
  KeptConnection::Reply HitReply(const std::shared_ptr<const HotAnswer>& hit,
                                 bool shared);
  // How a promise made at `start` for `user` is kept when the build it
  // joined ends: its answer, or a FramedRefusal for a failed build.
  CacheEngine::Waiter AnswerWhenBuilt(AnswerLater later,
                                      UserStats::Counters& user,
                                      absl::Time start);

  ServiceOptions options_;
  ServiceCounters counters_;
  UserStats users_;
  // The cache behind both doors, and what each kind of action is to it.
  CacheEngine engine_;
  ActionKinds kinds_{&engine_, options_.compiler, options_.store,
                     options_.proves_places, options_.kept_file_sets};
  // PingAnswer, serialized once for the framed socket.
  const std::shared_ptr<const std::string> toolkit_answer_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_
