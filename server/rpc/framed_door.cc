// The framed socket's door (common/framed_protocol.h): each request decoded,
// handed to its kind's conversation, and its answer encoded.
#include "server/rpc/framed_door.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/framed_protocol.h"
#include "common/log.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "server/engine/compile_request.h"

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

// A request's message parsed from `bytes`, shared (a miss's conversation
// keeps it); null when they are not one.
template <typename Request>
std::shared_ptr<const Request> Parsed(absl::string_view bytes) {
  auto request = std::make_shared<Request>();
  if (!request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return nullptr;
  }
  return request;
}

absl::Status NotWellFormed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("the request is not a well-formed ", what));
}

}  // namespace

std::shared_ptr<const HotAnswer> FramedDoor::AnswerOne(
    const v1::CompileRequest& request, const PeerCredentials& peer,
    absl::Time start) {
  absl::StatusOr<PreparedCompile> prepared =
      PrepareCompile(request, *options_.toolchain, options_.limits);
  if (!prepared.ok()) return nullptr;
  ActionKinds::KeyLevel level = ActionKinds::KeyLevel::kPlaceFree;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      kinds_->CompileHit(*prepared, &level);
  if (!hit.ok() || *hit == nullptr) return nullptr;
  counting_->Hit(counting_->Request(peer.uid), **hit, start);
  ++counters_->socket_hits;
  JITCACHE_LOG(Debug) << "hit " << ActionKinds::KeyAt(*prepared, level).Hex()
                      << " uid " << peer.uid << " (framed socket)";
  return *std::move(hit);
}

