#include "jitcache/client.h"

#include <grpcpp/alarm.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/channel_arguments.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "client/api/asked_compile.h"
#include "client/api/compile_includes.h"
#include "client/api/mapped_hit.h"
#include "client/local/local_compiler.h"
#include "client/rpc/code_types.h"
#include "client/rpc/messages.h"
#include "client/rpc/restart_policy.h"
#include "client/rpc/rpc_channel.h"
#include "client/wire/framed_channel.h"
#include "common/framed_protocol.h"
#include "common/paths.h"
#include "common/wire_constants.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {
namespace {

// One outcome's options: the item's, for `arch`, each key final (an export
// may follow).
ProgramOptions ForArch(const Client::PrecompileItem& item,
                       const std::string& arch) {
  ProgramOptions options = item.options;
  options.arch = arch;
  options.wait_for_proof = true;
  return options;
}

}  // namespace

// One asynchronous RPC: the poller thread calls Done when it completes.
struct PendingCall {
  virtual ~PendingCall() = default;
  virtual void Done() = 0;
  // Ends it early (the client is going away); Done still comes.
  virtual void Cancel() { context.TryCancel(); }
  grpc::ClientContext context;
  grpc::Status status;
  bool ok = false;  // what the completion queue said of this tag
};

// A retry waiting on the client's completion queue: `again` runs when it
// is due, never when the client shuts down first.
struct RetryAlarm final : PendingCall {
  grpc::Alarm alarm;
  std::function<void()> again;
  void Cancel() override { alarm.Cancel(); }
  void Done() override {
    if (ok) again();
    delete this;
  }
};

// Asynchronous calls use gRPC's completion-queue API with one poller thread
// per Client, however many calls are in flight. (gRPC 1.51's callback client
// crashed in its own "nexting" threads when channels came and went.)
struct Client::Impl {
  std::string socket_path;
  ClientOptions options;
  // Kept connections to the daemon's framed socket, asked before gRPC.
  std::unique_ptr<FramedChannel> hits;
  // gRPC (its threads, its channel) is started on first use: a process
  // whose every answer is a hit on the framed socket never starts it.
  mutable absl::once_flag stub_once;
  mutable std::unique_ptr<v1::JitCache::Stub> stub_;
  v1::JitCache::Stub* stub() const {
    absl::call_once(stub_once, [this] {
      stub_ = v1::JitCache::NewStub(MakeDaemonChannel(socket_path));
    });
    return stub_.get();
  }
  absl::once_flag cq_once;
  std::unique_ptr<grpc::CompletionQueue> cq_;
  grpc::CompletionQueue* cq() {
    absl::call_once(
        cq_once, [this] { cq_ = std::make_unique<grpc::CompletionQueue>(); });
    return cq_.get();
  }
  absl::Mutex mu;
  std::thread poller ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<PendingCall*> in_flight ABSL_GUARDED_BY(mu);
  bool shutting_down ABSL_GUARDED_BY(mu) = false;
  // Whether a compile of this process has had an answer from the daemon:
  // then a refused connection is most likely a restart, worth waiting for.
  std::atomic<bool> reached{false};
  // The daemon's toolkit (include directories, fingerprint), asked once,
  // at the first compile.
  std::shared_ptr<const internal::Toolkit> toolkit ABSL_GUARDED_BY(mu);

  // Every call has a deadline. (Who is asking, the daemon learns from the
  // kernel, not from the call.)
  absl::Time Prepare(grpc::ClientContext& context, absl::Duration d) const {
    const absl::Time deadline = absl::Now() + d;
    context.set_deadline(absl::ToChronoTime(deadline));
    return deadline;
  }

