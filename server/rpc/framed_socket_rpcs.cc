// The framed socket's requests (common/framed_protocol.h), answered by the same
// validation, keys and hot answers as the gRPC path.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/framed_protocol.h"
#include "common/log.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "server/rpc/jitcache_service.h"

namespace jitcache {

namespace {

// Why a request is refused, as the framed socket says it (FramedRefusal):
// the caller (libnvrtc.so.13, jitcache-ptxas, libnvJitLink.so.13,
// libnvvm.so.4) cannot ask gRPC, so the code and message the gRPC path
// would give come with it.
std::shared_ptr<const std::string> RefusalOf(const absl::Status& status) {
  v1::FramedRefusal refusal;
  refusal.set_code(static_cast<int>(status.code()));
  refusal.set_message(std::string(status.message()));
  return std::make_shared<const std::string>(refusal.SerializeAsString());
}

KeptConnection::Reply Refuse(const absl::Status& status) {
  return {RefusalOf(status), nullptr, /*refused=*/true};
}

absl::Status NotWellFormed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("the request is not a well-formed ", what));
}

}  // namespace

std::shared_ptr<const HotAnswer> JitCacheService::AnswerOne(
    const v1::CompileRequest& request, const PeerCredentials& peer,
    absl::Time start) {
  absl::StatusOr<PreparedCompile> prepared =
      PrepareCompile(request, options_.compiler->toolchain(), options_.limits);
  if (!prepared.ok()) return nullptr;
  KeyLevel level = KeyLevel::kPlaceFree;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      kinds_.CompileHit(*prepared, &level);
  if (!hit.ok() || *hit == nullptr) return nullptr;
  CountHit(CountRequest(peer.uid), **hit, start);
  ++counters_.socket_hits;
  JITCACHE_LOG(Debug) << "hit " << ActionKinds::KeyAt(*prepared, level).Hex()
                      << " uid " << peer.uid << " (framed socket)";
  return *std::move(hit);
}

std::shared_ptr<const std::string> JitCacheService::AnswerBatch(
    absl::string_view batch_bytes, const PeerCredentials& peer) {
  v1::HitBatchRequest batch;
  if (!batch.ParseFromArray(batch_bytes.data(),
                            static_cast<int>(batch_bytes.size())) ||
      batch.requests_size() > framed_protocol::kMaxBatchRequests) {
    return nullptr;
  }
  ++counters_.socket_batches;
  std::vector<std::shared_ptr<const HotAnswer>> answers;
  answers.reserve(batch.requests_size());
  size_t total = 0;
  for (const v1::CompileRequest& request : batch.requests()) {
    std::shared_ptr<const HotAnswer> hit;
    if (total < framed_protocol::kMaxBatchAnswerBytes) {
      hit = AnswerOne(request, peer, absl::Now());
      if (hit != nullptr) total += hit->serialized.size();
    }
    answers.push_back(std::move(hit));
  }
  // Each answer's bytes as one element of HitBatchResponse.responses,
  // written without parsing them again; an empty one (served unspecified)
  // is not a hit.
  auto out = std::make_shared<std::string>();
  out->reserve(total + 16 * answers.size());
  {
    google::protobuf::io::StringOutputStream stream(out.get());
    google::protobuf::io::CodedOutputStream coded(&stream);
    const std::string none;
    for (const std::shared_ptr<const HotAnswer>& hit : answers) {
      google::protobuf::internal::WireFormatLite::WriteBytes(
          v1::HitBatchResponse::kResponsesFieldNumber,
          hit == nullptr ? none : hit->serialized, &coded);
    }
  }
  return out;
}

KeptConnection::Reply JitCacheService::AnswerPtxas(
    absl::string_view bytes, const PeerCredentials& peer) {
  const absl::Time start = absl::Now();
  v1::PtxasRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Refuse(NotWellFormed("PtxasRequest"));
  }
  ++counters_.ptxas_requests;
  UserStats::Counters& user = CountRequest(peer.uid);
  absl::StatusOr<PreparedPtxas> prepared =
      PreparePtxas(request, options_.compiler->toolchain(), options_.limits);
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      prepared.ok()
          ? kinds_.PtxasHit(*prepared)
          : absl::StatusOr<std::shared_ptr<const HotAnswer>>(prepared.status());
  if (std::optional<KeptConnection::Reply> now =
          AnswerNow(hit, user, peer.uid, start, "ptxas run")) {
    return *std::move(now);
  }
  // The promise is made once this has returned: it owns what it needs.
  return {nullptr,
          [this, request = std::move(request), prepared = *std::move(prepared),
           uid = peer.uid, user = &user, start](AnswerLater later) {
            engine_.Join(uid, *user, prepared.key,
                         AnswerWhenBuilt(std::move(later), *user, start),
                         [&] { return kinds_.PtxasAction(request, prepared); });
          }};
}