std::shared_ptr<const std::string> FramedDoor::AnswerBatch(
    absl::string_view batch_bytes, const PeerCredentials& peer) {
  v1::HitBatchRequest batch;
  if (!batch.ParseFromArray(batch_bytes.data(),
                            static_cast<int>(batch_bytes.size())) ||
      batch.requests_size() > framed_protocol::kMaxBatchRequests) {
    return nullptr;
  }
  ++counters_->socket_batches;
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

KeptConnection::Reply FramedDoor::AnswerPtxas(absl::string_view bytes,
                                              const PeerCredentials& peer) {
  const absl::Time start = absl::Now();
  std::shared_ptr<const v1::PtxasRequest> request =
      Parsed<v1::PtxasRequest>(bytes);
  if (request == nullptr) return Refuse(NotWellFormed("PtxasRequest"));
  UserStats::Counters& user = counting_->Request(peer.uid);
  return Promised(conversations_->Ptxas(peer.uid, user, *request, request),
                  user, peer.uid, start, "ptxas run");
}

KeptConnection::Reply FramedDoor::AnswerCompile(absl::string_view bytes,
                                                const PeerCredentials& peer,
                                                bool shared) {
  const absl::Time start = absl::Now();
  std::shared_ptr<const v1::CompileRequest> request =
      Parsed<v1::CompileRequest>(bytes);
  if (request == nullptr) return Refuse(NotWellFormed("CompileRequest"));
  UserStats::Counters& user = counting_->Request(peer.uid);
  return Promised(conversations_->Compile(peer.uid, user, *request, request),
                  user, peer.uid, start, "compile", shared);
}

KeptConnection::Reply FramedDoor::AnswerNvvm(absl::string_view bytes,
                                             const PeerCredentials& peer) {
  const absl::Time start = absl::Now();
  std::shared_ptr<const v1::NvvmRequest> request =
      Parsed<v1::NvvmRequest>(bytes);
  if (request == nullptr) return Refuse(NotWellFormed("NvvmRequest"));
  UserStats::Counters& user = counting_->Request(peer.uid);
  return Promised(conversations_->Nvvm(peer.uid, user, *request, request), user,
                  peer.uid, start, "libNVVM compile");
}

KeptConnection::Reply FramedDoor::Promised(Turn turn, UserStats::Counters& user,
                                           uid_t uid, absl::Time start,
                                           absl::string_view what,
                                           bool shared) {
  if (turn.now.has_value()) {
    return ReplyNow(*turn.now, user, uid, start, what, shared);
  }
  // The promise is made once this has returned: `go_on` owns what it needs.
  return {
      nullptr, [this, go_on = std::move(turn.go_on), user = &user,
                start](AnswerLater later) {
        go_on([this, later = std::move(later), user, start](
                  CacheAnswer answer) { Keep(later, answer, *user, start); });
      }};
}

KeptConnection::Reply FramedDoor::ReplyNow(const CacheAnswer& answer,
                                           UserStats::Counters& user, uid_t uid,
                                           absl::Time start,
                                           absl::string_view what,
                                           bool shared) {
  switch (answer.kind) {
    case CacheAnswer::Kind::kHit:
      counting_->Hit(user, *answer.hit, start);
      ++counters_->socket_hits;
      return HitReply(answer.hit, shared);
    case CacheAnswer::Kind::kRefused:
      // The caller runs its own tool, told why.
      counting_->Rejected(user, answer.status.code());
      JITCACHE_LOG(Debug) << what << " of uid " << uid
                          << " refused (framed socket): " << answer.status;
      return Refuse(answer.status);
    case CacheAnswer::Kind::kSendInputs:
      counting_->Resent(user);
      return Refuse(answer.status);
    case CacheAnswer::Kind::kNothing:
      return {};
    case CacheAnswer::Kind::kBuilt:
      break;
  }
  // Not a first turn's; kept as a later one would be.
  KeptConnection::Reply reply;
  Keep(
      [&reply](std::shared_ptr<const std::string> bytes, bool refused) {
        reply = {std::move(bytes), nullptr, refused};
      },
      answer, user, start);
  return reply;
}

void FramedDoor::Keep(const Deliver& later, const CacheAnswer& answer,
                      UserStats::Counters& user, absl::Time start) {
  switch (answer.kind) {
    case CacheAnswer::Kind::kHit:
      counting_->Hit(user, *answer.hit, start);
      ++counters_->socket_hits;
      later(std::shared_ptr<const std::string>(answer.hit,
                                               &answer.hit->serialized),
            false);
      return;
    case CacheAnswer::Kind::kBuilt: {
      v1::CompileResponse response = *answer.built;
      response.set_served(answer.leader ? v1::SERVED_MISS : v1::SERVED_JOINED);
      counting_->Built(user, response, start);
      later(std::make_shared<const std::string>(response.SerializeAsString()),
            false);
      return;
    }
    case CacheAnswer::Kind::kRefused:
      counting_->Rejected(user, answer.status.code());
      later(RefusalOf(answer.status), /*refused=*/true);
      return;
    case CacheAnswer::Kind::kSendInputs:
      counting_->Resent(user);
      later(RefusalOf(answer.status), /*refused=*/true);
      return;
    case CacheAnswer::Kind::kNothing:
      later(nullptr, false);
      return;
  }
}

KeptConnection::Reply FramedDoor::HitReply(
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
  ++counters_->shared_answers;
  // The bytes too, for a connection that cannot take a descriptor now.
  return {std::move(bytes), nullptr, false, file->fd(), file};
}

KeptConnection::Reply FramedDoor::AnswerLink(absl::string_view bytes,
                                             const PeerCredentials& peer) {
  const absl::Time start = absl::Now();
  v1::LinkRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Refuse(NotWellFormed("LinkRequest"));
  }
  UserStats::Counters& user = counting_->Request(peer.uid);
  // Only nvJitLink's calls as a caller made them come this way; a link of
  // libjitcache's Linker is asked over gRPC.
  if (!request.as_called()) {
    ++counters_->link_requests;
    return ReplyNow(CacheAnswer::Refused(absl::InvalidArgumentError(
                        "the framed socket links only as called")),
                    user, peer.uid, start, "link");
  }
  return Promised(conversations_->Link(peer.uid, user, request), user, peer.uid,
                  start, "link");
}

KeptConnection::Reply FramedDoor::Answer(absl::string_view payload,
                                         const PeerCredentials& peer) {
  if (!payload.empty() && payload.front() == framed_protocol::kToolkit) {
    return {payload.size() == 1 ? options_.toolkit_answer : nullptr};
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
