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
#include "server/net/kept_connection.h"
#include "server/net/peer_listener.h"
#include "server/rpc/bounded_key_set.h"
#include "server/rpc/compile_reactor.h"
#include "server/rpc/compile_request.h"
#include "server/rpc/hot_answers.h"
#include "server/rpc/link_request.h"
#include "server/rpc/nvvm_request.h"
#include "server/rpc/ptxas_request.h"
#include "server/rpc/request_limits.h"
#include "server/rpc/service_counters.h"
#include "server/rpc/single_flight.h"
#include "server/rpc/user_stats.h"
#include "server/store/object_store.h"
#include "server/store/remote_tier.h"
#include "server/store/store_janitor.h"
#include "server/store/tiered_store.h"

namespace jitcache {

struct ServiceOptions {
  ObjectStore* store = nullptr;  // not owned; outlives the service
  Compiler* compiler = nullptr;  // not owned; outlives the service
  CompilePool* pool = nullptr;   // not owned; outlives the service
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
  // The cluster tier behind the store; null: none. Not owned.
  RemoteTier* remote = nullptr;
  // The effective settings GetConfig reports, in order.
  std::vector<std::pair<std::string, std::string>> config;
  // A compile running longer is cancelled and answered DEADLINE_EXCEEDED.
  absl::Duration compile_time_limit = absl::Minutes(10);
  // How many sets of included files are kept for the next miss.
  size_t kept_file_sets = 8;
  // Bytes of hit answers kept in memory (HotAnswers); 0: none.
  uint64_t hot_cache_size = 0;
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Whether the compiler runs each compile in a view of the caller's place
  // (compile workers), so that a compile run elsewhere proves whether an
  // answer depends on the place (place_proof.h). Without, every compile
  // is kept for its own place.
  bool proves_places = true;
  // Threads for those second compiles (a compile's own thread waits for
  // its proofs: they cannot share the pool). Two for each of the pool's
  // (a miss runs up to two proofs), so that no proof waits for another.
  int proof_threads = 4;
  size_t max_queued_proofs = 1024;
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
  // common/framed_protocol.h in; its serialized answer out when it is a hit
  // (or the toolkit), the promise of it for a ptxas run or an as-called
  // link, and "ask gRPC" (null) for anything else (a compile's miss, a bad
  // request), which the caller asks over gRPC instead. Runs on the caller's
  // thread. A single hit's bytes are shared with the hot answers: the caller
  // writes them, never copies them.
  KeptConnection::Reply AnswerFramed(absl::string_view payload,
                                     const PeerCredentials& peer);

  // The counters and histograms (for the metrics exporter), and a stats
  // snapshot as an administrator sees it.
  const ServiceCounters& counters() const { return counters_; }
  v1::StatsResponse StatsForAdmin() const;

  // Makes running compiles stop (they answer UNAVAILABLE). Queued ones are
  // cancelled by the pool's own Shutdown.
  void CancelRunningCompiles() { shutting_down_.store(true); }

 private:
  using SharedResult =
      absl::StatusOr<std::shared_ptr<const v1::CompileResponse>>;

  // What a miss runs on a worker: a compile or a link of one key.
  struct Build {
    Digest key;
    ObjectKind target;
    bool is_link = false;
    bool is_ptxas = false;
    bool is_nvvm = false;
    std::vector<std::string> input_digests;  // raw; a link's inputs
    std::string arch;
    std::string program_name;
    std::vector<std::string> options;  // canonical
    uint64_t source_bytes = 0;
    // An as-called link's first steps: where their part of its trace is
    // kept, for libnvJitLink.so.13 to answer each call of a later link.
    std::vector<Digest> step_keys;
    // A ptxas run keyed without its names: where its answer goes when it
    // shows them (PreparedPtxas), and what would show them.
    std::optional<Digest> named_key;
    std::vector<std::string> names;
    // The key of the names' last parts, where an answer that shows those
    // and not the spelled directories goes (PreparedPtxas); the names as
    // spelled.
    std::optional<Digest> base_named_key;
    std::vector<std::string> spelled_names;
    std::function<absl::StatusOr<CompileResult>(absl::Time deadline)> run;
    // A compile keyed without its place (`key`): the key of its place, where
    // the answer goes when it depends on the place, and the same compile
    // elsewhere (place_proof.h), run beside `run` to tell; null when the
    // place cannot be moved (the answer is then kept for its place).
    std::optional<Digest> placed_key;
    // An as-called link keyed without its inputs' names: its first steps'
    // keys with the names, where they go when the names show.
    std::vector<Digest> placed_step_keys;
    // `key` is a place's own key (its answer depends on the place), or the
    // working directory's.
    bool keyed_by_place = false;
    bool keyed_by_working_directory = false;
    std::function<absl::StatusOr<CompileResult>(absl::Time deadline)>
        run_elsewhere;
    // The same elsewhere but in the same working directory (only for a
    // program whose directory can move alone), run beside the other two:
    // when only it agrees, the answer goes under `working_directory_key`.
    std::optional<Digest> working_directory_key;
    std::function<absl::StatusOr<CompileResult>(absl::Time deadline)>
        run_elsewhere_same_directory;
    // The leader asked to be answered only once the key is final
    // (CompileRequest.wait_for_proof); otherwise it is answered when its
    // own compile ends, under `placed_key`, if the proof is still running.
    bool wait_for_proof = false;
    // Who led it: charged its compile time.
    uid_t uid = 0;
    UserStats::Counters* user = nullptr;
  };

