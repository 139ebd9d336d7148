#include "server/jitcache_service.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/cache_key.h"
#include "common/log.h"
#include "server/grpc_status.h"
#include "server/wire_target.h"

namespace jitcache {
namespace {

// Last-used times are refreshed at most this often per entry, so that a hot
// entry does not cost a store write on every hit.
constexpr absl::Duration kTouchInterval = absl::Minutes(1);

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
}

// The client's name for fair sharing: its "jitcache-client" metadata (the
// library sends its pid), else the transport's peer string.
std::string ClientId(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("jitcache-client"); it != metadata.end()) {
    return std::string(it->second.data(), it->second.size());
  }
  return context.peer();
}

// A Compile call that may be finished from two places: by the compile's
// completion or by the client's cancellation. Whoever comes first finishes
// it; the flag outlives the reactor, so a late completion never touches a
// reactor that is gone.
class CompileReactor final : public grpc::ServerUnaryReactor {
 public:
  CompileReactor(ServiceCounters* counters)
      : counters_(counters),
        finished_(std::make_shared<std::atomic<bool>>(false)) {}

  // Finishes the RPC unless someone else did; an error is counted first, so
  // that a client never sees its answer before the counters do.
  static void FinishOnce(CompileReactor* reactor,
                         const std::shared_ptr<std::atomic<bool>>& finished,
                         const grpc::Status& status) {
    if (finished->exchange(true)) return;
    if (!status.ok()) {
      reactor->counters_->Rejected(
          static_cast<absl::StatusCode>(status.error_code()));
    }
    reactor->Finish(status);
  }

  void OnCancel() override {
    FinishOnce(this, finished_, grpc::Status::CANCELLED);
  }
  void OnDone() override { delete this; }

  const std::shared_ptr<std::atomic<bool>>& finished() const {
    return finished_;
  }

 private:
  ServiceCounters* counters_;
  std::shared_ptr<std::atomic<bool>> finished_;
};

}  // namespace

