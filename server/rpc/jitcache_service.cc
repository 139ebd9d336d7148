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
#include "server/rpc/grpc_status.h"
#include "server/rpc/place_proof.h"

namespace jitcache {
namespace {

void FillFromRecord(const Digest& key, const v1::ActionRecord& record,
                    v1::CompileResponse* response) {
  response->set_outcome(record.outcome());
  response->set_log(record.log());
  *response->mutable_lowered_names() = record.lowered_names();
  response->set_cache_key(key.Hex());
  response->set_compile_time_us(record.compile_time_us());
  response->set_target(record.target());
  if (!record.object_digest().empty()) {
    response->set_object_digest(absl::BytesToHexString(record.object_digest()));
  }
  if (record.has_link_trace()) {
    *response->mutable_link_trace() = record.link_trace();
  }
  if (record.has_ptxas_run()) {
    *response->mutable_ptxas_run() = record.ptxas_run();
  }
  if (record.has_nvvm_run()) {
    *response->mutable_nvvm_run() = record.nvvm_run();
  }
  if (record.place_matters()) response->set_place_matters(true);
  if (record.working_directory_only()) {
    response->set_working_directory_only(true);
  }
}

// What a place-free key keeps when the answer depends on the place: the
// entry's description (for `jitcache ls`), no answer (no outcome).
v1::ActionRecord PlaceMattersRecord(const v1::ActionRecord& answer) {
  v1::ActionRecord marker;
  marker.set_format_version(answer.format_version());
  marker.set_target(answer.target());
  marker.set_arch(answer.arch());
  *marker.mutable_options() = answer.options();
  marker.set_program_name(answer.program_name());
  marker.set_source_bytes(answer.source_bytes());
  marker.set_toolchain_fingerprint(answer.toolchain_fingerprint());
  marker.set_created_unix_ms(answer.created_unix_ms());
  marker.set_last_used_unix_ms(answer.last_used_unix_ms());
  marker.set_place_matters(true);
  marker.set_working_directory_only(answer.working_directory_only());
  return marker;
}

// The part of an as-called link's trace its first `inputs` adds made.
v1::NvJitLinkTrace FirstSteps(const v1::NvJitLinkTrace& whole, size_t inputs) {
  v1::NvJitLinkTrace first;
  first.set_handle_created(whole.handle_created());
  for (int i = 0; i < whole.steps_size() && static_cast<size_t>(i) <= inputs;
       ++i) {
    *first.add_steps() = whole.steps(i);
  }
  return first;
}

// A compile that failed because a file was not there. The compile sees
// only what the client sent; a file the client's scan could not foresee is
// missing for it but may be there for the caller. The requester gets the
// answer (the NVRTC library then asks the real NVRTC), but it is never
// stored: a later request, or the file appearing, must not meet it.
bool FailedForAMissingFile(const CompileResult& result) {
  return !result.ok && LogSaysAFileWasMissing(result.log);
}

}  // namespace

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

JitCacheService::JitCacheService(ServiceOptions options)
    : options_(std::move(options)),
      tiered_(options_.remote == nullptr
                  ? nullptr
                  : std::make_unique<TieredStore>(
                        options_.store, options_.remote,
                        options_.compiler->toolchain().fingerprint,
                        options_.now)),
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
  response->set_waiting(flights_.waiters());
  const CompilerStats compiler = options_.compiler->stats();
  response->set_compiler_crashes(compiler.crashes);
  response->set_compiler_memory_limited(compiler.memory_limited);
  response->set_compiler_time_limited(compiler.time_limited);
  response->set_compile_workers_started(compiler.workers_started);
  if (tiered_ != nullptr) {
    const RemoteStats remote = tiered_->stats();
    response->set_remote_hits(remote.hits);
    response->set_remote_misses(remote.misses);
    response->set_remote_errors(remote.errors);
    response->set_remote_corrupt(remote.corrupt);
    response->set_remote_leases_waited(remote.leases_waited);
    response->set_remote_bytes_up(remote.bytes_up);
    response->set_remote_bytes_down(remote.bytes_down);
  }
  const HotAnswers::Stats hot = hot_answers_.stats();
  response->set_hot_entries(hot.entries);
  response->set_hot_bytes(hot.bytes);
  response->set_hot_max_bytes(hot_answers_.max_bytes());
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

absl::StatusOr<std::optional<v1::CompileResponse>> JitCacheService::LookUp(
    const Digest& key, v1::ActionRecord* record_out) {
  absl::StatusOr<std::optional<v1::ActionRecord>> record =
      options_.store->GetAction(key);
  if (!record.ok()) return record.status();
  if (!record->has_value()) return std::nullopt;
  v1::ActionRecord& r = **record;
  v1::CompileResponse response;
  // A record names its object, when it has one (an as-called link that
  // made no cubin has none), by digest.
  if (r.outcome() == v1::OUTCOME_OK && !r.object_digest().empty()) {
    absl::StatusOr<Digest> digest = Digest::FromBytes(r.object_digest());
    absl::StatusOr<std::optional<StoredObject>> object =
        digest.ok() ? options_.store->GetObject(*digest)
                    : absl::StatusOr<std::optional<StoredObject>>(std::nullopt);
    if (!object.ok()) return object.status();
    if (!object->has_value() || (*object)->bytes.size() != r.object_size()) {
      // The record outlived its object: drop it and build again.
      JITCACHE_LOG(Warning)
          << "entry " << key.Hex() << " lost its object; rebuilding";
      if (absl::Status s = options_.store->RemoveAction(key); !s.ok()) {
        JITCACHE_LOG(Warning)
            << "cannot remove entry " << key.Hex() << ": " << s;
      }
      return std::nullopt;
    }
    response.set_object(std::move((*object)->bytes));
  }
  // The store keeps the last use itself, off this path.
  FillFromRecord(key, r, &response);
  if (record_out != nullptr) *record_out = std::move(r);
  return response;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> JitCacheService::HitAnswer(
    const Digest& key) {
  if (std::shared_ptr<const HotAnswer> hot = hot_answers_.Find(key)) {
    if (options_.store->StillCurrent(key, hot->record_version)) {
      // A record that says the place matters is no hit of its own.
      if (!hot->place_marker) ++counters_.hot_hits;
      return hot;
    }
    hot_answers_.Drop(key);
  }
  const std::optional<uint64_t> version = options_.store->RecordVersion(key);
  absl::StatusOr<std::optional<v1::CompileResponse>> hit = LookUp(key);
  if (!hit.ok()) return hit.status();
  if (!hit->has_value()) return nullptr;
  (*hit)->set_served(v1::SERVED_HIT);
  auto answer = std::make_shared<HotAnswer>();
  answer->serialized = (*hit)->SerializeAsString();
  answer->compile_time_us = (*hit)->compile_time_us();
  answer->outcome = (*hit)->outcome();
  answer->place_marker =
      (*hit)->place_matters() && (*hit)->outcome() == v1::OUTCOME_UNSPECIFIED;
  answer->marker_working_directory_only =
      answer->place_marker && (*hit)->working_directory_only();
  if (version.has_value()) {
    answer->record_version = *version;
    hot_answers_.Keep(key, answer);
  }
  return answer;
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
  auto* reactor = new CompileReactor(&counters_, &CountRequest(uid));
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
    return HitAnswer(prepared.placed_key);
  }
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      HitAnswer(prepared.key);
  KeyLevel at = KeyLevel::kPlaceFree;
  if (hit.ok() && *hit == nullptr) {
    // An answer kept for its place when its proof could not run, or
    // while it runs (the place-free key says nothing then): this place's
    // own; for a caller that waits for the proof, not while it runs.
    if (prepared.wait_for_proof && flights_.Open(prepared.key)) {
      if (level != nullptr) *level = at;
      return hit;
    }
    absl::StatusOr<std::shared_ptr<const HotAnswer>> own =
        HitAnswer(prepared.placed_key);
    if (!own.ok() || *own != nullptr) {
      if (level != nullptr) *level = KeyLevel::kPlace;
      return own;
    }
    // A verdict kept between the two reads (the place-free key written,
    // then the place's early copy dropped): the place-free key again.
    hit = HitAnswer(prepared.key);
  }
  if (hit.ok() && *hit != nullptr && (*hit)->place_marker) {
    at = (*hit)->marker_working_directory_only ? KeyLevel::kWorkingDirectory
                                               : KeyLevel::kPlace;
    hit = HitAnswer(KeyAt(prepared, at));
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
    uid_t uid, v1::CompileResponse* response, CompileReactor* reactor,
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
                                           CompileReactor* reactor,
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
  JoinBuild(uid, reactor->user(), key,
            FinishClaimedWhenBuilt(reactor, response),
            [this, call, level] { return CompileBuild(*call, level); });
}

JitCacheService::Build JitCacheService::CompileBuild(CompileCall& call,
                                                     KeyLevel level) {
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
  Build build;
  build.key = KeyAt(prepared, level);
  build.keyed_by_place = level != KeyLevel::kPlaceFree;
  build.keyed_by_working_directory = level == KeyLevel::kWorkingDirectory;
  build.target = prepared.target;
  build.arch = prepared.arch;
  build.program_name = prepared.program_name;
  build.options = prepared.options;
  build.source_bytes = prepared.source_bytes;
  auto run_job = [this](std::shared_ptr<const CompileJob> which) {
    return [this, which](absl::Time deadline) -> absl::StatusOr<CompileResult> {
      CompileJob run = *which;
      run.deadline = deadline;
      run.cancelled = &shutting_down_;
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
  auto* reactor = new CompileReactor(&counters_, &CountRequest(uid));
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
      JoinBuild(uid, reactor->user(), *link->named_key,
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
  if (!link.named_key.has_value()) return HitAnswer(link.key);
  // Without proofs, the names are always keyed.
  if (!options_.proves_places) {
    *named = true;
    return HitAnswer(*link.named_key);
  }
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit = HitAnswer(link.key);
  if (hit.ok() && *hit == nullptr) {
    // An answer kept under its names when its proof could not run, or
    // while it runs.
    absl::StatusOr<std::shared_ptr<const HotAnswer>> own =
        HitAnswer(*link.named_key);
    if (!own.ok() || *own != nullptr) {
      *named = true;
      return own;
    }
    // A verdict kept between the two reads: the key without names again.
    hit = HitAnswer(link.key);
  }
  if (hit.ok() && *hit != nullptr && (*hit)->place_marker) {
    *named = true;
    return HitAnswer(*link.named_key);
  }
  return hit;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> JitCacheService::PtxasHit(
    const PreparedPtxas& prepared) {
  // An answer kept for the base names holds for any spelling of them: one
  // lookup on such a hit.
  if (prepared.base_named_key.has_value()) {
    absl::StatusOr<std::shared_ptr<const HotAnswer>> base =
        HitAnswer(*prepared.base_named_key);
    if (!base.ok() || *base != nullptr) return base;
  }
  return HitAnswer(prepared.key);
}

const Digest& JitCacheService::LinkKeyAt(const PreparedLink& link, bool named) {
  return named && link.named_key.has_value() ? *link.named_key : link.key;
}

SingleFlight<JitCacheService::SharedResult>::Waiter
JitCacheService::FinishClaimedWhenBuilt(CompileReactor* reactor,
                                        v1::CompileResponse* response) {
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

JitCacheService::Build JitCacheService::LinkBuild(
    std::shared_ptr<const PreparedLink> link, bool named) {
  Build build;
  build.key = LinkKeyAt(*link, named);
  build.target = link->target;
  build.is_link = true;
  build.arch = link->arch;
  build.options = link->options;
  build.step_keys = named ? link->named_step_keys : link->step_keys;
  build.keyed_by_place = named && link->named_key.has_value();
  if (!named && link->named_key.has_value() && options_.proves_places) {
    // The proof: the same link under other names, beside it.
    build.placed_key = link->named_key;
    build.placed_step_keys = link->named_step_keys;
    auto renamed =
        std::make_shared<const PreparedLink>(RenamedElsewhere(*link));
    build.run_elsewhere = [this, renamed](absl::Time deadline) {
      return RunLink(*renamed, deadline);
    };
  }
  for (const auto& input : link->inputs) {
    build.input_digests.emplace_back(input.digest.AsBytes());
  }
  // Only a link that runs keeps what came inline (a hit writes nothing).
  build.run = [this,
               link](absl::Time deadline) -> absl::StatusOr<CompileResult> {
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
  auto* reactor = new CompileReactor(&counters_, &CountRequest(uid));
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

JitCacheService::Build JitCacheService::PtxasBuild(
    const v1::PtxasRequest& request, const PreparedPtxas& prepared) {
  // The leader's alone: a hit copies nothing out of its request.
  auto miss = std::make_shared<PtxasMiss>(MakePtxasMiss(request, prepared));
  Build build;
  build.key = prepared.key;
  build.target = ObjectKind::kCubin;
  build.program_name = miss->job.program;
  build.options = miss->job.arguments;
  build.source_bytes = miss->job.ptx.size();
  build.is_ptxas = true;
  build.named_key = miss->named_key;
  build.names = miss->names;
  build.base_named_key = miss->base_named_key;
  build.spelled_names = miss->spelled;
  build.run = [this, miss](absl::Time deadline) {
    miss->job.deadline = deadline;  // run once, by one pool thread
    return options_.compiler->Ptxas(miss->job);
  };
  return build;
}

JitCacheService::Build JitCacheService::NvvmBuild(
    const v1::NvvmRequest& request, const PreparedNvvm& prepared) {
  auto job = std::make_shared<NvvmJob>(MakeNvvmJob(request));
  Build build;
  build.key = prepared.key;
  build.target = prepared.target;
  build.options = prepared.options;
  build.source_bytes = prepared.module_bytes;
  build.is_nvvm = true;
  build.run = [this, job](absl::Time deadline) {
    job->deadline = deadline;  // run once, by one pool thread
    return options_.compiler->Nvvm(*job);
  };
  return build;
}

absl::StatusOr<CompileResult> JitCacheService::RunLink(const PreparedLink& link,
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
    v1::CompileResponse* response, CompileReactor* reactor) {
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
                                    CompileReactor* reactor, bool claimed) {
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
    uid_t uid, v1::CompileResponse* response, CompileReactor* reactor,
    const Digest& key, const std::function<Build()>& make_build,
    const std::function<bool()>& ask_for_inputs,
    std::function<bool(const v1::CompileResponse&)> taken_elsewhere) {
  if (ask_for_inputs && ask_for_inputs()) {
    reactor->FinishToResend(
        grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                     "a miss: send the included files' contents to compile"));
    return reactor;
  }

  JoinBuild(
      uid, reactor->user(), key,
      [this, reactor, finished = reactor->finished(), response,
       taken_elsewhere = std::move(taken_elsewhere)](const SharedResult& result,
                                                     bool is_leader) {
        // A waiter that has left (cancelled) is skipped: `reactor` may be gone.
        if (!result.ok()) {
          CompileReactor::FinishOnce(reactor, finished,
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

void JitCacheService::JoinBuild(uid_t uid, UserStats::Counters& user,
                                const Digest& key,
                                SingleFlight<SharedResult>::Waiter waiter,
                                const std::function<Build()>& make_build) {
  if (!flights_.Join(key, std::move(waiter))) return;
  auto shared = std::make_shared<Build>(make_build());
  shared->uid = uid;
  shared->user = &user;
  CompilePool::Task task;
  task.run = [this, shared] { RunBuild(*shared); };
  task.cancel = [this, shared] {
    flights_.Complete(shared->key,
                      absl::UnavailableError("the daemon is shutting down"));
  };
  if (absl::Status s = options_.pool->Submit(uid, std::move(task)); !s.ok()) {
    flights_.Complete(shared->key, s);
  }
}

v1::ActionRecord JitCacheService::RecordOf(const Build& build,
                                           const CompileResult& result) const {
  const int64_t now_ms = absl::ToUnixMillis(options_.now());
  v1::ActionRecord record;
  record.set_format_version(1);
  record.set_outcome(result.ok       ? v1::OUTCOME_OK
                     : build.is_link ? v1::OUTCOME_LINK_ERROR
                                     : v1::OUTCOME_COMPILE_ERROR);
  record.set_target(ToWireTarget(build.target));
  record.set_log(result.log);
  for (const auto& [expr, lowered] : result.lowered_names) {
    v1::LoweredName* name = record.add_lowered_names();
    name->set_name_expression(expr);
    name->set_lowered_name(lowered);
  }
  for (const std::string& input : build.input_digests) {
    record.add_input_digests(input);
  }
  record.set_arch(build.arch);
  for (const std::string& option : build.options) record.add_options(option);
  record.set_program_name(build.program_name);
  record.set_source_bytes(build.source_bytes);
  record.set_toolchain_fingerprint(options_.compiler->toolchain().fingerprint);
  record.set_compile_time_us(absl::ToInt64Microseconds(result.elapsed));
  record.set_created_unix_ms(now_ms);
  record.set_last_used_unix_ms(now_ms);
  if (result.link_trace.has_value()) {
    *record.mutable_link_trace() = *result.link_trace;
  }
  if (result.ptxas_run.has_value()) {
    *record.mutable_ptxas_run() = *result.ptxas_run;
  }
  if (result.nvvm_run.has_value()) {
    *record.mutable_nvvm_run() = *result.nvvm_run;
  }
  return record;
}

void JitCacheService::RunBuild(const Build& build) {
  const Digest& key = build.key;
  // Another flight may have stored this key between our miss and now.
  absl::StatusOr<std::optional<v1::CompileResponse>> stored = LookUp(key);
  if (stored.ok() && stored->has_value()) {
    flights_.Complete(
        key, std::make_shared<const v1::CompileResponse>(**std::move(stored)));
    return;
  }
  bool leased = false;
  if (tiered_ != nullptr &&
      tiered_->FetchOrLease(key, absl::Now() + options_.compile_time_limit,
                            shutting_down_, &leased)) {
    // The team's tier had it: checked, and stored here, like an import.
    v1::ActionRecord whole;
    absl::StatusOr<std::optional<v1::CompileResponse>> fetched =
        LookUp(key, &whole);
    if (fetched.ok() && fetched->has_value()) {
      // An as-called link from another node: its first steps are kept
      // here too, so that this node's next caller is answered call by call.
      if (whole.has_link_trace()) KeepFirstSteps(build, whole, false, false);
      (*fetched)->set_served_remotely(true);
      flights_.Complete(key, std::make_shared<const v1::CompileResponse>(
                                 **std::move(fetched)));
      return;
    }
  }

  ++counters_.compiles;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.compile_time_limit;
  // The proof runs beside the compile itself, so a miss takes no longer.
  std::future<absl::StatusOr<CompileResult>> elsewhere, same_directory;
  if (build.run_elsewhere) {
    ++counters_.place_proofs;
    ++counters_.place_proofs_running;
    elsewhere = RunElsewhere(build, build.run_elsewhere, deadline);
  }
  // Under way until this build has kept its verdict, whichever way it ends.
  absl::Cleanup proof_ended = [&] {
    if (build.run_elsewhere) --counters_.place_proofs_running;
  };
  if (build.run_elsewhere_same_directory) {
    same_directory =
        RunElsewhere(build, build.run_elsewhere_same_directory, deadline);
  }
  absl::StatusOr<CompileResult> result = build.run(deadline);
  const absl::Duration took = absl::Now() - start;
  counters_.compile_time.Observe(took);
  build.user->compile_us += absl::ToInt64Microseconds(took);
  if (!result.ok() && build.is_link &&
      absl::IsFailedPrecondition(result.status()) &&
      result.status().message() == kReadsCallersFiles) {
    callers_own_links_.Remember(key);
  }
  if (!result.ok()) {
    if (leased) tiered_->Release(key);
    JITCACHE_LOG(Warning) << (build.is_link    ? "link "
                              : build.is_ptxas ? "ptxas run "
                              : build.is_nvvm  ? "libNVVM compile "
                                               : "compile ")
                          << key.Hex() << " uid " << build.uid
                          << " failed after " << took << ": "
                          << result.status();
    flights_.Complete(key, result.status());
    return;
  }
  JITCACHE_LOG(Info) << (build.is_link    ? "linked "
                         : build.is_ptxas ? "ran ptxas for "
                         : build.is_nvvm  ? "ran libNVVM for "
                                          : "compiled ")
                     << key.Hex() << " uid " << build.uid << " " << build.arch
                     << " in " << took
                     << (result->ok ? ""
                                    : (build.is_link ? ": link error"
                                                     : ": compile error"));
  v1::ActionRecord record = RecordOf(build, *result);
  counters_.compile_us_spent += record.compile_time_us();
  std::vector<ObjectRef> objects;
  // No bytes, no object: an as-called link that made no cubin (refused,
  // failed, or PTX alone) has all it answers in its trace.
  if (result->ok && !result->object.empty()) {
    const Digest digest = Digest::Of(result->object);
    record.set_object_digest(std::string(digest.AsBytes()));
    record.set_object_size(result->object.size());
    objects.push_back({digest, build.target, result->object});
  }
  const bool keep = build.is_link || build.is_ptxas || build.is_nvvm ||
                    !FailedForAMissingFile(*result);
  // (An answer that is not kept is not kept early either.)
  const bool answered_early =
      keep &&
      AnswerLeaderBeforeProof(build, record, objects, *result, elsewhere);
  // A compile keyed without its place: kept there when the place did not
  // change the answer, else under its place's key.
  const PlaceVerdict place =
      DecidePlace(build, result, elsewhere, same_directory);
  // A ptxas answer that shows the names by their last parts alone is kept
  // for those: any spelling of the same base names shares it.
  const bool base_names_only =
      build.base_named_key.has_value() &&
      AnswerShowsNames(*result, build.names) &&
      AnswerShowsBaseNamesOnly(*result, build.spelled_names);
  const Digest& answer_key =
      place.placed
          ? (place.working_directory_only ? *build.working_directory_key
                                          : *build.placed_key)
      : base_names_only && !build.named_key.has_value() ? *build.base_named_key
                                                        : key;
  if (place.placed || build.keyed_by_place) record.set_place_matters(true);
  if (place.working_directory_only || build.keyed_by_working_directory) {
    record.set_working_directory_only(true);
  }
  // A ptxas answer that holds for the leader's names alone: kept under
  // them, and every requester of this flight (the leader too) asks again
  // with its own names.
  std::optional<v1::ActionRecord> named;
  const Digest* named_at = !build.named_key.has_value() ? nullptr
                           : base_names_only            ? &*build.base_named_key
                                                        : &*build.named_key;
  if (named_at != nullptr && AnswerShowsNames(*result, build.names)) {
    if (absl::Status s = options_.store->PutResult(*named_at, record, objects);
        !s.ok()) {
      JITCACHE_LOG(Debug) << "cannot store " << named_at->Hex() << ": " << s;
    } else {
      named = record;
    }
    result->object.clear();
    objects.clear();
    record.clear_object_digest();
    record.clear_object_size();
    record.clear_log();
    record.clear_ptxas_run();
    record.mutable_ptxas_run()->set_names_matter(true);
  }
  absl::Status stored_locally =
      keep ? options_.store->PutResult(answer_key, record, objects)
           : absl::FailedPreconditionError("it failed for a missing file");
  if (stored_locally.ok() && keep && place.marker) {
    stored_locally = options_.store->PutResult(key, PlaceMattersRecord(record),
                                               /*objects=*/{});
  }
  if (!stored_locally.ok() && keep) {
    // The answer is still right; it is just not cached. The store logs
    // when its writes start and stop failing.
    JITCACHE_LOG(Debug) << "cannot store " << answer_key.Hex() << ": "
                        << stored_locally;
  }

  if (stored_locally.ok() && result->link_trace.has_value()) {
    KeepFirstSteps(build, record, place.placed, place.marker);
  }
  if (answered_early && stored_locally.ok() &&
      (!place.placed || place.working_directory_only)) {
    DropEarlyAnswer(build);
  }

  auto response = std::make_shared<v1::CompileResponse>();
  FillFromRecord(answer_key, record, response.get());
  if (result->ok) response->set_object(std::move(result->object));
  flights_.Complete(key, std::shared_ptr<const v1::CompileResponse>(response));
  // The requesters have their answer; the cluster gets it in the background.
  if (leased && place.placed) {
    if (stored_locally.ok()) {
      tiered_->Publish(answer_key, record);
      if (place.marker) {
        tiered_->Publish(key, PlaceMattersRecord(record));
      } else {
        tiered_->Release(key);
      }
    } else {
      tiered_->Release(key);
    }
  } else if (leased) {
    if (stored_locally.ok()) {
      tiered_->Publish(key, record);
      // Unleased: a node asks for it only once this key has said so.
      if (named.has_value()) tiered_->Publish(*named_at, *named);
    } else {
      tiered_->Release(key);
    }
  }
}

bool JitCacheService::AnswerLeaderBeforeProof(
    const Build& build, const v1::ActionRecord& record,
    const std::vector<ObjectRef>& objects, const CompileResult& here,
    std::future<absl::StatusOr<CompileResult>>& elsewhere) {
  // (Nor while the store cannot be written: the early copy is one write
  // more for a disk that refuses them, and would not be kept.)
  if (!build.placed_key.has_value() || !elsewhere.valid() ||
      build.wait_for_proof || options_.store->WritesFailing()) {
    return false;
  }
  // Ended: the verdict is at hand (DecidePlace waits for the compile that
  // keeps the working directory only where this one differs).
  if (elsewhere.wait_for(std::chrono::seconds(0)) ==
      std::future_status::ready) {
    return false;
  }
  // What a place's own key keeps: exact for this place, whatever the proof
  // says of others.
  v1::ActionRecord placed = record;
  placed.set_place_matters(true);
  if (absl::Status s =
          options_.store->PutResult(*build.placed_key, placed, objects);
      !s.ok()) {
    JITCACHE_LOG(Debug) << "cannot store " << build.placed_key->Hex() << ": "
                        << s;
    return false;
  }
  if (placed.has_link_trace()) {
    KeepFirstSteps(build, placed, /*placed=*/true, /*marker=*/false);
  }
  auto response = std::make_shared<v1::CompileResponse>();
  FillFromRecord(*build.placed_key, placed, response.get());
  response->set_proof_pending(true);
  if (here.ok) response->set_object(here.object);
  ++counters_.place_answered_before_proof;
  flights_.AnswerLeader(build.key, response);
  return true;
}

void JitCacheService::DropEarlyAnswer(const Build& build) {
  // The whole answer's key alone: first steps' keys are prefixes that other
  // links share (another link's marker may point at one), and a step's
  // record holds for its names whatever this verdict says.
  if (absl::Status s = options_.store->RemoveAction(*build.placed_key);
      !s.ok()) {
    JITCACHE_LOG(Debug) << "cannot remove " << build.placed_key->Hex() << ": "
                        << s;
  }
}

std::future<absl::StatusOr<CompileResult>> JitCacheService::RunElsewhere(
    const Build& build,
    std::function<absl::StatusOr<CompileResult>(absl::Time)> run,
    absl::Time deadline) {
  auto answer = std::make_shared<std::promise<absl::StatusOr<CompileResult>>>();
  std::future<absl::StatusOr<CompileResult>> out = answer->get_future();
  CompilePool::Task task;
  task.run = [answer, run = std::move(run), deadline] {
    answer->set_value(run(deadline));
  };
  task.cancel = [answer] {
    answer->set_value(absl::UnavailableError("the daemon is shutting down"));
  };
  if (absl::Status s = proofs_.Submit(build.uid, std::move(task)); !s.ok()) {
    answer->set_value(s);
  }
  return out;
}

JitCacheService::PlaceVerdict JitCacheService::DecidePlace(
    const Build& build, const absl::StatusOr<CompileResult>& here,
    std::future<absl::StatusOr<CompileResult>>& elsewhere,
    std::future<absl::StatusOr<CompileResult>>& same_directory) {
  if (!build.placed_key.has_value()) return {};
  if (!elsewhere.valid()) {
    // The place cannot be moved (or this compiler cannot move it): decided
    // by the place-free key alone, for good.
    ++counters_.place_kept;
    return {.placed = true, .marker = true};
  }
  const absl::StatusOr<CompileResult> there = elsewhere.get();
  if (!there.ok()) {
    // Nothing proven either way: kept for this place, asked again later.
    JITCACHE_LOG(Warning) << "compile " << build.key.Hex()
                          << " elsewhere failed: " << there.status();
    ++counters_.place_kept;
    return {.placed = true, .marker = false};
  }
  if (here.ok() && (build.is_link ? SameLinkAnswer(*here, *there)
                                  : SameAnswer(*here, *there))) {
    ++counters_.place_shared;
    return {};
  }
  ++counters_.place_kept;
  // Moved everything but the working directory, and the same: the answer
  // depends on the working directory alone.
  if (same_directory.valid()) {
    const absl::StatusOr<CompileResult> beside = same_directory.get();
    if (here.ok() && beside.ok() && SameAnswer(*here, *beside)) {
      return {.placed = true, .working_directory_only = true, .marker = true};
    }
  }
  JITCACHE_LOG(Debug) << (build.is_link ? "link " : "compile ")
                      << build.key.Hex()
                      << (build.is_link ? " shows its inputs' names"
                                        : " depends on its place")
                      << "; kept under " << build.placed_key->Hex() << " ("
                      << (here.ok() ? FirstDifference(*here, *there)
                                    : here.status().ToString())
                      << ")";
  return {.placed = true, .marker = true};
}

void JitCacheService::KeepFirstSteps(const Build& build,
                                     const v1::ActionRecord& whole, bool placed,
                                     bool marker) {
  const std::vector<Digest>& keys =
      placed ? build.placed_step_keys : build.step_keys;
  // A refused nvJitLinkCreate leaves one step however many inputs follow.
  const size_t known = std::min(
      keys.size(), static_cast<size_t>(whole.link_trace().steps_size()));
  for (size_t inputs = 0; inputs < known; ++inputs) {
    v1::ActionRecord record;
    record.set_format_version(1);
    record.set_outcome(v1::OUTCOME_OK);
    record.set_target(whole.target());
    record.set_arch(whole.arch());
    *record.mutable_options() = whole.options();
    record.set_toolchain_fingerprint(whole.toolchain_fingerprint());
    record.set_created_unix_ms(whole.created_unix_ms());
    record.set_last_used_unix_ms(whole.last_used_unix_ms());
    *record.mutable_link_trace() = FirstSteps(whole.link_trace(), inputs);
    if (placed) record.set_place_matters(true);
    absl::Status s = options_.store->PutResult(keys[inputs], record, {});
    if (s.ok() && placed && marker && inputs < build.step_keys.size()) {
      s = options_.store->PutResult(build.step_keys[inputs],
                                    PlaceMattersRecord(record), {});
    }
    if (!s.ok()) {
      JITCACHE_LOG(Debug) << "cannot store the first steps of "
                          << build.key.Hex() << ": " << s;
      return;
    }
  }
}

}  // namespace jitcache
