#include "server/rpc/jitcache_service.h"

#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/cache_key.h"
#include "common/log.h"
#include "common/nvrtc_program.h"
#include "common/wire_constants.h"
#include "jitcache/v1/wire_kinds.h"
#include "server/build/toolkit_library.h"
#include "server/engine/place_proof.h"
#include "server/rpc/grpc_status.h"

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

// What the engine needs of the service's options.
EngineOptions EngineOptionsOf(const ServiceOptions& service,
                              ServiceCounters* counters) {
  EngineOptions engine;
  engine.store = service.store;
  engine.compiler = service.compiler;
  engine.pool = service.pool;
  engine.remote = service.remote;
  engine.counters = counters;
  engine.compile_time_limit = service.compile_time_limit;
  engine.hot_cache_size = service.hot_cache_size;
  engine.now = service.now;
  engine.proof_threads = service.proof_threads;
  engine.max_queued_proofs = service.max_queued_proofs;
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
  }
  const HotAnswers::Stats hot = engine_.hot_answers().stats();
  response->set_hot_entries(hot.entries);
  response->set_hot_bytes(hot.bytes);
  response->set_hot_max_bytes(engine_.hot_answers().max_bytes());
  const StoreStats store = options_.store->Stats();
  response->set_store_entries(store.actions);
  response->set_store_bytes(store.bytes);
  response->set_store_corrupt_removed(store.corrupt_removed);
  response->set_store_write_failures(store.write_failures);
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
  if (FinishedByLookup(CompileHit(call->prepared, &level), response, reactor)) {
    return reactor;
  }
  return ServeCompile(uid, response, reactor, std::move(call), level);
}

const Digest& JitCacheService::KeyAt(const PreparedCompile& prepared,
                                     KeyLevel level) {
  switch (level) {
    case KeyLevel::kPlaceFree:
      return prepared.key;
    case KeyLevel::kWorkingDirectory:
      return prepared.working_directory_key;
    case KeyLevel::kPlace:
      break;
  }
  return prepared.placed_key;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> JitCacheService::CompileHit(
    const PreparedCompile& prepared, KeyLevel* level) {
  // Without proofs nothing is shared between places: each place's key
  // alone (no record under the place-free key).
  if (!options_.proves_places) {
    if (level != nullptr) *level = KeyLevel::kPlace;
    return engine_.HitAnswer(prepared.placed_key);
  }
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      engine_.HitAnswer(prepared.key);
  KeyLevel at = KeyLevel::kPlaceFree;
  if (hit.ok() && *hit == nullptr) {
    // An answer kept for its place when its proof could not run, or
    // while it runs (the place-free key says nothing then): this place's
    // own; for a caller that waits for the proof, not while it runs.
    if (prepared.wait_for_proof && engine_.Running(prepared.key)) {
      if (level != nullptr) *level = at;
      return hit;
    }
    absl::StatusOr<std::shared_ptr<const HotAnswer>> own =
        engine_.HitAnswer(prepared.placed_key);
    if (!own.ok() || *own != nullptr) {
      if (level != nullptr) *level = KeyLevel::kPlace;
      return own;
    }
    // A verdict kept between the two reads (the place-free key written,
    // then the place's early copy dropped): the place-free key again.
    hit = engine_.HitAnswer(prepared.key);
  }
  if (hit.ok() && *hit != nullptr && (*hit)->place_marker) {
    at = (*hit)->marker_working_directory_only ? KeyLevel::kWorkingDirectory
                                               : KeyLevel::kPlace;
    hit = engine_.HitAnswer(KeyAt(prepared, at));
  }
  if (level != nullptr) *level = at;
  return hit;
}

bool JitCacheService::FindIncludedFiles(CompileCall& call) {
  call.kept = kept_file_sets_.Find(call.prepared.included_set);
  // A request that named its files by digest gives their times apart, one
  // for each: a set that does not match them cannot be used.
  if (call.kept != nullptr && !call.prepared.has_included_contents &&
      call.kept->size() != call.prepared.file_mtimes_ns.size()) {
    call.kept = nullptr;
  }
  if (call.kept != nullptr || call.prepared.has_included_contents) {
    return true;
  }
  call.context->AddTrailingMetadata(std::string(kSendIncludedMetadata), "1");
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
  // leader's is served under its own place's key.
  std::function<bool(const v1::CompileResponse&)> taken_elsewhere;
  if (level == KeyLevel::kPlaceFree) {
    taken_elsewhere = [this, uid, response, reactor,
                       call](const v1::CompileResponse& answer) {
      const PreparedCompile& p = call->prepared;
      if (!answer.place_matters() || answer.cache_key() == p.placed_key.Hex() ||
          answer.cache_key() == p.working_directory_key.Hex()) {
        return false;
      }
      ServeTakenUnderPlace(uid, response, reactor, call);
      return true;
    };
  }
  // CompileHit looked the keys up already: straight to the miss.
  return ServeMiss(
      uid, response, reactor, KeyAt(call->prepared, level),
      [this, call, level] { return CompileBuild(*call, level); },
      ask_for_included, std::move(taken_elsewhere));
}

void JitCacheService::ServeTakenUnderPlace(uid_t uid,
                                           v1::CompileResponse* response,
                                           AnswerReactor* reactor,
                                           std::shared_ptr<CompileCall> call) {
  // The place-free key says now which key holds this place's answer (when
  // it says nothing, the build kept it for its own place alone).
  KeyLevel level = KeyLevel::kPlaceFree;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      CompileHit(call->prepared, &level);
  if (hit.ok() && *hit == nullptr && level == KeyLevel::kPlaceFree) {
    level = KeyLevel::kPlace;
  }
  const Digest& key = KeyAt(call->prepared, level);
  if (!hit.ok()) {
    reactor->FinishClaimed(ToGrpcStatus(hit.status()));
    return;
  }
  if (*hit != nullptr) {
    FinishWithHit(**hit, response, reactor, /*claimed=*/true);
    return;
  }
  if (call->request->includes_resolved()) {
    if (!FindIncludedFiles(*call)) {
      reactor->FinishClaimedToResend(
          grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                       "a miss: send the included files' contents to compile"));
      return;
    }
  }
  engine_.Join(uid, reactor->user(), key,
               FinishClaimedWhenBuilt(reactor, response),
               [this, call, level] { return CompileBuild(*call, level); });
}

