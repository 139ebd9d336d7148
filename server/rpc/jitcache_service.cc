#include "server/rpc/jitcache_service.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/cache_key.h"
#include "common/log.h"
#include "common/wire_constants.h"
#include "server/build/toolkit_library.h"
#include "server/engine/sealed_file.h"
#include "server/rpc/grpc_status.h"
#include "server/store/rocksdb_kv.h"

namespace jitcache {

std::optional<PeerCredentials> JitCacheService::PeerOfCall(
    const grpc::CallbackServerContext& context) const {
  if (!options_.peer_credentials) return std::nullopt;
  return options_.peer_credentials(context.peer());
}

uid_t JitCacheService::UserOfCall(
    const grpc::CallbackServerContext& context) const {
  std::optional<PeerCredentials> peer = PeerOfCall(context);
  return peer.has_value() ? peer->uid : kUnknownUser;
}

namespace {

// The service's options as the engine takes them, with its counters.
EngineOptions EngineOptionsOf(const ServiceOptions& service,
                              ServiceCounters* counters) {
  EngineOptions engine = service;
  engine.counters = counters;
  return engine;
}

}  // namespace

JitCacheService::JitCacheService(ServiceOptions options)
    : options_(std::move(options)),
      engine_(EngineOptionsOf(options_, &counters_)),
      toolkit_answer_(std::make_shared<const std::string>(
          PingAnswer().SerializeAsString())) {}

v1::PingResponse JitCacheService::PingAnswer() const {
  const ToolchainInfo& tc = options_.compiler->toolchain();
  v1::PingResponse response;
  response.set_daemon_version(JITCACHE_VERSION);
  response.set_toolchain(tc.description);
  response.set_toolchain_fingerprint(absl::BytesToHexString(tc.fingerprint));
  response.set_key_schema_version(kKeySchemaVersion);
  for (int arch : tc.supported_archs) {
    response.add_supported_archs(absl::StrCat("sm_", arch));
  }
  response.set_store_path(options_.store_path);
  for (const std::string& dir : tc.include_dirs) {
    response.add_include_dirs(dir);
  }
  for (const ToolchainInfo::Library& lib : tc.libraries) {
    ToolkitLibraryOf(lib, response.add_libraries());
  }
  if (tc.libnvvm.has_value()) {
    ToolkitLibraryOf(*tc.libnvvm, response.add_libraries());
  }
  for (const ToolchainInfo::Library& ptxas : tc.ptxas) {
    ToolkitLibraryOf(ptxas, response.add_ptxas());
  }
  return response;
}

grpc::ServerUnaryReactor* JitCacheService::Ping(
    grpc::CallbackServerContext* context, const v1::PingRequest* /*request*/,
    v1::PingResponse* response) {
  *response = PingAnswer();
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* JitCacheService::GetStats(
    grpc::CallbackServerContext* context, const v1::StatsRequest* request,
    v1::StatsResponse* response) {
  if (request->zero()) {
    if (absl::Status s = CheckAdmin(*context, "stats --zero"); !s.ok()) {
      return Finish(context, s);
    }
  }
  // Who asked what is for administrators; anyone may see their own row.
  std::optional<uid_t> only;
  if (!CheckAdmin(*context, "").ok()) only = UserOfCall(*context);
  FillStats(response, only);
  if (request->zero()) {
    counters_.Zero();
    users_.Zero();
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

void JitCacheService::FillStats(v1::StatsResponse* response,
                                std::optional<uid_t> only_user) const {
  counters_.Fill(response);
  for (v1::UserStats& row :
       users_.Read(options_.pool->QueuedByUser(), only_user)) {
    *response->add_users() = std::move(row);
  }
  response->set_queued(options_.pool->queued());
  response->set_running(options_.pool->running());
  response->set_waiting(engine_.waiters());
  const CompilerStats compiler = options_.compiler->stats();
  response->set_compiler_crashes(compiler.crashes);
  response->set_compiler_exits(compiler.ended_without_answer);
  response->set_compiler_memory_limited(compiler.memory_limited);
  response->set_compiler_time_limited(compiler.time_limited);
  response->set_compile_workers_started(compiler.workers_started);
  if (engine_.tiered() != nullptr) {
    const RemoteStats remote = engine_.tiered()->stats();
    response->set_remote_hits(remote.hits);
    response->set_remote_misses(remote.misses);
    response->set_remote_errors(remote.errors);
    response->set_remote_corrupt(remote.corrupt);
    response->set_remote_leases_waited(remote.leases_waited);
    response->set_remote_bytes_up(remote.bytes_up);
    response->set_remote_bytes_down(remote.bytes_down);
    response->set_remote_redirects(remote.redirects);
    response->set_remote_cluster_refreshes(remote.cluster_refreshes);
    response->set_remote_replica_hits(remote.replica_hits);
    response->set_remote_replica_misses(remote.replica_misses);
  }
  const HotAnswers::Stats hot = engine_.hot_answers().stats();
  response->set_hot_entries(hot.entries);
  response->set_hot_bytes(hot.bytes);
  response->set_hot_max_bytes(engine_.hot_answers().max_bytes());
  response->set_shared_answer_bytes(SealedFile::LiveBytes());
  const StoreStats store = options_.store->Stats();
  response->set_store_entries(store.actions);
  response->set_store_bytes(store.bytes);
  response->set_store_corrupt_removed(store.corrupt_removed);
  response->set_store_write_failures(store.write_failures);
  const StoreRecoveries recoveries = StoreRecoveryCounts();
  response->set_store_recovered(recoveries.recovered);
  response->set_store_quarantined(recoveries.quarantined);
  response->set_store_objects(store.objects);
  response->set_store_uploads(store.uploads);
  response->set_store_live_bytes(store.live_bytes);
  response->set_store_evicted_entries(store.evicted_records);
  response->set_store_evicted_bytes(store.evicted_bytes);
  if (options_.janitor != nullptr) {
    response->set_store_max_bytes(options_.janitor->options().max_size);
    response->set_store_eviction_runs(options_.janitor->runs());
  }
}

v1::StatsResponse JitCacheService::StatsForAdmin() const {
  v1::StatsResponse response;
  FillStats(&response, std::nullopt);
  return response;
}

grpc::ServerUnaryReactor* JitCacheService::Finish(
    grpc::CallbackServerContext* context, const absl::Status& status) {
  if (!status.ok()) counters_.Rejected(status.code());
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

UserStats::Counters& JitCacheService::CountRequest(uid_t uid) {
  ++counters_.requests;
  UserStats::Counters& user = users_.For(uid);
  ++user.requests;
  return user;
}

void JitCacheService::CountHit(UserStats::Counters& user,
                               const HotAnswer& answer, absl::Time start) {
  counters_.CountHit(answer.compile_time_us, answer.outcome);
  ++user.hits;
  counters_.hit_latency.Observe(absl::Now() - start);
}

grpc::ServerUnaryReactor* JitCacheService::Compile(
    grpc::CallbackServerContext* context, const v1::CompileRequest* request,
    v1::CompileResponse* response) {
  const uid_t uid = UserOfCall(*context);
  auto* reactor = new AnswerReactor(&counters_, &CountRequest(uid));
  absl::StatusOr<PreparedCompile> prepared =
      PrepareCompile(*request, options_.compiler->toolchain(), options_.limits);
  if (!prepared.ok()) {
    reactor->FinishOnce(ToGrpcStatus(prepared.status()));
    return reactor;
  }
  auto call = std::make_shared<CompileCall>();
  call->context = context;
  call->request = request;
  call->prepared = *std::move(prepared);
  KeyLevel level = KeyLevel::kPlaceFree;
  if (FinishedByLookup(kinds_.CompileHit(call->prepared, &level), response,
                       reactor)) {
    return reactor;
  }
  return ServeCompile(uid, response, reactor, std::move(call), level);
}

absl::Status JitCacheService::SendIncludedFiles() {
  return absl::NotFoundError(
      "a miss: the daemon lacks the included files' contents: send them with "
      "the request");
}

bool JitCacheService::FindIncludedFiles(CompileCall& call) {
  call.kept = kinds_.KeptFiles(call.prepared);
  // A request that named its files by digest gives their times apart, one
  // for each: a set that does not match them cannot be used.
  if (call.kept != nullptr && !call.prepared.has_included_contents &&
      call.kept->size() != call.prepared.file_mtimes_ns.size()) {
    call.kept = nullptr;
  }
  if (call.kept != nullptr || call.prepared.has_included_contents) {
    return true;
  }
  if (call.context != nullptr) {
    call.context->AddTrailingMetadata(std::string(kSendIncludedMetadata), "1");
  }
  return false;
}

grpc::ServerUnaryReactor* JitCacheService::ServeCompile(
    uid_t uid, v1::CompileResponse* response, AnswerReactor* reactor,
    std::shared_ptr<CompileCall> call, KeyLevel level) {
  // The files the program may read: on a miss (never on the hit path), the
  // set kept from an earlier compile of the same files, else their bytes,
  // which the client is asked for if it left them out.
  std::function<bool()> ask_for_included;
  if (call->request->includes_resolved()) {
    ask_for_included = [this, call] { return !FindIncludedFiles(*call); };
  }
  // A place-free build answers every place when its answer is the same
  // elsewhere; when it is not, a caller from another place than the
  // leader's is served under its own place's key. (A log template is
  // written for this caller's name by the flight, CacheEngine::Join.)
  std::function<bool(const v1::CompileResponse&)> taken_elsewhere;
  if (level == KeyLevel::kPlaceFree) {
    taken_elsewhere = [this, uid, response, reactor,
                       call](const v1::CompileResponse& answer) {
      if (!ActionKinds::AnsweredForAnotherPlace(answer, call->prepared)) {
        return false;
      }
      ServeTakenUnderPlace(uid, response, reactor, call);
      return true;
    };
  }
  // CompileHit looked the keys up already: straight to the miss.
  return ServeMiss(
      uid, response, reactor, ActionKinds::KeyAt(call->prepared, level),
      [this, call, level] {
        return kinds_.CompileAction(*call->request, call->prepared, call->kept,
                                    level);
      },
      ask_for_included, std::move(taken_elsewhere),
      call->prepared.program_name);
}

void JitCacheService::ServeTakenUnderPlace(uid_t uid,
                                           v1::CompileResponse* response,
                                           AnswerReactor* reactor,
                                           std::shared_ptr<CompileCall> call) {
  KeyLevel level;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      kinds_.CompileHitForOwnPlace(call->prepared, &level);
  const Digest& key = ActionKinds::KeyAt(call->prepared, level);
  if (!hit.ok()) {
    reactor->FinishClaimed(ToGrpcStatus(hit.status()));
    return;
  }
  if (*hit != nullptr) {
    FinishWithHit(**hit, response, reactor, /*claimed=*/true);
    return;
  }
  if (call->request->includes_resolved() && !FindIncludedFiles(*call)) {
    reactor->FinishClaimedToResend(ToGrpcStatus(SendIncludedFiles()));
    return;
  }
  engine_.Join(
      uid, reactor->user(), key, FinishClaimedWhenBuilt(reactor, response),
      [this, call, level] {
        return kinds_.CompileAction(*call->request, call->prepared, call->kept,
                                    level);
      },
      call->prepared.program_name);
}

grpc::ServerUnaryReactor* JitCacheService::Link(
    grpc::CallbackServerContext* context, const v1::LinkRequest* request,
    v1::CompileResponse* response) {
  ++counters_.link_requests;
  const uid_t uid = UserOfCall(*context);
  auto* reactor = new AnswerReactor(&counters_, &CountRequest(uid));
  absl::StatusOr<PreparedLink> prepared =
      PrepareLink(*request, options_.compiler->toolchain(), options_.limits);
  if (!prepared.ok()) {
    reactor->FinishOnce(ToGrpcStatus(prepared.status()));
    return reactor;
  }
  auto link = std::make_shared<const PreparedLink>(*std::move(prepared));
  bool named = false;
  if (FinishedByLookup(kinds_.LinkHit(*link, &named), response, reactor)) {
    return reactor;
  }
  if (link->steps_only) {
    // Only what an earlier link recorded: never a link of its own.
    reactor->FinishOnce(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                     "no link recorded these steps"));
    return reactor;
  }
  // The caller sends what the store lacks and asks again, on either door.
  if (absl::Status have = engine_.FindMissingInputs(NeededInputsOf(*link));
      !have.ok()) {
    reactor->FinishToResend(ToGrpcStatus(have));
    return reactor;
  }
  // A flight keyed without names whose answer shows the leader's: a caller
  // with other names is served under its own names' key.
  std::function<bool(const v1::CompileResponse&)> taken_elsewhere;
  if (!named && link->named_key.has_value()) {
    taken_elsewhere = [this, uid, response, reactor,
                       link](const v1::CompileResponse& answer) {
      if (!answer.place_matters() ||
          answer.cache_key() == link->named_key->Hex()) {
        return false;
      }
      engine_.Join(uid, reactor->user(), *link->named_key,
                   FinishClaimedWhenBuilt(reactor, response),
                   [&] { return kinds_.LinkAction(link, /*named=*/true); });
      return true;
    };
  }
  return ServeMiss(
      uid, response, reactor, ActionKinds::LinkKeyAt(*link, named),
      [&] { return kinds_.LinkAction(link, named); }, {},
      std::move(taken_elsewhere));
}

CacheEngine::Waiter JitCacheService::FinishClaimedWhenBuilt(
    AnswerReactor* reactor, v1::CompileResponse* response) {
  return [this, reactor, response](const SharedResult& result, bool is_leader) {
    if (!result.ok()) {
      reactor->FinishClaimed(ToGrpcStatus(result.status()));
      return;
    }
    *response = **result;
    response->set_served(is_leader ? v1::SERVED_MISS : v1::SERVED_JOINED);
    CountBuilt(reactor->user(), *response, reactor->start());
    reactor->FinishClaimed(grpc::Status::OK);
  };
}

grpc::ServerUnaryReactor* JitCacheService::Ptxas(
    grpc::CallbackServerContext* context, const v1::PtxasRequest* request,
    v1::CompileResponse* response) {
  ++counters_.ptxas_requests;
  const uid_t uid = UserOfCall(*context);
  auto* reactor = new AnswerReactor(&counters_, &CountRequest(uid));
  absl::StatusOr<PreparedPtxas> prepared =
      PreparePtxas(*request, options_.compiler->toolchain(), options_.limits);
  if (!prepared.ok()) {
    reactor->FinishOnce(ToGrpcStatus(prepared.status()));
    return reactor;
  }
  if (FinishedByLookup(kinds_.PtxasHit(*prepared), response, reactor)) {
    return reactor;
  }
  return ServeMiss(
      uid, response, reactor, prepared->key,
      [&] { return kinds_.PtxasAction(*request, *prepared); }, nullptr,
      nullptr);
}

bool JitCacheService::FinishedByLookup(
    const absl::StatusOr<std::shared_ptr<const HotAnswer>>& hit,
    v1::CompileResponse* response, AnswerReactor* reactor) {
  if (!hit.ok()) {
    reactor->FinishOnce(ToGrpcStatus(hit.status()));
    return true;
  }
  if (*hit == nullptr) return false;
  FinishWithHit(**hit, response, reactor);
  return true;
}

void JitCacheService::FinishWithHit(const HotAnswer& hit,
                                    v1::CompileResponse* response,
                                    AnswerReactor* reactor, bool claimed) {
  grpc::Status status = grpc::Status::OK;
  if (response->ParseFromString(hit.serialized)) {
    CountHit(reactor->user(), hit, reactor->start());
  } else {
    status = grpc::Status(grpc::StatusCode::INTERNAL,
                          "a kept answer does not parse");
  }
  claimed ? reactor->FinishClaimed(status) : reactor->FinishOnce(status);
}

grpc::ServerUnaryReactor* JitCacheService::ServeMiss(
    uid_t uid, v1::CompileResponse* response, AnswerReactor* reactor,
    const Digest& key, const std::function<Action()>& make_build,
    const std::function<bool()>& ask_for_inputs,
    std::function<bool(const v1::CompileResponse&)> taken_elsewhere,
    std::string log_for) {
  if (ask_for_inputs && ask_for_inputs()) {
    reactor->FinishToResend(ToGrpcStatus(SendIncludedFiles()));
    return reactor;
  }

  engine_.Join(
      uid, reactor->user(), key,
      [this, reactor, finished = reactor->finished(), response,
       taken_elsewhere = std::move(taken_elsewhere)](const SharedResult& result,
                                                     bool is_leader) {
        // A waiter that has left (cancelled) is skipped: `reactor` may be gone.
        if (!result.ok()) {
          AnswerReactor::FinishOnce(reactor, finished,
                                    ToGrpcStatus(result.status()));
          return;
        }
        // Fill the response only once this waiter owns the finish.
        if (finished->exchange(true)) return;
        if (taken_elsewhere && taken_elsewhere(**result)) return;
        *response = **result;
        response->set_served(is_leader ? v1::SERVED_MISS : v1::SERVED_JOINED);
        CountBuilt(reactor->user(), *response, reactor->start());
        reactor->Finish(grpc::Status::OK);
      },
      make_build, std::move(log_for));
  return reactor;
}

void JitCacheService::CountBuilt(UserStats::Counters& user,
                                 const v1::CompileResponse& response,
                                 absl::Time start) {
  if (response.served() == v1::SERVED_MISS) {
    ++counters_.misses;
    ++user.misses;
  } else {
    ++counters_.joins;
    ++user.joins;
    counters_.compile_us_saved += response.compile_time_us();
  }
  counters_.CountOutcome(response.outcome());
  counters_.miss_latency.Observe(absl::Now() - start);
}

}  // namespace jitcache