KeptConnection::Reply JitCacheService::AnswerCompile(
    absl::string_view bytes, const PeerCredentials& peer, bool shared) {
  const absl::Time start = absl::Now();
  auto request = std::make_shared<v1::CompileRequest>();
  if (!request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Refuse(NotWellFormed("CompileRequest"));
  }
  UserStats::Counters& user = CountRequest(peer.uid);
  absl::StatusOr<PreparedCompile> prepared =
      PrepareCompile(*request, options_.compiler->toolchain(), options_.limits);
  auto call = std::make_shared<CompileCall>();
  KeyLevel level = KeyLevel::kPlaceFree;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit;
  if (prepared.ok()) {
    call->owned = request;
    call->request = request.get();
    call->prepared = *std::move(prepared);
    hit = kinds_.CompileHit(call->prepared, &level);
  } else {
    hit = prepared.status();
  }
  if (std::optional<KeptConnection::Reply> now =
          AnswerNow(hit, user, peer.uid, start, "compile", shared)) {
    return *std::move(now);
  }
  if (request->includes_resolved() && !FindIncludedFiles(*call)) {
    return Refuse(SendIncludedFiles());
  }
  return {nullptr, [this, call, level, uid = peer.uid, user = &user,
                    start](AnswerLater later) {
            PromiseCompile(call, level, std::move(later), uid, *user, start);
          }};
}

void JitCacheService::PromiseCompile(std::shared_ptr<CompileCall> call,
                                     KeyLevel level, AnswerLater later,
                                     uid_t uid, UserStats::Counters& user,
                                     absl::Time start) {
  CacheEngine::Waiter answer = AnswerWhenBuilt(later, user, start);
  if (level == KeyLevel::kPlaceFree) {
    answer = [this, call, later, uid, user = &user, start,
              built = std::move(answer)](const SharedResult& result,
                                         bool is_leader) {
      if (result.ok() &&
          ActionKinds::AnsweredForAnotherPlace(**result, call->prepared)) {
        PromiseUnderPlace(call, later, uid, *user, start);
        return;
      }
      built(result, is_leader);
    };
  }
  engine_.Join(
      uid, user, ActionKinds::KeyAt(call->prepared, level), std::move(answer),
      [&] {
        return kinds_.CompileAction(*call->request, call->prepared, call->kept,
                                    level);
      },
      call->prepared.program_name);
}

void JitCacheService::PromiseUnderPlace(std::shared_ptr<CompileCall> call,
                                        AnswerLater later, uid_t uid,
                                        UserStats::Counters& user,
                                        absl::Time start) {
  KeyLevel level;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      kinds_.CompileHitForOwnPlace(call->prepared, &level);
  if (hit.ok() && *hit == nullptr && call->request->includes_resolved() &&
      !FindIncludedFiles(*call)) {
    hit = SendIncludedFiles();
  }
  if (!hit.ok()) {
    // NOT_FOUND asks for the files, as AnswerCompile does: not a rejection.
    if (!absl::IsNotFound(hit.status())) {
      counters_.Rejected(hit.status().code());
      ++user.rejected;
    }
    later(RefusalOf(hit.status()), /*refused=*/true);
    return;
  }
  if (*hit != nullptr) {
    CountHit(user, **hit, start);
    ++counters_.socket_hits;
    later(std::shared_ptr<const std::string>(*hit, &(*hit)->serialized));
    return;
  }
  engine_.Join(
      uid, user, ActionKinds::KeyAt(call->prepared, level),
      AnswerWhenBuilt(std::move(later), user, start),
      [&] {
        return kinds_.CompileAction(*call->request, call->prepared, call->kept,
                                    level);
      },
      call->prepared.program_name);
}