Action JitCacheService::CompileBuild(CompileCall& call, KeyLevel level) {
  const v1::CompileRequest& request = *call.request;
  const PreparedCompile& prepared = call.prepared;
  auto job = std::make_shared<CompileJob>(MakeCompileJob(request, prepared));
  if (request.includes_resolved()) {
    if (call.kept == nullptr) {
      call.kept = kept_file_sets_.Keep(prepared.included_set,
                                       CarriedFiles(request, prepared));
    }
    job->files = call.kept;
  }
  Action build;
  build.key = KeyAt(prepared, level);
  build.keyed_by_place = level != KeyLevel::kPlaceFree;
  build.keyed_by_working_directory = level == KeyLevel::kWorkingDirectory;
  build.target = prepared.target;
  build.arch = prepared.arch;
  build.program_name = prepared.program_name;
  build.options = prepared.options;
  build.source_bytes = prepared.source_bytes;
  auto run_job = [this](std::shared_ptr<const CompileJob> which) {
    return [this, which](absl::Time deadline) -> absl::StatusOr<ActionResult> {
      CompileJob run = *which;
      run.deadline = deadline;
      run.cancelled = engine_.cancelled();
      return options_.compiler->Compile(run);
    };
  };
  build.run = run_job(job);
  build.wait_for_proof = prepared.wait_for_proof;
  if (level == KeyLevel::kPlaceFree) {
    build.placed_key = prepared.placed_key;
    build.working_directory_key = prepared.working_directory_key;
    std::optional<CompileJob> elsewhere =
        options_.proves_places ? ElsewhereJob(*job) : std::nullopt;
    if (elsewhere.has_value()) {
      build.run_elsewhere =
          run_job(std::make_shared<const CompileJob>(*std::move(elsewhere)));
      std::optional<CompileJob> same_directory =
          ElsewhereButTheWorkingDirectoryJob(*job);
      if (same_directory.has_value()) {
        build.run_elsewhere_same_directory = run_job(
            std::make_shared<const CompileJob>(*std::move(same_directory)));
      }
    }
  }
  return build;
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
  if (FinishedByLookup(LinkHit(*link, &named), response, reactor)) {
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
                   [&] { return LinkBuild(link, /*named=*/true); });
      return true;
    };
  }
  return ServeMiss(
      uid, response, reactor, LinkKeyAt(*link, named),
      [&] { return LinkBuild(link, named); }, {}, std::move(taken_elsewhere));
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> JitCacheService::LinkHit(
    const PreparedLink& link, bool* named) {
  *named = false;
  if (!link.named_key.has_value()) return engine_.HitAnswer(link.key);
  // Without proofs, the names are always keyed.
  if (!options_.proves_places) {
    *named = true;
    return engine_.HitAnswer(*link.named_key);
  }
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      engine_.HitAnswer(link.key);
  if (hit.ok() && *hit == nullptr) {
    // An answer kept under its names when its proof could not run, or
    // while it runs.
    absl::StatusOr<std::shared_ptr<const HotAnswer>> own =
        engine_.HitAnswer(*link.named_key);
    if (!own.ok() || *own != nullptr) {
      *named = true;
      return own;
    }
    // A verdict kept between the two reads: the key without names again.
    hit = engine_.HitAnswer(link.key);
  }
  if (hit.ok() && *hit != nullptr && (*hit)->place_marker) {
    *named = true;
    return engine_.HitAnswer(*link.named_key);
  }
  return hit;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> JitCacheService::PtxasHit(
    const PreparedPtxas& prepared) {
  // An answer kept for the base names holds for any spelling of them: one
  // lookup on such a hit.
  if (prepared.base_named_key.has_value()) {
    absl::StatusOr<std::shared_ptr<const HotAnswer>> base =
        engine_.HitAnswer(*prepared.base_named_key);
    if (!base.ok() || *base != nullptr) return base;
  }
  return engine_.HitAnswer(prepared.key);
}

const Digest& JitCacheService::LinkKeyAt(const PreparedLink& link, bool named) {
  return named && link.named_key.has_value() ? *link.named_key : link.key;
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

absl::Status JitCacheService::KeepInlineInputs(const PreparedLink& link) {
  if (link.inline_objects.empty()) return absl::OkStatus();
  std::vector<ObjectRef> refs;
  for (const auto& o : link.inline_objects) {
    refs.push_back({o.digest, o.kind, o.bytes});
  }
  return options_.store->PutObjects(refs);
}

Action JitCacheService::LinkBuild(std::shared_ptr<const PreparedLink> link,
                                  bool named) {
  Action build;
  build.key = LinkKeyAt(*link, named);
  build.target = link->target;
  build.arch = link->arch;
  build.options = link->options;
  Action::Link steps;
  steps.step_keys = named ? link->named_step_keys : link->step_keys;
  build.keyed_by_place = named && link->named_key.has_value();
  if (!named && link->named_key.has_value() && options_.proves_places) {
    // The proof: the same link under other names, beside it.
    build.placed_key = link->named_key;
    steps.placed_step_keys = link->named_step_keys;
    auto renamed =
        std::make_shared<const PreparedLink>(RenamedElsewhere(*link));
    build.run_elsewhere = [this, renamed](absl::Time deadline) {
      return RunLink(*renamed, deadline);
    };
  }
  for (const auto& input : link->inputs) {
    steps.input_digests.emplace_back(input.digest.AsBytes());
  }
  build.kind = std::move(steps);
  // Only a link that runs keeps what came inline (a hit writes nothing).
  build.run = [this,
               link](absl::Time deadline) -> absl::StatusOr<ActionResult> {
    if (absl::Status s = KeepInlineInputs(*link); !s.ok()) return s;
    return RunLink(*link, deadline);
  };
  return build;
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
  if (FinishedByLookup(PtxasHit(*prepared), response, reactor)) {
    return reactor;
  }
  return ServeMiss(
      uid, response, reactor, prepared->key,
      [&] { return PtxasBuild(*request, *prepared); }, nullptr, nullptr);
}

Action JitCacheService::PtxasBuild(const v1::PtxasRequest& request,
                                   const PreparedPtxas& prepared) {
  // The leader's alone: a hit copies nothing out of its request.
  auto miss = std::make_shared<PtxasMiss>(MakePtxasMiss(request, prepared));
  Action build;
  build.key = prepared.key;
  build.target = ObjectKind::kCubin;
  build.program_name = miss->job.program;
  build.options = miss->job.arguments;
  build.source_bytes = miss->job.ptx.size();
  build.kind = Action::Ptxas{.named_key = miss->named_key,
                             .names = miss->names,
                             .base_named_key = miss->base_named_key,
                             .spelled_names = miss->spelled};
  build.run = [this, miss](absl::Time deadline) {
    miss->job.deadline = deadline;  // run once, by one pool thread
    return options_.compiler->Ptxas(miss->job);
  };
  return build;
}

Action JitCacheService::NvvmBuild(const v1::NvvmRequest& request,
                                  const PreparedNvvm& prepared) {
  auto job = std::make_shared<NvvmJob>(MakeNvvmJob(request));
  Action build;
  build.key = prepared.key;
  build.target = prepared.target;
  build.options = prepared.options;
  build.source_bytes = prepared.module_bytes;
  build.kind = Action::Nvvm{};
  build.run = [this, job](absl::Time deadline) {
    job->deadline = deadline;  // run once, by one pool thread
    return options_.compiler->Nvvm(*job);
  };
  return build;
}

absl::StatusOr<ActionResult> JitCacheService::RunLink(const PreparedLink& link,
                                                      absl::Time deadline) {
  LinkJob job;
  job.options = link.options;
  job.target = link.target;
  job.deadline = deadline;
  job.as_called = link.as_called;
  for (const auto& input : link.inputs) {
    // What came inline is at hand (a proof may start before it is kept).
    auto sent =
        std::find_if(link.inline_objects.begin(), link.inline_objects.end(),
                     [&](const PreparedLink::Inline& o) {
                       return o.digest == input.digest;
                     });
    if (sent != link.inline_objects.end()) {
      job.inputs.push_back(
          {input.kind, input.name, sent->bytes, input.typed_by_content});
      continue;
    }
    absl::StatusOr<std::optional<StoredObject>> object =
        options_.store->GetObject(input.digest);
    if (!object.ok()) return object.status();
    if (!object->has_value()) {
      return absl::NotFoundError(
          absl::StrCat("link ", input.name, ": object ", input.digest.Hex(),
                       " is not in the store; upload it first"));
    }
    job.inputs.push_back({input.kind, input.name, std::move((*object)->bytes),
                          input.typed_by_content});
  }
  return options_.compiler->Link(job);
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
    std::function<bool(const v1::CompileResponse&)> taken_elsewhere) {
  if (ask_for_inputs && ask_for_inputs()) {
    reactor->FinishToResend(grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        "a miss: the daemon lacks the included files' contents: send them "
        "with the request"));
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
      make_build);
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