  // A blocking call with a deadline of `d`, asked again while the daemon
  // restarts (within `d`); errors become absl::Status.
  template <typename Request, typename Response>
  absl::Status Call(absl::Duration d,
                    grpc::Status (v1::JitCache::Stub::*method)(
                        grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response) const {
    grpc::ClientContext context;
    const absl::Time deadline = Prepare(context, d);
    grpc::Status first = (stub()->*method)(&context, request, response);
    grpc::Status status =
        AskThroughRestarts(std::move(first), reached, deadline, [&] {
          grpc::ClientContext retry;
          retry.set_deadline(absl::ToChronoTime(deadline));
          response->Clear();
          return (stub()->*method)(&retry, request, response);
        });
    return FromGrpc(status, socket_path);
  }

  absl::StatusOr<std::shared_ptr<const internal::Toolkit>> AskToolkit() {
    {
      absl::MutexLock lock(&mu);
      if (toolkit != nullptr) return toolkit;
    }
    // The framed socket answers it without gRPC (a fresh process that only
    // hits never starts a gRPC connection); a daemon without one, over
    // gRPC. Part of a compile: it waits for a restarting daemon as long
    // as the compile would.
    v1::PingResponse pong;
    std::string buffer;
    std::optional<std::string_view> answer =
        hits->Ask(std::string_view(&framed_protocol::kToolkit, 1), buffer);
    if (answer.has_value() &&
        pong.ParseFromArray(answer->data(), static_cast<int>(answer->size()))) {
      reached.store(true);
    } else {
      pong.Clear();
      if (absl::Status s =
              Call(std::max(options.ping_deadline, kRestartWait),
                   &v1::JitCache::Stub::Ping, v1::PingRequest(), &pong);
          !s.ok()) {
        return s;
      }
    }
    auto asked = std::make_shared<internal::Toolkit>();
    asked->include_dirs.assign(pong.include_dirs().begin(),
                               pong.include_dirs().end());
    asked->fingerprint = pong.toolchain_fingerprint();
    absl::MutexLock lock(&mu);
    toolkit = std::move(asked);
    return toolkit;
  }

  // The request for a compile, and the files it includes from -I
  // directories of its own (null if none): by their set's digest only,
  // unless `with_contents` puts them in with their bytes.
  struct Prepared {
    v1::CompileRequest request;
    std::shared_ptr<const internal::ScanResult> included;
    std::shared_ptr<const internal::Toolkit> toolkit;  // the scan's
  };
  absl::StatusOr<Prepared> CompileRequest(const Program& program,
                                          const ProgramOptions& options_in,
                                          CodeType target, bool with_contents) {
    Prepared out{CompileRequestFor(program, options_in, target), nullptr,
                 nullptr};
    absl::StatusOr<std::shared_ptr<const internal::Toolkit>> asked =
        AskToolkit();
    if (!asked.ok()) return asked.status();
    out.toolkit = *std::move(asked);
    absl::StatusOr<std::shared_ptr<const internal::ScanResult>> included =
        internal::ResolveIncludes(*out.toolkit, &out.request);
    if (!included.ok()) return included.status();
    out.included = *std::move(included);
    if (with_contents && out.included != nullptr) {
      if (absl::Status s =
              internal::AttachIncludedFiles(*out.included, &out.request);
          !s.ok()) {
        return s;
      }
    }
    return out;
  }

  // A compile's hit from the framed socket (recording what was asked in
  // `asked`, when given); nullopt for anything else.
  std::optional<ObjectCode> FramedHit(const Prepared& made,
                                      const Program& program, CodeType target,
                                      internal::AskedCompile* asked);
  // The compile over gRPC: a miss waits for its compile; the included
  // files' bytes are sent when the daemon asks for them.
  absl::StatusOr<ObjectCode> CompileOverGrpc(
      Prepared& made, const Program& program,
      const ProgramOptions& program_options, CodeType target);

  // Asks the framed socket for every outcome of a precompile, a batch at a
  // time; fills those that hit and says which.
  std::vector<bool> AnswerHitsAtOnce(
      const std::vector<Client::PrecompileItem>& items,
      std::vector<Client::PrecompileOutcome>& outcomes) {
    std::vector<bool> answered(outcomes.size(), false);
    std::string buffer;
    size_t first = 0;
    while (first < outcomes.size()) {
      // One batch: at most kMaxBatchRequests, and about 16 MiB of requests.
      v1::HitBatchRequest batch;
      std::vector<size_t> asked;
      size_t bytes = 0;
      size_t i = first;
      for (; i < outcomes.size() &&
             asked.size() <
                 static_cast<size_t>(framed_protocol::kMaxBatchRequests) &&
             bytes < (size_t{16} << 20);
           ++i) {
        const Client::PrecompileItem& item = items[outcomes[i].item];
        absl::StatusOr<Prepared> made = CompileRequest(
            item.program, ForArch(item, outcomes[i].arch), item.target, false);
        if (!made.ok()) continue;  // its own compile says why
        bytes += made->request.ByteSizeLong();
        *batch.add_requests() = std::move(made->request);
        asked.push_back(i);
      }
      first = i;
      if (asked.empty()) continue;
      std::string payload(1, framed_protocol::kBatch);
      batch.AppendToString(&payload);
      v1::HitBatchResponse answers;
      std::optional<std::string_view> got =
          hits->Ask(payload, buffer, std::chrono::seconds(30));
      if (!got.has_value() ||
          !answers.ParseFromArray(got->data(), static_cast<int>(got->size())) ||
          answers.responses_size() != static_cast<int>(asked.size())) {
        continue;  // each is asked on its own
      }
      reached.store(true);
      for (size_t k = 0; k < asked.size(); ++k) {
        v1::CompileResponse& response = *answers.mutable_responses(k);
        if (response.served() == v1::SERVED_UNSPECIFIED) continue;
        const size_t at = asked[k];
        const Client::PrecompileItem& item = items[outcomes[at].item];
        outcomes[at].code =
            ToObjectCode(response, item.target, item.program.name());
        answered[at] = true;
      }
    }
    return answered;
  }

  // Registers an asynchronous call; the first one starts the poller, so a
  // program that only makes blocking calls never pays for the thread.
  void Track(PendingCall* call) {
    absl::MutexLock lock(&mu);
    if (!poller.joinable()) poller = std::thread([this] { Poll(); });
    in_flight.insert(call);
  }

  // One attempt of an asynchronous compile; a daemon that is restarting is
  // asked again later (as a blocking compile would), from the poller.
  void StartCompile(std::shared_ptr<const v1::CompileRequest> request,
                    std::shared_ptr<AsyncResult<ObjectCode>::State> state,
                    Program program, ProgramOptions program_options,
                    CodeType target, absl::Time deadline,
                    absl::Time restart_wait_ends, int attempt);

  // Calls `again` after `delay` on the poller, unless the client is
  // shutting down (then false, and `again` is never called).
  bool RetryLater(absl::Duration delay, std::function<void()> again) {
    auto* retry = new RetryAlarm();
    retry->again = std::move(again);
    absl::MutexLock lock(&mu);
    if (shutting_down) {
      delete retry;
      return false;
    }
    in_flight.insert(retry);
    retry->alarm.Set(cq(), absl::ToChronoTime(absl::Now() + delay), retry);
    return true;
  }

  void Poll() {
    void* tag = nullptr;
    bool ok = false;
    while (cq()->Next(&tag, &ok)) {
      auto* call = static_cast<PendingCall*>(tag);
      {
        absl::MutexLock lock(&mu);
        in_flight.erase(call);
      }
      call->ok = ok;
      call->Done();  // deletes the call
    }
  }

  ~Impl() {
    {
      // Calls still in flight end now (CANCELLED) rather than at their
      // deadline; their handles see the cancellation.
      absl::MutexLock lock(&mu);
      shutting_down = true;
      for (PendingCall* call : in_flight) call->Cancel();
    }
    if (cq_ != nullptr) cq_->Shutdown();
    std::thread done;
    {
      absl::MutexLock lock(&mu);
      done = std::move(poller);
    }
    if (done.joinable()) done.join();
  }
};

// A unary call started on the Client's queue; `finish` turns its response
// or status into the handle's result.
template <typename Response>
struct UnaryCall final : PendingCall {
  Response response;
  std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader;
  std::function<void(UnaryCall&)> finish;
  void Done() override {
    finish(*this);
    delete this;
  }
};

absl::StatusOr<Client> Client::Connect(ClientOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->socket_path = options.socket_path.empty() ? DefaultClientSocketPath()
                                                  : options.socket_path;
  impl->options = std::move(options);
  if (const char* off = std::getenv("JITCACHE_NO_FALLBACK");
      off != nullptr && *off != '\0' && std::string(off) != "0") {
    impl->options.local_fallback = false;
  }
  impl->hits = std::make_unique<FramedChannel>(impl->socket_path);
  return Client(std::move(impl));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

const std::string& Client::socket_path() const { return impl_->socket_path; }

absl::StatusOr<DaemonInfo> Client::Ping() const {
  v1::PingResponse response;
  if (absl::Status s =
          impl_->Call(impl_->options.ping_deadline, &v1::JitCache::Stub::Ping,
                      v1::PingRequest(), &response);
      !s.ok()) {
    return s;
  }
  DaemonInfo info;
  info.daemon_version = response.daemon_version();
  info.toolchain = response.toolchain();
  info.toolchain_fingerprint = response.toolchain_fingerprint();
  info.key_schema_version = response.key_schema_version();
  info.supported_archs.assign(response.supported_archs().begin(),
                              response.supported_archs().end());
  info.store_path = response.store_path();
  // `jitcache ping` lists both: the libraries and the ptxas binaries.
  for (const auto* list : {&response.libraries(), &response.ptxas()}) {
    for (const v1::ToolkitLibrary& lib : *list) {
      info.libraries.push_back(LibraryFrom(lib));
    }
  }
  return info;
}

absl::StatusOr<DaemonStats> Client::Stats(bool zero) const {
  v1::StatsResponse r;
  v1::StatsRequest request;
  request.set_zero(zero);
  if (absl::Status s = impl_->Call(impl_->options.ping_deadline,
                                   &v1::JitCache::Stub::GetStats, request, &r);
      !s.ok()) {
    return s;
  }
  return DaemonStatsFrom(r);
}

absl::StatusOr<ObjectCode> Client::Compile(const Program& program,
                                           const ProgramOptions& options,
                                           CodeType target) const {
  return CompileRecorded(program, options, target, /*asked=*/nullptr);
}

absl::StatusOr<ObjectCode> Client::CompileRecorded(
    const Program& program, const ProgramOptions& options, CodeType target,
    internal::AskedCompile* asked) const {
  // Blocking on the calling thread: a hit costs no hand-off to the poller.
  // Included files go by digest; their bytes only when the daemon misses.
  absl::StatusOr<Impl::Prepared> made =
      impl_->CompileRequest(program, options, target, false);
  if (!made.ok()) {
    if (impl_->options.local_fallback && absl::IsUnavailable(made.status())) {
      return internal::CompileLocally(program, options, target);
    }
    return made.status();
  }
  if (std::optional<ObjectCode> hit =
          impl_->FramedHit(*made, program, target, asked)) {
    return *std::move(hit);
  }
  return impl_->CompileOverGrpc(*made, program, options, target);
}

std::optional<ObjectCode> Client::Impl::FramedHit(
    const Prepared& made, const Program& program, CodeType target,
    internal::AskedCompile* asked) {
  // One framed exchange, where a gRPC call costs HTTP/2 framing, thread
  // hand-offs and copies. A large hit comes as the daemon's sealed answer
  // file (kHitShared), mapped: the object is never copied, whatever its
  // size. The buffers are the thread's: a warm one costs no allocation.
  thread_local std::string request_bytes;
  thread_local std::string answer_buffer;
  request_bytes.assign(1, framed_protocol::kHitShared);
  made.request.AppendToString(&request_bytes);
  if (asked != nullptr) {
    asked->request = request_bytes.substr(1);
    asked->toolkit_fingerprint = made.toolkit->fingerprint;
    asked->depends_on =
        made.included != nullptr ? made.included->depends_on : nullptr;
    asked->included = made.included;
  }
  MappedAnswer mapped(/*populate=*/false);  // the driver reads it, later
  std::optional<std::string_view> hit =
      hits->Ask(request_bytes, answer_buffer, std::chrono::milliseconds(500),
                nullptr, &mapped);
  if (!hit.has_value()) return std::nullopt;
  if (!mapped.empty()) {
    std::optional<ObjectCode> code = internal::ObjectCodeFromMapped(
        std::move(mapped), target, program.name());
    if (code.has_value()) reached.store(true);
    return code;
  }
  v1::CompileResponse response;
  if (!response.ParseFromArray(hit->data(), static_cast<int>(hit->size()))) {
    return std::nullopt;
  }
  reached.store(true);
  return ToObjectCode(response, target, program.name());
}

absl::StatusOr<ObjectCode> Client::Impl::CompileOverGrpc(
    Prepared& made, const Program& program,
    const ProgramOptions& program_options, CodeType target) {
  // A miss, an error or no framed socket: gRPC answers it (and says why).
  v1::CompileRequest& request = made.request;
  v1::CompileResponse response;
  grpc::ClientContext context;
  const absl::Time deadline = Prepare(context, options.compile_deadline);
  grpc::Status status = stub()->Compile(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND &&
      context.GetServerTrailingMetadata().count(grpc::string_ref(
          kSendIncludedMetadata.data(), kSendIncludedMetadata.size())) > 0) {
    if (absl::Status s =
            internal::AttachIncludedFiles(*made.included, &request);
        !s.ok()) {
      return s;
    }
    grpc::ClientContext with_contents;
    with_contents.set_deadline(absl::ToChronoTime(deadline));
    status = stub()->Compile(&with_contents, request, &response);
  }
  // A daemon that is restarting is asked again, within this call's
  // deadline.
  const absl::Time restart_wait_ends =
      std::min(deadline, absl::Now() + kRestartWait);
  status = AskThroughRestarts(status, reached, restart_wait_ends, [&] {
    grpc::ClientContext retry;
    retry.set_deadline(absl::ToChronoTime(deadline));
    response.Clear();
    return stub()->Compile(&retry, request, &response);
  });
  if (status.ok()) {
    reached.store(true);
    return ToObjectCode(response, target, program.name());
  }
  if (options.local_fallback && DaemonUnreachable(status, deadline)) {
    return internal::CompileLocally(program, program_options, target);
  }
  return FromGrpc(status, socket_path);
}

void Client::Impl::StartCompile(
    std::shared_ptr<const v1::CompileRequest> request,
    std::shared_ptr<AsyncResult<ObjectCode>::State> state, Program program,
    ProgramOptions program_options, CodeType target, absl::Time deadline,
    absl::Time restart_wait_ends, int attempt) {
  Impl* const impl = this;
  auto* call = new UnaryCall<v1::CompileResponse>();
  call->context.set_deadline(absl::ToChronoTime(deadline));
  call->finish = [=](UnaryCall<v1::CompileResponse>& done) {
    if (done.status.ok()) {
      impl->reached.store(true);
      state->result = ToObjectCode(done.response, target, program.name());
      state->done.Notify();
      return;
    }
    // (CANCELLED is also what this client's own shutdown gives its calls:
    // RetryLater refuses then.)
    const absl::Duration backoff = RetryBackoff(attempt);
    if (AskAgain(done.status, impl->reached.load(), attempt,
                 restart_wait_ends) &&
        impl->RetryLater(backoff, [=] {
          impl->StartCompile(request, state, program, program_options, target,
                             deadline, restart_wait_ends, attempt + 1);
        })) {
      return;
    }
    if (impl->options.local_fallback &&
        DaemonUnreachable(done.status, deadline)) {
      // NVRTC takes seconds: not on the poller thread.
      std::thread([state, program, program_options, target] {
        state->result =
            internal::CompileLocally(program, program_options, target);
        state->done.Notify();
      }).detach();
      return;
    }
    state->result = FromGrpc(done.status, impl->socket_path);
    state->done.Notify();
  };
  impl->Track(call);
  call->reader =
      impl->stub()->AsyncCompile(&call->context, *request, impl->cq());
  call->reader->Finish(&call->response, &call->status, call);
}

AsyncResult<ObjectCode> Client::CompileAsync(const Program& program,
                                             const ProgramOptions& options,
                                             CodeType target) const {
  auto state = std::make_shared<AsyncResult<ObjectCode>::State>();
  // Mostly misses (precompiling): included files go with their bytes.
  absl::StatusOr<Impl::Prepared> made =
      impl_->CompileRequest(program, options, target, true);
  if (!made.ok()) {
    if (impl_->options.local_fallback && absl::IsUnavailable(made.status())) {
      state->result = internal::CompileLocally(program, options, target);
    } else {
      state->result = made.status();
    }
    state->done.Notify();
    return AsyncResult<ObjectCode>(std::move(state));
  }
  const absl::Time deadline = absl::Now() + impl_->options.compile_deadline;
  impl_->StartCompile(
      std::make_shared<v1::CompileRequest>(std::move(made->request)), state,
      program, options, target, deadline,
      std::min(deadline, absl::Now() + kRestartWait), 0);
  return AsyncResult<ObjectCode>(std::move(state));
}

std::vector<Client::PrecompileOutcome> Client::Precompile(
    const std::vector<PrecompileItem>& items,
    const std::function<void(size_t, size_t)>& progress) const {
  // A bounded number in flight: enough to keep every daemon worker busy,
  // few enough not to fill the daemon's queue on a large manifest.
  constexpr size_t kInFlight = 64;
  std::vector<PrecompileOutcome> outcomes;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].archs.empty()) {
      outcomes.push_back({i, items[i].options.arch, absl::UnknownError("")});
    }
    for (const std::string& arch : items[i].archs) {
      outcomes.push_back({i, arch, absl::UnknownError("")});
    }
  }
  // Hits first, many to one round trip on the framed socket; only the rest
  // are compiled one call each.
  std::vector<bool> answered = impl_->AnswerHitsAtOnce(items, outcomes);
  size_t done = 0;
  for (bool a : answered) {
    if (!a) continue;
    ++done;
    if (progress) progress(done, outcomes.size());
  }
  std::vector<std::optional<AsyncResult<ObjectCode>>> pending(outcomes.size());
  size_t next = 0;
  std::vector<size_t> in_flight;  // indexes into outcomes
  while (done < outcomes.size()) {
    while (next < outcomes.size() && in_flight.size() < kInFlight) {
      if (answered[next]) {
        ++next;
        continue;
      }
      const PrecompileItem& item = items[outcomes[next].item];
      pending[next] = CompileAsync(
          item.program, ForArch(item, outcomes[next].arch), item.target);
      in_flight.push_back(next++);
    }
    // Collect whatever has finished; wait briefly on the oldest otherwise.
    pending[in_flight.front()]->wait(absl::Milliseconds(20));
    for (auto it = in_flight.begin(); it != in_flight.end();) {
      if (pending[*it]->is_complete()) {
        outcomes[*it].code = pending[*it]->get();
        pending[*it].reset();
        ++done;
        if (progress) progress(done, outcomes.size());
        it = in_flight.erase(it);
      } else {
        ++it;
      }
    }
  }
  return outcomes;
}

