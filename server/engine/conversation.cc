#include "server/engine/conversation.h"

#include <utility>

#include "server/build/path_stats.h"
#include "server/engine/compile_request.h"
#include "server/engine/link_request.h"
#include "server/engine/nvvm_request.h"
#include "server/engine/ptxas_request.h"

namespace jitcache {

CacheAnswer CacheAnswer::Hit(std::shared_ptr<const HotAnswer> hit) {
  CacheAnswer a;
  a.kind = Kind::kHit;
  a.hit = std::move(hit);
  return a;
}

CacheAnswer CacheAnswer::Built(const CacheEngine::SharedResult& result,
                               bool leader) {
  if (!result.ok()) return Refused(result.status());
  CacheAnswer a;
  a.kind = Kind::kBuilt;
  a.built = *result;
  a.leader = leader;
  return a;
}

CacheAnswer CacheAnswer::Refused(absl::Status status) {
  CacheAnswer a;
  a.kind = Kind::kRefused;
  a.status = std::move(status);
  return a;
}

CacheAnswer CacheAnswer::SendInputs(absl::Status status, bool included_files) {
  CacheAnswer a;
  a.kind = Kind::kSendInputs;
  a.status = std::move(status);
  a.included_files = included_files;
  return a;
}

namespace {

using HitOr = absl::StatusOr<std::shared_ptr<const HotAnswer>>;

// A lookup's answer when it has one (a hit, or a failure); nullopt on a
// miss.
std::optional<CacheAnswer> Found(const HitOr& hit) {
  if (!hit.ok()) return CacheAnswer::Refused(hit.status());
  if (*hit != nullptr) return CacheAnswer::Hit(*hit);
  return std::nullopt;
}

CacheAnswer SendIncludedFiles() {
  return CacheAnswer::SendInputs(
      absl::NotFoundError("a miss: the daemon lacks the included files' "
                          "contents: send them with the request"),
      /*included_files=*/true);
}

}  // namespace

struct Conversations::CompileCall {
  std::shared_ptr<const v1::CompileRequest> request;
  PreparedCompile prepared;
  std::shared_ptr<const FileSet> kept;  // the included files, once found
};

template <typename Request, typename MakeAction>
std::function<void(AnswerReply)> Conversations::Later(
    uid_t uid, UserStats::Counters& user, const Digest& key,
    std::shared_ptr<const Request> owner, const Request& request,
    MakeAction make_action) {
  if (owner == nullptr) {
    // The request may be gone when the miss goes on: its action, made now
    // (a copy of what it needs), goes on instead.
    auto action = std::make_shared<Action>(make_action(request));
    return [this, uid, user = &user, key, action](AnswerReply reply) {
      engine_->Join(uid, *user, key, Replying(std::move(reply)),
                    [&] { return *action; });
    };
  }
  // Made by the flight's leader alone: a joiner copies nothing.
  return [this, uid, user = &user, key, owner = std::move(owner),
          make_action = std::move(make_action)](AnswerReply reply) {
    engine_->Join(uid, *user, key, Replying(std::move(reply)),
                  [&] { return make_action(*owner); });
  };
}

CacheEngine::Waiter Conversations::Replying(AnswerReply reply) {
  return [reply = std::move(reply)](const CacheEngine::SharedResult& result,
                                    bool is_leader) {
    reply(CacheAnswer::Built(result, is_leader));
  };
}

bool Conversations::HasIncludedFiles(CompileCall& call) {
  if (!call.request->includes_resolved()) return true;
  call.kept = kinds_->KeptFiles(call.prepared);
  // A request that named its files by digest gives their times apart, one
  // for each: a set that does not match them cannot be used.
  if (call.kept != nullptr && !call.prepared.has_included_contents &&
      call.kept->size() != call.prepared.file_mtimes_ns.size()) {
    call.kept = nullptr;
  }
  return call.kept != nullptr || call.prepared.has_included_contents;
}

Turn Conversations::Compile(uid_t uid, UserStats::Counters& user,
                            const v1::CompileRequest& request,
                            std::shared_ptr<const v1::CompileRequest> owner) {
  absl::StatusOr<PreparedCompile> prepared =
      PrepareCompile(request, *toolchain_, limits_);
  if (!prepared.ok()) return {CacheAnswer::Refused(prepared.status()), nullptr};
  ActionKinds::KeyLevel level = ActionKinds::KeyLevel::kPlaceFree;
  if (std::optional<CacheAnswer> now =
          Found(kinds_->CompileHit(*prepared, &level))) {
    return {std::move(now), nullptr};
  }
  auto call = std::make_shared<CompileCall>();
  call->request = owner != nullptr
                      ? std::move(owner)
                      : std::make_shared<const v1::CompileRequest>(request);
  call->prepared = *std::move(prepared);
  if (!HasIncludedFiles(*call)) return {SendIncludedFiles(), nullptr};
  return {std::nullopt,
          [this, uid, user = &user, call, level](AnswerReply reply) {
            JoinCompile(uid, *user, call, level, std::move(reply));
          }};
}

void Conversations::JoinCompile(uid_t uid, UserStats::Counters& user,
                                std::shared_ptr<CompileCall> call,
                                ActionKinds::KeyLevel level,
                                AnswerReply reply) {
  CacheEngine::Waiter waiter;
  if (level == ActionKinds::KeyLevel::kPlaceFree) {
    // A place-free build answers every place when its answer is the same
    // elsewhere; when it is not, a caller from another place than the
    // leader's is served under its own place's key. (A log template is
    // written for this caller's name by the flight, CacheEngine::Join.)
    waiter = [this, uid, user = &user, call, reply = std::move(reply)](
                 const CacheEngine::SharedResult& result, bool is_leader) {
      if (result.ok() &&
          ActionKinds::AnsweredForAnotherPlace(**result, call->prepared)) {
        JoinOwnPlace(uid, *user, call, reply);
        return;
      }
      reply(CacheAnswer::Built(result, is_leader));
    };
  } else {
    waiter = Replying(std::move(reply));
  }
  engine_->Join(
      uid, user, ActionKinds::KeyAt(call->prepared, level), std::move(waiter),
      [&] {
        return kinds_->CompileAction(*call->request, call->prepared, call->kept,
                                     level);
      },
      call->prepared.program_name);
}

void Conversations::JoinOwnPlace(uid_t uid, UserStats::Counters& user,
                                 std::shared_ptr<CompileCall> call,
                                 AnswerReply reply) {
  ActionKinds::KeyLevel level;
  if (std::optional<CacheAnswer> now =
          Found(kinds_->CompileHitForOwnPlace(call->prepared, &level))) {
    reply(*std::move(now));
    return;
  }
  if (!HasIncludedFiles(*call)) {
    reply(SendIncludedFiles());
    return;
  }
  engine_->Join(
      uid, user, ActionKinds::KeyAt(call->prepared, level),
      Replying(std::move(reply)),
      [&] {
        return kinds_->CompileAction(*call->request, call->prepared, call->kept,
                                     level);
      },
      call->prepared.program_name);
}

Turn Conversations::Link(uid_t uid, UserStats::Counters& user,
                         const v1::LinkRequest& request) {
  ++counters_->link_requests;
  absl::StatusOr<PreparedLink> prepared =
      PrepareLink(request, *toolchain_, limits_);
  if (!prepared.ok()) return {CacheAnswer::Refused(prepared.status()), nullptr};
  bool named = false;
  HitOr hit = kinds_->LinkHit(*prepared, &named);
  if (request.as_called() && request.disproves()) {
    // The caller's own nvJitLink answered otherwise than this record: it
    // is told nothing, and the link runs again in the background.
    if (hit.ok() && *hit != nullptr && !prepared->steps_only) {
      auto link = std::make_shared<const PreparedLink>(*std::move(prepared));
      engine_->CheckDisproof(
          uid, ActionKinds::LinkKeyAt(*link, named),
          named ? link->named_step_keys : link->step_keys,
          [this, link](absl::Time deadline) {
            return kinds_->RunLink(*link, deadline);
          },
          *std::move(hit));
    }
    return {CacheAnswer::Nothing(), nullptr};
  }
  if (std::optional<CacheAnswer> now = Found(hit))
    return {std::move(now), nullptr};
  // Only a miss keeps the prepared link (a hit copies nothing).
  auto link = std::make_shared<const PreparedLink>(*std::move(prepared));
  if (engine_->ReadsCallersFiles(ActionKinds::LinkKeyAt(*link, named))) {
    return {CacheAnswer::Refused(ReadsCallersFilesError()), nullptr};
  }
  if (link->steps_only) {
    // Only what an earlier link recorded: never a link of its own.
    return {CacheAnswer::Refused(
                absl::NotFoundError("no link recorded these steps")),
            nullptr};
  }
  if (absl::Status have = engine_->FindMissingInputs(NeededInputsOf(*link));
      !have.ok()) {
    // NOT_FOUND: the caller sends them with the request and asks again.
    if (absl::IsNotFound(have)) {
      return {CacheAnswer::SendInputs(std::move(have), false), nullptr};
    }
    return {CacheAnswer::Refused(std::move(have)), nullptr};
  }
  return {std::nullopt,
          [this, uid, user = &user, link, named](AnswerReply reply) {
            JoinLink(uid, *user, link, named, std::move(reply));
          }};
}

void Conversations::JoinLink(uid_t uid, UserStats::Counters& user,
                             std::shared_ptr<const PreparedLink> link,
                             bool named, AnswerReply reply) {
  CacheEngine::Waiter waiter;
  if (!named && link->named_key.has_value()) {
    // A flight keyed without names whose answer shows the leader's: a
    // caller with other names is served under its own names' key, and
    // built there.
    waiter = [this, uid, user = &user, link, reply = std::move(reply)](
                 const CacheEngine::SharedResult& result, bool is_leader) {
      if (result.ok() && (*result)->place_matters() &&
          (*result)->cache_key() != link->named_key->Hex()) {
        engine_->Join(uid, *user, *link->named_key, Replying(reply),
                      [&] { return kinds_->LinkAction(link, /*named=*/true); });
        return;
      }
      reply(CacheAnswer::Built(result, is_leader));
    };
  } else {
    waiter = Replying(std::move(reply));
  }
  engine_->Join(uid, user, ActionKinds::LinkKeyAt(*link, named),
                std::move(waiter),
                [&] { return kinds_->LinkAction(link, named); });
}

Turn Conversations::Ptxas(uid_t uid, UserStats::Counters& user,
                          const v1::PtxasRequest& request,
                          std::shared_ptr<const v1::PtxasRequest> owner) {
  ++counters_->ptxas_requests;
  absl::StatusOr<PreparedPtxas> prepared =
      PreparePtxas(request, *toolchain_, limits_);
  if (!prepared.ok()) return {CacheAnswer::Refused(prepared.status()), nullptr};
  if (std::optional<CacheAnswer> now = Found(kinds_->PtxasHit(*prepared))) {
    return {std::move(now), nullptr};
  }
  return {
      std::nullopt,
      Later(uid, user, prepared->key, std::move(owner), request,
            [this, prepared = *std::move(prepared)](const v1::PtxasRequest& r) {
              return kinds_->PtxasAction(r, prepared);
            })};
}

Turn Conversations::Nvvm(uid_t uid, UserStats::Counters& user,
                         const v1::NvvmRequest& request,
                         std::shared_ptr<const v1::NvvmRequest> owner) {
  ++counters_->nvvm_requests;
  absl::StatusOr<PreparedNvvm> prepared =
      PrepareNvvm(request, *toolchain_, limits_);
  if (!prepared.ok()) return {CacheAnswer::Refused(prepared.status()), nullptr};
  if (std::optional<CacheAnswer> now =
          Found(engine_->HitAnswer(prepared->key))) {
    return {std::move(now), nullptr};
  }
  // A miss asked by digests alone: the caller sends the modules and asks
  // again (CacheEngine::FindMissingInputs's way).
  if (!request.with_modules()) {
    return {CacheAnswer::SendInputs(
                absl::NotFoundError(
                    "the daemon lacks the modules: send them with the request"),
                false),
            nullptr};
  }
  return {
      std::nullopt,
      Later(uid, user, prepared->key, std::move(owner), request,
            [this, prepared = *std::move(prepared)](const v1::NvvmRequest& r) {
              return kinds_->NvvmAction(r, prepared);
            })};
}

}  // namespace jitcache