  // A Compile call while it is served: what its build and a second lookup
  // need (the request and context live until the call is finished).
  struct CompileCall {
    grpc::CallbackServerContext* context = nullptr;
    const v1::CompileRequest* request = nullptr;
    PreparedCompile prepared;
    std::shared_ptr<const FileSet> kept;  // the included files, once found
  };
  // Which of a compile's keys holds its answer (PreparedCompile): the
  // place-free one, the working directory's, or the whole place's.
  enum class KeyLevel { kPlaceFree, kWorkingDirectory, kPlace };
  static const Digest& KeyAt(const PreparedCompile& prepared, KeyLevel level);
  // The stored answer for a compile: under its place-free key, or under
  // the key its record says the answer depends on; null on a miss.
  // `level` (optional) says which key answered or is to be built.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> CompileHit(
      const PreparedCompile& prepared, KeyLevel* level = nullptr);
  // Serves a Compile call under the key of `level` (kPlaceFree: a miss
  // proves whether its answer depends on the place).
  grpc::ServerUnaryReactor* ServeCompile(uid_t uid,
                                         v1::CompileResponse* response,
                                         CompileReactor* reactor,
                                         std::shared_ptr<CompileCall> call,
                                         KeyLevel level);
  // A call that joined a place-free build whose answer turned out to depend
  // on another place: served under its own place's key. The reactor's
  // finish is already taken (it stays until this finishes it).
  void ServeTakenUnderPlace(uid_t uid, v1::CompileResponse* response,
                            CompileReactor* reactor,
                            std::shared_ptr<CompileCall> call);
  // The build of a compile's miss (its files kept for the next miss).
  Build CompileBuild(CompileCall& call, KeyLevel level);
  // The files a miss of `call` compiles with: a set kept from an earlier
  // request, or the request's own. False when it has neither (the client
  // is told, in the trailing metadata, to send them).
  bool FindIncludedFiles(CompileCall& call);
  // Where a build's answer goes once the place is decided: the flight's
  // key, the working directory's or the place's; `marker`: the flight's
  // key says which.
  struct PlaceVerdict {
    bool placed = false;
    bool working_directory_only = false;
    bool marker = false;
  };
  // Starts `build.run_elsewhere` on a proof thread.
  std::future<absl::StatusOr<CompileResult>> RunElsewhere(
      const Build& build,
      std::function<absl::StatusOr<CompileResult>(absl::Time)> run,
      absl::Time deadline);
  PlaceVerdict DecidePlace(
      const Build& build, const absl::StatusOr<CompileResult>& here,
      std::future<absl::StatusOr<CompileResult>>& elsewhere,
      std::future<absl::StatusOr<CompileResult>>& same_directory);
  // A miss whose proof still runs when its own compile ends: its answer is
  // kept under its place's key (and its first steps under theirs), and
  // the leader answered from there at once, so that the proof adds nothing
  // to its wait; the flight's other waiters wait for the verdict. False
  // (nothing done) when the proof has ended, the leader asked to wait, or
  // the store refused the answer.
  bool AnswerLeaderBeforeProof(
      const Build& build, const v1::ActionRecord& record,
      const std::vector<ObjectRef>& objects, const CompileResult& here,
      std::future<absl::StatusOr<CompileResult>>& elsewhere);
  // After the verdict: the answer kept early under the place's key goes
  // when the verdict kept it elsewhere (it is found there now). Its first
  // steps stay: their keys are prefixes other links share, and each holds
  // for its names.
  void DropEarlyAnswer(const Build& build);