absl::StatusOr<std::vector<std::string>> Client::FindMissingObjects(
    const std::vector<std::string>& digests) const {
  v1::FindMissingObjectsRequest request;
  for (const auto& d : digests) request.add_digests(d);
  v1::FindMissingObjectsResponse response;
  if (absl::Status s = impl_->Call(impl_->options.compile_deadline,
                                   &v1::JitCache::Stub::FindMissingObjects,
                                   request, &response);
      !s.ok()) {
    return s;
  }
  return std::vector<std::string>(response.missing().begin(),
                                  response.missing().end());
}

absl::Status Client::UploadObject(const std::string& digest, CodeType kind,
                                  const std::string& bytes) const {
  v1::UploadObjectRequest request;
  request.set_digest(digest);
  request.set_kind(ToWireKind(ToObjectKind(kind)));
  request.set_data(bytes);
  v1::UploadObjectResponse response;
  return impl_->Call(impl_->options.compile_deadline,
                     &v1::JitCache::Stub::UploadObject, request, &response);
}

absl::StatusOr<ObjectCode> Client::FetchObject(
    const std::string& digest) const {
  v1::FetchObjectRequest request;
  request.set_digest(digest);
  v1::FetchObjectResponse response;
  if (absl::Status s =
          impl_->Call(impl_->options.compile_deadline,
                      &v1::JitCache::Stub::FetchObject, request, &response);
      !s.ok()) {
    return s;
  }
  const std::optional<ObjectKind> kind = FromWireKind(response.kind());
  if (!kind.has_value()) {
    return absl::DataLossError(
        absl::StrCat("object ", digest, " came back with an unknown kind (",
                     static_cast<int>(response.kind()), ")"));
  }
  ObjectCode code;
  code.compiled = true;
  code.bytes = std::move(*response.mutable_data());
  code.code_type = ToCodeType(*kind);
  code.object_digest = digest;
  code.served = Served::kHit;
  return code;
}