KeptConnection::Reply JitCacheService::AnswerNvvm(absl::string_view bytes,
                                                  const PeerCredentials& peer) {
  const absl::Time start = absl::Now();
  v1::NvvmRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Refuse(NotWellFormed("NvvmRequest"));
  }
  ++counters_.nvvm_requests;
  UserStats::Counters& user = CountRequest(peer.uid);
  absl::StatusOr<PreparedNvvm> prepared =
      PrepareNvvm(request, options_.compiler->toolchain(), options_.limits);
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      prepared.ok()
          ? engine_.HitAnswer(prepared->key)
          : absl::StatusOr<std::shared_ptr<const HotAnswer>>(prepared.status());
  if (std::optional<KeptConnection::Reply> now =
          AnswerNow(hit, user, peer.uid, start, "libNVVM compile")) {
    return *std::move(now);
  }
  // A miss asked by digests alone: the caller sends the modules and asks
  // again (CacheEngine::FindMissingInputs's way).
  if (!request.with_modules()) {
    return Refuse(absl::NotFoundError(
        "the daemon lacks the modules: send them with the request"));
  }
  return {nullptr,
          [this, request = std::move(request), prepared = *std::move(prepared),
           uid = peer.uid, user = &user, start](AnswerLater later) {
            engine_.Join(uid, *user, prepared.key,
                         AnswerWhenBuilt(std::move(later), *user, start),
                         [&] { return kinds_.NvvmAction(request, prepared); });
          }};
}

std::optional<KeptConnection::Reply> JitCacheService::AnswerNow(
    const absl::StatusOr<std::shared_ptr<const HotAnswer>>& hit,
    UserStats::Counters& user, uid_t uid, absl::Time start,
    absl::string_view what, bool shared) {
  if (!hit.ok()) {
    // The caller runs its own tool, told why.
    counters_.Rejected(hit.status().code());
    ++user.rejected;
    JITCACHE_LOG(Debug) << what << " of uid " << uid
                        << " refused (framed socket): " << hit.status();
    return Refuse(hit.status());
  }
  if (*hit == nullptr) return std::nullopt;
  CountHit(user, **hit, start);
  ++counters_.socket_hits;
  return HitReply(*hit, shared);
}

KeptConnection::Reply JitCacheService::HitReply(
    const std::shared_ptr<const HotAnswer>& hit, bool shared) {
  // Shares the answer's ownership; points at its bytes.
  std::shared_ptr<const std::string> bytes(hit, &hit->serialized);
  if (!shared || options_.shared_answer_size == 0 ||
      hit->serialized.size() < options_.shared_answer_size) {
    return {std::move(bytes)};
  }
  // At most as many bytes in sealed files as the hot answers hold.
  std::shared_ptr<const SealedFile> file =
      hit->SharedFile(options_.hot_cache_size);
  if (file == nullptr) return {std::move(bytes)};
  ++counters_.shared_answers;
  // The bytes too, for a connection that cannot take a descriptor now.
  return {std::move(bytes), nullptr, false, file->fd(), file};
}

CacheEngine::Waiter JitCacheService::AnswerWhenBuilt(AnswerLater later,
                                                     UserStats::Counters& user,
                                                     absl::Time start) {
  return [this, later = std::move(later), user = &user, start](
             const SharedResult& result, bool is_leader) {
    if (!result.ok()) {
      counters_.Rejected(result.status().code());
      ++user->rejected;
      later(RefusalOf(result.status()), /*refused=*/true);
      return;
    }
    v1::CompileResponse response = **result;
    response.set_served(is_leader ? v1::SERVED_MISS : v1::SERVED_JOINED);
    CountBuilt(*user, response, start);
    later(std::make_shared<const std::string>(response.SerializeAsString()));
  };
}

