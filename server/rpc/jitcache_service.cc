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
      framed_door_(&conversations_, &kinds_, &counting_, &counters_,
                   {.toolchain = &options_.compiler->toolchain(),
                    .limits = options_.limits,
                    .shared_answer_size = options_.shared_answer_size,
                    .hot_cache_size = options_.hot_cache_size,
                    .toolkit_answer = std::make_shared<const std::string>(
                        PingAnswer().SerializeAsString())}) {}

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

grpc::ServerUnaryReactor* JitCacheService::Compile(
    grpc::CallbackServerContext* context, const v1::CompileRequest* request,
    v1::CompileResponse* response) {
  const uid_t uid = UserOfCall(*context);
  auto* reactor = new AnswerReactor(&counters_, &counting_.Request(uid));
  Converse(conversations_.Compile(uid, reactor->user(), *request), reactor,
           response, context);
  return reactor;
}

grpc::ServerUnaryReactor* JitCacheService::Link(
    grpc::CallbackServerContext* context, const v1::LinkRequest* request,
    v1::CompileResponse* response) {
  const uid_t uid = UserOfCall(*context);
  auto* reactor = new AnswerReactor(&counters_, &counting_.Request(uid));
  Converse(conversations_.Link(uid, reactor->user(), *request), reactor,
           response, context);
  return reactor;
}

grpc::ServerUnaryReactor* JitCacheService::Ptxas(
    grpc::CallbackServerContext* context, const v1::PtxasRequest* request,
    v1::CompileResponse* response) {
  const uid_t uid = UserOfCall(*context);
  auto* reactor = new AnswerReactor(&counters_, &counting_.Request(uid));
  Converse(conversations_.Ptxas(uid, reactor->user(), *request), reactor,
           response, context);
  return reactor;
}

void JitCacheService::Converse(Turn turn, AnswerReactor* reactor,
                               v1::CompileResponse* response,
                               grpc::CallbackServerContext* context) {
  if (turn.now.has_value()) {
    FinishWith(*turn.now, reactor, response, context, /*claimed=*/false);
    return;
  }
  turn.go_on([this, reactor, finished = reactor->finished(), response,
              context](CacheAnswer answer) {
    // A call that has left (cancelled) is skipped: `reactor` may be gone.
    // Otherwise its finish is this waiter's from here.
    if (finished->exchange(true)) return;
    FinishWith(answer, reactor, response, context, /*claimed=*/true);
  });
}

void JitCacheService::FinishWith(const CacheAnswer& answer,
                                 AnswerReactor* reactor,
                                 v1::CompileResponse* response,
                                 grpc::CallbackServerContext* context,
                                 bool claimed) {
  const auto finish = [&](const grpc::Status& status) {
    claimed ? reactor->FinishClaimed(status) : reactor->FinishOnce(status);
  };
  switch (answer.kind) {
    case CacheAnswer::Kind::kHit:
      if (!response->ParseFromString(answer.hit->serialized)) {
        finish(grpc::Status(grpc::StatusCode::INTERNAL,
                            "a kept answer does not parse"));
        return;
      }
      counting_.Hit(reactor->user(), *answer.hit, reactor->start());
      finish(grpc::Status::OK);
      return;
    case CacheAnswer::Kind::kBuilt:
      *response = *answer.built;
      response->set_served(answer.leader ? v1::SERVED_MISS : v1::SERVED_JOINED);
      counting_.Built(reactor->user(), *response, reactor->start());
      finish(grpc::Status::OK);
      return;
    case CacheAnswer::Kind::kRefused:
      finish(ToGrpcStatus(answer.status));
      return;
    case CacheAnswer::Kind::kSendInputs:
      // A compile's client learns from the trailer that its included
      // files are asked for; it sends them and asks again.
      if (answer.included_files) {
        context->AddTrailingMetadata(std::string(kSendIncludedMetadata), "1");
      }
      claimed ? reactor->FinishClaimedToResend(ToGrpcStatus(answer.status))
              : reactor->FinishToResend(ToGrpcStatus(answer.status));
      return;
    case CacheAnswer::Kind::kNothing:
      finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "a disproof is answered with nothing"));
      return;
  }
}

}  // namespace jitcache
