#ifndef JITCACHE_SERVER_ENGINE_CONVERSATION_H_
#define JITCACHE_SERVER_ENGINE_CONVERSATION_H_

// A request's whole conversation with the cache, whichever door it came
// by (server/rpc/: gRPC, the framed socket): validate it, look its answer
// up, ask for what a miss lacks, join or run its action, and, when the run
// answered for another place or other names, look up and join again under
// the caller's own key. The doors only decode, call one of these, and
// encode the CacheAnswer; no cache decision is theirs.
#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/engine/action_kinds.h"
#include "server/engine/cache_engine.h"
#include "server/engine/hot_answers.h"
#include "server/engine/request_limits.h"
#include "server/engine/service_counters.h"
#include "server/engine/user_stats.h"

namespace jitcache {

// How a request is answered: exactly one of these, once.
struct CacheAnswer {
  enum class Kind {
    kHit,         // `hit`: from memory or the store
    kBuilt,       // `built`: a run's; `leader`: this request started it
    kRefused,     // `status`: the request, its lookup or its run failed
    kSendInputs,  // `status` (NOT_FOUND): the caller sends what the miss
                  // lacks with the same request, and asks again;
                  // `included_files`: a compile's included files
    kNothing,     // nothing to say (a disproof, checked in the background)
  };
  Kind kind = Kind::kNothing;
  std::shared_ptr<const HotAnswer> hit;
  std::shared_ptr<const v1::CompileResponse> built;
  bool leader = false;
  absl::Status status;
  bool included_files = false;

  static CacheAnswer Hit(std::shared_ptr<const HotAnswer> hit);
  static CacheAnswer Built(const CacheEngine::SharedResult& result,
                           bool leader);
  static CacheAnswer Refused(absl::Status status);
  static CacheAnswer SendInputs(absl::Status status, bool included_files);
  static CacheAnswer Nothing() { return {}; }
};

// Called with a miss's CacheAnswer, once, from the thread that ends its run
// (or the caller's, when the pool refuses it).
using AnswerReply = std::function<void(CacheAnswer)>;

// A conversation's first turn: an answer at once (a hit, a refusal, a
// request for inputs), or a miss whose `go_on` joins or runs it and
// replies when it is answered. `go_on` owns what it needs; a door may call
// it later (the framed socket, once its reply is sent), or not at all.
struct Turn {
  std::optional<CacheAnswer> now;
  std::function<void(AnswerReply)> go_on;
};

// Thread-safety: every method from any thread. `engine`, `kinds` and
// `counters` outlive it.
class Conversations {
 public:
  Conversations(CacheEngine* engine, ActionKinds* kinds,
                ServiceCounters* counters, const ToolchainInfo* toolchain,
                RequestLimits limits)
      : engine_(engine),
        kinds_(kinds),
        counters_(counters),
        toolchain_(toolchain),
        limits_(limits) {}

  // Each kind's conversation, charged to `uid` (whose counters `user` are,
  // outliving it). `owner`, when given, keeps `request` alive for as long
  // as the conversation needs it; without one, what a miss needs later is
  // copied on the miss (the door's request may be gone by then).
  // A compile.
  Turn Compile(uid_t uid, UserStats::Counters& user,
               const v1::CompileRequest& request,
               std::shared_ptr<const v1::CompileRequest> owner = nullptr);
  // A link (as libjitcache's Linker asks it, or as nvJitLink was called:
  // then also a disproof, and the refusal of one that read the caller's
  // files). A miss keeps what it needs of the request.
  Turn Link(uid_t uid, UserStats::Counters& user,
            const v1::LinkRequest& request);
  // A ptxas run.
  Turn Ptxas(uid_t uid, UserStats::Counters& user,
             const v1::PtxasRequest& request,
             std::shared_ptr<const v1::PtxasRequest> owner = nullptr);
  // A libNVVM call sequence (its modules by digest, or with them).
  Turn Nvvm(uid_t uid, UserStats::Counters& user,
            const v1::NvvmRequest& request,
            std::shared_ptr<const v1::NvvmRequest> owner = nullptr);

 private:
  struct CompileCall;
  // The miss of `call` under the key of `level`: joined, and served again
  // under the caller's own place's key when the answer was another's.
  void JoinCompile(uid_t uid, UserStats::Counters& user,
                   std::shared_ptr<CompileCall> call,
                   ActionKinds::KeyLevel level, AnswerReply reply);
  void JoinOwnPlace(uid_t uid, UserStats::Counters& user,
                    std::shared_ptr<CompileCall> call, AnswerReply reply);
  // Whether `call`'s included files are at hand (kept from an earlier miss,
  // or in the request); otherwise the caller is asked for them.
  bool HasIncludedFiles(CompileCall& call);
  void JoinLink(uid_t uid, UserStats::Counters& user,
                std::shared_ptr<const PreparedLink> link, bool named,
                AnswerReply reply);
  // A miss that joins the flight for `key` with the Action `make_action`
  // makes of the request.
  template <typename Request, typename MakeAction>
  std::function<void(AnswerReply)> Later(uid_t uid, UserStats::Counters& user,
                                         const Digest& key,
                                         std::shared_ptr<const Request> owner,
                                         const Request& request,
                                         MakeAction make_action);
  static CacheEngine::Waiter Replying(AnswerReply reply);

  CacheEngine* const engine_;
  ActionKinds* const kinds_;
  ServiceCounters* const counters_;
  const ToolchainInfo* const toolchain_;
  const RequestLimits limits_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_CONVERSATION_H_