absl::StatusOr<ObjectCode> Client::Link(const std::vector<LinkInput>& inputs,
                                        const std::vector<std::string>& options,
                                        CodeType target) const {
  return LinkAsync(inputs, options, target).get();
}

AsyncResult<ObjectCode> Client::LinkAsync(
    const std::vector<LinkInput>& inputs,
    const std::vector<std::string>& options, CodeType target) const {
  v1::LinkRequest request;
  for (const LinkInput& input : inputs) {
    v1::LinkInput* in = request.add_inputs();
    in->set_kind(ToWireKind(ToObjectKind(input.kind)));
    in->set_name(input.name);
    if (!input.digest.empty()) {
      in->set_digest(input.digest);
    } else {
      in->set_data(input.bytes);
    }
  }
  for (const auto& o : options) request.add_options(o);
  request.set_target(ToWireTarget(ToObjectKind(target)));

  auto state = std::make_shared<AsyncResult<ObjectCode>::State>();
  auto* call = new UnaryCall<v1::CompileResponse>();
  call->finish = [state, target, socket = impl_->socket_path](
                     UnaryCall<v1::CompileResponse>& done) {
    state->result = done.status.ok() ? absl::StatusOr<ObjectCode>(ToObjectCode(
                                           done.response, target, "link"))
                                     : FromGrpc(done.status, socket);
    state->done.Notify();
  };
  impl_->Prepare(call->context, impl_->options.compile_deadline);
  impl_->Track(call);
  call->reader = impl_->stub()->AsyncLink(&call->context, request, impl_->cq());
  call->reader->Finish(&call->response, &call->status, call);
  return AsyncResult<ObjectCode>(std::move(state));
}