KeptConnection::Reply JitCacheService::AnswerLink(absl::string_view bytes,
                                                  const PeerCredentials& peer) {
  const absl::Time start = absl::Now();
  v1::LinkRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Refuse(NotWellFormed("LinkRequest"));
  }
  ++counters_.link_requests;
  UserStats::Counters& user = CountRequest(peer.uid);
  // Only nvJitLink's calls as a caller made them come this way; a link of
  // libjitcache's Linker is asked over gRPC.
  absl::StatusOr<PreparedLink> prepared =
      request.as_called() ? PrepareLink(request, options_.compiler->toolchain(),
                                        options_.limits)
                          : absl::InvalidArgumentError(
                                "the framed socket links only as called");
  bool named = false;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      prepared.ok()
          ? kinds_.LinkHit(*prepared, &named)
          : absl::StatusOr<std::shared_ptr<const HotAnswer>>(prepared.status());
  if (request.disproves()) {
    // Answered at once; the link runs again in the background.
    if (hit.ok() && *hit != nullptr && !prepared->steps_only) {
      auto link = std::make_shared<const PreparedLink>(*std::move(prepared));
      engine_.CheckDisproof(
          peer.uid, ActionKinds::LinkKeyAt(*link, named),
          named ? link->named_step_keys : link->step_keys,
          [this, link](absl::Time deadline) {
            return kinds_.RunLink(*link, deadline);
          },
          *std::move(hit));
    }
    return {};
  }
  if (hit.ok() && *hit == nullptr) {
    if (engine_.ReadsCallersFiles(ActionKinds::LinkKeyAt(*prepared, named))) {
      hit = absl::FailedPreconditionError(kReadsCallersFiles);
    } else if (prepared->steps_only) {
      // Only what an earlier link recorded: never a link of its own.
      hit = absl::NotFoundError("no link recorded these steps");
    } else if (absl::Status have =
                   engine_.FindMissingInputs(NeededInputsOf(*prepared));
               !have.ok()) {
      hit = have;  // the caller sends them and asks again
    }
  }
  if (std::optional<KeptConnection::Reply> now =
          AnswerNow(hit, user, peer.uid, start, "link")) {
    return *std::move(now);
  }
  return {
      nullptr,
      [this, link = std::make_shared<const PreparedLink>(*std::move(prepared)),
       named, uid = peer.uid, user = &user, start](AnswerLater later) {
        engine_.Join(uid, *user, ActionKinds::LinkKeyAt(*link, named),
                     LinkAnswerWhenBuilt(link, named, std::move(later), uid,
                                         *user, start),
                     [&] { return kinds_.LinkAction(link, named); });
      }};
}

CacheEngine::Waiter JitCacheService::LinkAnswerWhenBuilt(
    std::shared_ptr<const PreparedLink> link, bool named, AnswerLater later,
    uid_t uid, UserStats::Counters& user, absl::Time start) {
  if (named || !link->named_key.has_value()) {
    return AnswerWhenBuilt(std::move(later), user, start);
  }
  return [this, link, later = std::move(later), uid, user = &user, start](
             const SharedResult& result, bool is_leader) {
    if (result.ok() && (*result)->place_matters() &&
        (*result)->cache_key() != link->named_key->Hex()) {
      // The answer showed the leader's names: this caller's own names
      // are keyed apart, and built there.
      engine_.Join(uid, *user, *link->named_key,
                   AnswerWhenBuilt(later, *user, start),
                   [&] { return kinds_.LinkAction(link, /*named=*/true); });
      return;
    }
    AnswerWhenBuilt(later, *user, start)(result, is_leader);
  };
}

KeptConnection::Reply JitCacheService::AnswerFramed(
    absl::string_view payload, const PeerCredentials& peer) {
  if (!payload.empty() && payload.front() == framed_protocol::kToolkit) {
    return {payload.size() == 1 ? toolkit_answer_ : nullptr};
  }
  if (!payload.empty() && payload.front() == framed_protocol::kBatch) {
    return {AnswerBatch(payload.substr(1), peer)};
  }
  if (!payload.empty() && payload.front() == framed_protocol::kPtxas) {
    return AnswerPtxas(payload.substr(1), peer);
  }
  if (!payload.empty() && payload.front() == framed_protocol::kLink) {
    return AnswerLink(payload.substr(1), peer);
  }
  if (!payload.empty() && payload.front() == framed_protocol::kNvvm) {
    return AnswerNvvm(payload.substr(1), peer);
  }
  if (!payload.empty() && payload.front() == framed_protocol::kCompile) {
    return AnswerCompile(payload.substr(1), peer, /*shared=*/false);
  }
  if (!payload.empty() && payload.front() == framed_protocol::kCompileShared) {
    return AnswerCompile(payload.substr(1), peer, /*shared=*/true);
  }
  // A bare CompileRequest, or kHitShared and one: a hit, or nothing.
  const bool shared =
      !payload.empty() && payload.front() == framed_protocol::kHitShared;
  if (shared) payload.remove_prefix(1);
  const absl::Time start = absl::Now();
  v1::CompileRequest request;
  if (!request.ParseFromArray(payload.data(),
                              static_cast<int>(payload.size()))) {
    return {};
  }
  std::shared_ptr<const HotAnswer> hit = AnswerOne(request, peer, start);
  if (hit == nullptr) return {};
  return HitReply(hit, shared);
}

}  // namespace jitcache