grpc::ServerUnaryReactor* JitCacheService::GetStats(
    grpc::CallbackServerContext* context, const v1::StatsRequest* /*request*/,
    v1::StatsResponse* response) {
  counters_.Fill(response);
  response->set_queued(options_.pool->queued());
  response->set_running(options_.pool->running());
  response->set_waiting(flights_.waiters());
  const StoreStats store = options_.store->Stats();
  response->set_store_entries(store.actions);
  response->set_store_bytes(store.bytes);
  response->set_store_corrupt_removed(store.corrupt_removed);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

JitCacheService::JitCacheService(ServiceOptions options)
    : options_(std::move(options)) {}

grpc::ServerUnaryReactor* JitCacheService::Ping(
    grpc::CallbackServerContext* context, const v1::PingRequest* /*request*/,
    v1::PingResponse* response) {
  const ToolchainInfo& tc = options_.compiler->toolchain();
  response->set_daemon_version(JITCACHE_VERSION);
  response->set_toolchain(tc.description);
  response->set_toolchain_fingerprint(absl::BytesToHexString(tc.fingerprint));
  response->set_key_schema_version(kKeySchemaVersion);
  for (int arch : tc.supported_archs) {
    response->add_supported_archs(absl::StrCat("sm_", arch));
  }
  response->set_store_path(options_.store_path);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

absl::StatusOr<std::optional<v1::CompileResponse>> JitCacheService::LookUp(
    const Digest& key) {
  absl::StatusOr<std::optional<v1::ActionRecord>> record =
      options_.store->GetAction(key);
  if (!record.ok()) return record.status();
  if (!record->has_value()) return std::nullopt;
  v1::ActionRecord& r = **record;
  v1::CompileResponse response;
  if (r.outcome() == v1::OUTCOME_OK) {
    absl::StatusOr<Digest> digest = Digest::FromBytes(r.object_digest());
    absl::StatusOr<std::optional<StoredObject>> object =
        digest.ok() ? options_.store->GetObject(*digest)
                    : absl::StatusOr<std::optional<StoredObject>>(std::nullopt);
    if (!object.ok()) return object.status();
    if (!object->has_value() || (*object)->bytes.size() != r.object_size()) {
      // The record outlived its object: drop it and compile again.
      JITCACHE_LOG(Warning)
          << "entry " << key.Hex() << " lost its object; recompiling";
      if (absl::Status s = options_.store->RemoveAction(key); !s.ok()) {
        JITCACHE_LOG(Warning)
            << "cannot remove entry " << key.Hex() << ": " << s;
      }
      return std::nullopt;
    }
    response.set_object(std::move((*object)->bytes));
  }
  FillFromRecord(key, r, &response);
  const int64_t now_ms = absl::ToUnixMillis(options_.now());
  if (now_ms - r.last_used_unix_ms() >
      absl::ToInt64Milliseconds(kTouchInterval)) {
    r.set_last_used_unix_ms(now_ms);
    if (absl::Status s = options_.store->PutAction(key, r); !s.ok()) {
      JITCACHE_LOG(Warning)
          << "cannot update last-used of " << key.Hex() << ": " << s;
    }
  }
  return response;
}

grpc::ServerUnaryReactor* JitCacheService::Compile(
    grpc::CallbackServerContext* context, const v1::CompileRequest* request,
    v1::CompileResponse* response) {
  ++counters_.requests;
  auto* reactor = new CompileReactor(&counters_);
  auto fail = [&](const absl::Status& status) {
    CompileReactor::FinishOnce(reactor, reactor->finished(),
                               ToGrpcStatus(status));
    return reactor;
  };
  absl::StatusOr<PreparedCompile> prepared =
      PrepareCompile(*request, options_.compiler->toolchain(), options_.limits);
  if (!prepared.ok()) return fail(prepared.status());
  absl::StatusOr<std::optional<v1::CompileResponse>> hit =
      LookUp(prepared->key);
  if (!hit.ok()) return fail(hit.status());
  if (hit->has_value()) {
    *response = **std::move(hit);
    response->set_served(v1::SERVED_HIT);
    ++counters_.hits;
    counters_.compile_us_saved += response->compile_time_us();
    if (response->outcome() == v1::OUTCOME_COMPILE_ERROR)
      ++counters_.compile_errors;
    CompileReactor::FinishOnce(reactor, reactor->finished(), grpc::Status::OK);
    return reactor;
  }

  const bool leader = flights_.Join(
      prepared->key, [this, reactor, finished = reactor->finished(), response](
                         const SharedResult& result, bool is_leader) {
        // A waiter that has left (cancelled) is skipped: `reactor` may be gone.
        if (finished->load()) return;
        if (!result.ok()) {
          CompileReactor::FinishOnce(reactor, finished,
                                     ToGrpcStatus(result.status()));
          return;
        }
        // Fill the response only once this waiter owns the finish.
        if (finished->exchange(true)) return;
        *response = **result;
        response->set_served(is_leader ? v1::SERVED_MISS : v1::SERVED_JOINED);
        if (is_leader) {
          ++counters_.misses;
        } else {
          ++counters_.joins;
          counters_.compile_us_saved += response->compile_time_us();
        }
        if (response->outcome() == v1::OUTCOME_COMPILE_ERROR)
          ++counters_.compile_errors;
        reactor->Finish(grpc::Status::OK);
      });
  if (!leader) return reactor;

  auto job = std::make_shared<PreparedCompile>(*std::move(prepared));
  CompilePool::Task task;
  task.run = [this, job] { RunCompile(*job); };
  task.cancel = [this, job] {
    flights_.Complete(job->key,
                      absl::UnavailableError("the daemon is shutting down"));
  };
  if (absl::Status s =
          options_.pool->Submit(ClientId(*context), std::move(task));
      !s.ok()) {
    flights_.Complete(job->key, s);
  }
  return reactor;
}

void JitCacheService::RunCompile(const PreparedCompile& prepared) {
  const Digest& key = prepared.key;
  // Another flight may have stored this key between our miss and now.
  absl::StatusOr<std::optional<v1::CompileResponse>> stored = LookUp(key);
  if (stored.ok() && stored->has_value()) {
    flights_.Complete(
        key, std::make_shared<const v1::CompileResponse>(**std::move(stored)));
    return;
  }

  CompileJob job = prepared.job;
  job.deadline = absl::Now() + options_.compile_time_limit;
  job.cancelled = &shutting_down_;
  ++counters_.compiles;
  absl::StatusOr<CompileResult> result = options_.compiler->Compile(job);
  if (!result.ok()) {
    flights_.Complete(key, result.status());
    return;
  }
  const int64_t now_ms = absl::ToUnixMillis(options_.now());
  v1::ActionRecord record;
  record.set_format_version(1);
  record.set_outcome(result->ok ? v1::OUTCOME_OK : v1::OUTCOME_COMPILE_ERROR);
  record.set_target(ToWireTarget(prepared.job.target));
  record.set_log(result->log);
  for (const auto& [expr, lowered] : result->lowered_names) {
    v1::LoweredName* name = record.add_lowered_names();
    name->set_name_expression(expr);
    name->set_lowered_name(lowered);
  }
  record.set_toolchain_fingerprint(options_.compiler->toolchain().fingerprint);
  record.set_compile_time_us(absl::ToInt64Microseconds(result->elapsed));
  counters_.compile_us_spent += record.compile_time_us();
  record.set_created_unix_ms(now_ms);
  record.set_last_used_unix_ms(now_ms);

  std::vector<ObjectRef> objects;
  if (result->ok) {
    const Digest digest = Digest::Of(result->object);
    record.set_object_digest(std::string(digest.AsBytes()));
    record.set_object_size(result->object.size());
    objects.push_back({digest, prepared.job.target, result->object});
  }
  if (absl::Status s = options_.store->PutResult(key, record, objects);
      !s.ok()) {
    // The answer is still right; it is just not cached.
    JITCACHE_LOG(Warning) << "cannot store " << key.Hex() << ": " << s;
  }

  auto response = std::make_shared<v1::CompileResponse>();
  FillFromRecord(key, record, response.get());
  if (result->ok) response->set_object(std::move(result->object));
  flights_.Complete(key, std::shared_ptr<const v1::CompileResponse>(response));
}

}  // namespace jitcache