absl::StatusOr<Client::LinkTrace> Client::LinkAsCalled(
    const std::vector<LinkInput>& inputs,
    const std::vector<std::string>& options, bool steps_only,
    bool send_bytes) const {
  const auto request_with = [&](bool bytes) {
    v1::LinkRequest request;
    request.set_as_called(true);
    request.set_steps_only(steps_only);
    for (const LinkInput& input : inputs) {
      v1::LinkInput* in = request.add_inputs();
      in->set_kind(ToWireKind(ToObjectKind(input.kind)));
      in->set_name(input.name);
      if (bytes && !steps_only) {
        in->set_data(input.bytes);
      } else {
        in->set_digest(input.digest);
      }
    }
    for (const std::string& o : options) request.add_options(o);
    return request;
  };
  v1::CompileResponse response;
  absl::Status s =
      impl_->Call(impl_->options.compile_deadline, &v1::JitCache::Stub::Link,
                  request_with(send_bytes), &response);
  if (absl::IsNotFound(s) && !steps_only && !send_bytes) {
    // The daemon lacks an input: asked again with the inputs' bytes
    // (CacheEngine::FindMissingInputs's way, on either door).
    s = impl_->Call(impl_->options.compile_deadline, &v1::JitCache::Stub::Link,
                    request_with(true), &response);
  }
  if (!s.ok()) return s;
  if (!response.has_link_trace()) {
    return absl::InternalError("the daemon answered a link without its trace");
  }
  const v1::NvJitLinkTrace& t = response.link_trace();
  LinkTrace trace;
  trace.handle_created = t.handle_created();
  for (const v1::NvJitLinkStep& step : t.steps()) {
    trace.steps.push_back({step.result(), step.logs().error_size_result(),
                           step.logs().error_log(),
                           step.logs().info_size_result(),
                           step.logs().info_log()});
  }
  trace.complete = t.complete();
  trace.cubin_size_result = t.cubin_size_result();
  trace.cubin_result = t.cubin_result();
  trace.ptx_size_result = t.ptx_size_result();
  trace.ptx_result = t.ptx_result();
  trace.ptx = t.ptx();
  trace.cubin = std::move(*response.mutable_object());
  trace.hit = response.served() == v1::SERVED_HIT;
  return trace;
}

}  // namespace jitcache