  // A connection whose user the kernel did not tell (an in-process channel).
  static constexpr uid_t kUnknownUser = static_cast<uid_t>(-1);
  std::optional<PeerCredentials> PeerOfCall(
      const grpc::CallbackServerContext& context) const;
  uid_t UserOfCall(const grpc::CallbackServerContext& context) const;
  // Keeps the trace of each of an as-called link's first steps under its
  // own key (Build::step_keys), after the whole link was stored.
  // `placed`: the names showed, or no proof could tell (the steps go under
  // their names' keys); `marker`: the keys without names say so.
  void KeepFirstSteps(const Build& build, const v1::ActionRecord& whole,
                      bool placed, bool marker);
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

  // The stored answer for `key`, or nullopt on a miss; `record` (optional)
  // receives the record it was made from.
  absl::StatusOr<std::optional<v1::CompileResponse>> LookUp(
      const Digest& key, v1::ActionRecord* record = nullptr);
  // A hit's answer for `key`: from memory while the store still holds what
  // it was built from, else from the store (then kept in memory); null on
  // a miss.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> HitAnswer(const Digest& key);
  // Finishes `reactor` with a lookup's error or hit; false on a miss.
  bool FinishedByLookup(
      const absl::StatusOr<std::shared_ptr<const HotAnswer>>& hit,
      v1::CompileResponse* response, CompileReactor* reactor);
  // Finishes the call with a hit's answer (`claimed`: the caller already
  // took the finish).
  void FinishWithHit(const HotAnswer& hit, v1::CompileResponse* response,
                     CompileReactor* reactor, bool claimed = false);
  // Serves a call whose lookup missed: join the flight for `key` and,
  // leading, queue the build. `make_build` runs only for the request that
  // leads: a hit copies nothing out of its request. `ask_for_inputs` (if
  // any) says whether the request lacks inputs it must be sent again with
  // (having told the client so in its trailing metadata).
  // `taken_elsewhere` (if any) sees a build's answer before this call is
  // answered with it, and returns true when it serves the call itself (its
  // finish taken).
  grpc::ServerUnaryReactor* ServeMiss(
      uid_t uid, v1::CompileResponse* response, CompileReactor* reactor,
      const Digest& key, const std::function<Build()>& make_build,
      const std::function<bool()>& ask_for_inputs,
      std::function<bool(const v1::CompileResponse&)> taken_elsewhere);
  // Joins the flight for `key` (a miss, from either socket) with `waiter`;
  // the joiner that leads queues the build `make_build` makes, charged to
  // `uid` (whose counters `user` are).
  void JoinBuild(uid_t uid, UserStats::Counters& user, const Digest& key,
                 SingleFlight<SharedResult>::Waiter waiter,
                 const std::function<Build()>& make_build);
  // A request that arrived at `start` was answered by a build (`response`
  // says whether it led it or joined it).
  void CountBuilt(UserStats::Counters& user,
                  const v1::CompileResponse& response, absl::Time start);
  // The record a build's result is kept as (its objects apart).
  v1::ActionRecord RecordOf(const Build& build,
                            const CompileResult& result) const;
  // The run of a ptxas request's miss.
  Build PtxasBuild(const v1::PtxasRequest& request,
                   const PreparedPtxas& prepared);
  // A framed socket's ptxas request (framed_socket_rpcs.cc): its answer now on
  // a hit, else promised for when its run (or the one it joins) is done.
  KeptConnection::Reply AnswerPtxas(absl::string_view request,
                                    const PeerCredentials& peer);
  // The run of a libNVVM request's miss (it came with its modules).
  Build NvvmBuild(const v1::NvvmRequest& request, const PreparedNvvm& prepared);
  // A framed socket's libNVVM compile or verify (libnvvm.so.4's): its answer
  // now on a hit; on a miss, promised for when its run is done when the
  // request holds the modules, else nothing (the caller sends them).
  KeptConnection::Reply AnswerNvvm(absl::string_view request,
                                   const PeerCredentials& peer);
  // The build of a Link request's miss; its run keeps the inputs that came
  // inline first (like uploads, so that a later link can name them).
  // `named`: under the key with the inputs' names; otherwise keyed
  // without them, with a proof (the link again under other names).
  Build LinkBuild(std::shared_ptr<const PreparedLink> link, bool named);
  // An as-called link's stored answer: under its key without names, or
  // under its names' key where the record there says the names show (or
  // no proof could run); null on a miss. `named` says which key answered
  // or is to be built.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> LinkHit(
      const PreparedLink& link, bool* named);
  static const Digest& LinkKeyAt(const PreparedLink& link, bool named);
  // A ptxas run's stored answer: under its base names' key first (with
  // names), else its own key; null on a miss. A record that says the names
  // matter is an answer here: the caller asks again with its names.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> PtxasHit(
      const PreparedPtxas& prepared);
  // The framed socket's waiter for a link's flight: when the flight was keyed
  // without names and its answer shows the leader's names, this caller's
  // answer is built under its own names' key instead.
  SingleFlight<SharedResult>::Waiter LinkAnswerWhenBuilt(
      std::shared_ptr<const PreparedLink> link, bool named, AnswerLater later,
      uid_t uid, UserStats::Counters& user, absl::Time start);
  // A waiter that finishes a reactor whose finish is already taken.
  SingleFlight<SharedResult>::Waiter FinishClaimedWhenBuilt(
      CompileReactor* reactor, v1::CompileResponse* response);
  absl::Status KeepInlineInputs(const PreparedLink& link);
  // A caller's own nvJitLink answered otherwise than `recorded`, the answer
  // kept for `link` (LinkRequest.disproves): links it again on the proof
  // threads, and removes the record and its first steps' when that answer
  // is not the record's (link_disproof.cc).
  void CheckDisproof(uid_t uid, std::shared_ptr<const PreparedLink> link,
                     bool named, std::shared_ptr<const HotAnswer> recorded);
  // A framed socket's as-called link (libnvJitLink.so.13's): recorded steps
  // (a hit, or nothing), or the whole link, promised on a miss.
  KeptConnection::Reply AnswerLink(absl::string_view request,
                                   const PeerCredentials& peer);
  // NOT_FOUND unless the store holds every input `link` names by digest
  // (checked before a framed socket's link is queued: its caller then sends
  // their bytes, where a gRPC caller uploads them after the link fails).
  absl::Status CheckInputsKept(const PreparedLink& link);
  // A framed socket's ptxas run or link whose lookup gave `hit`: answered now
  // when it is a hit, or "ask gRPC" when it was refused (counted, logged as
  // `what`); nullopt for a miss, which the caller promises.
  std::optional<KeptConnection::Reply> AnswerNow(
      const absl::StatusOr<std::shared_ptr<const HotAnswer>>& hit,
      UserStats::Counters& user, uid_t uid, absl::Time start,
      absl::string_view what);
  // How a promise made at `start` for `user` is kept when the build it
  // joined ends: its answer, or "ask gRPC" for a failed build.
  SingleFlight<SharedResult>::Waiter AnswerWhenBuilt(AnswerLater later,
                                                     UserStats::Counters& user,
                                                     absl::Time start);
  // Runs on a pool worker: builds, stores, and answers the flight.
  void RunBuild(const Build& build);
  absl::StatusOr<CompileResult> RunLink(const PreparedLink& link,
                                        absl::Time deadline);

  ServiceOptions options_;
  KeptFileSets kept_file_sets_{options_.kept_file_sets};
  HotAnswers hot_answers_{options_.hot_cache_size};
  SingleFlight<SharedResult> flights_;
  ServiceCounters counters_;
  UserStats users_;
  std::atomic<bool> shutting_down_{false};
  // The store with the team's tier behind it; null without --remote.
  const std::unique_ptr<TieredStore> tiered_;
  // Links whose run read the caller's files: refused at once.
  BoundedKeySet callers_own_links_;
  // Records a caller disproved that a second link showed right, and how
  // many disproofs are being checked (at most kMaxDisproofs at once; more
  // are not checked: a caller can cost a few links, never the proof
  // threads).
  BoundedKeySet refuted_disproofs_;
  std::atomic<int> disproofs_running_{0};
  static constexpr int kMaxDisproofs = 4;
  // PingAnswer, serialized once for the framed socket.
  const std::shared_ptr<const std::string> toolkit_answer_;
  // Where compiles run elsewhere (place_proof.h): long-lived threads, as a
  // compile worker lives only as long as the thread that started it.
  // Last: stopped first, while the rest of the service is still there.
  CompilePool proofs_{options_.proof_threads, options_.max_queued_proofs};
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_JITCACHE_SERVICE_H_
