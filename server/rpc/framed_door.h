#ifndef JITCACHE_SERVER_RPC_FRAMED_DOOR_H_
#define JITCACHE_SERVER_RPC_FRAMED_DOOR_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/engine/action_kinds.h"
#include "server/engine/conversation.h"
#include "server/engine/hot_answers.h"
#include "server/engine/request_limits.h"
#include "server/engine/service_counters.h"
#include "server/engine/user_stats.h"
#include "server/net/kept_connection.h"
#include "server/net/peer_listener.h"
#include "server/rpc/request_counting.h"

namespace jitcache {

struct FramedDoorOptions {
  const ToolchainInfo* toolchain = nullptr;
  RequestLimits limits;
  // A hit at least this large goes as a sealed memory file to a caller
  // that takes one (0: never); at most hot_cache_size bytes of them.
  uint64_t shared_answer_size = 0;
  uint64_t hot_cache_size = 0;
  // What kToolkit answers: the serialized PingResponse.
  std::shared_ptr<const std::string> toolkit_answer;
};

// The framed socket's door (server/net/framed_socket.h): a request payload
// of common/framed_protocol.h in, its answer out. Each request is decoded,
// handed to its kind's conversation (server/engine/conversation.h), and the
// CacheAnswer encoded: now (a hit, a FramedRefusal), or promised for when
// its miss is answered. A hit-only ask (a bare CompileRequest, kHitShared,
// kBatch: libjitcache's and the `jitcache` command's) is answered when it
// hits, and "ask gRPC" (nothing) otherwise. A single hit's bytes are shared
// with the hot answers: the caller writes them, never copies them.
// Thread-safety: Answer from any thread; everything it is given outlives
// it.
class FramedDoor {
 public:
  FramedDoor(Conversations* conversations, ActionKinds* kinds,
             RequestCounting* counting, ServiceCounters* counters,
             FramedDoorOptions options)
      : conversations_(conversations),
        kinds_(kinds),
        counting_(counting),
        counters_(counters),
        options_(std::move(options)) {}

  KeptConnection::Reply Answer(absl::string_view payload,
                               const PeerCredentials& peer);

 private:
  // A compile request that arrived at `start`, answered when it hits; null
  // otherwise.
  std::shared_ptr<const HotAnswer> AnswerOne(const v1::CompileRequest& request,
                                             const PeerCredentials& peer,
                                             absl::Time start);
  // A serialized HitBatchRequest: every request answered, hit or not.
  std::shared_ptr<const std::string> AnswerBatch(absl::string_view batch,
                                                 const PeerCredentials& peer);
  // A ptxas run, a compile (kCompile: libnvrtc.so.13's; `shared`: the
  // caller takes a large hit as a sealed file, kCompileShared), a libNVVM
  // call sequence (libnvvm.so.4's), and an as-called link
  // (libnvJitLink.so.13's).
  KeptConnection::Reply AnswerPtxas(absl::string_view request,
                                    const PeerCredentials& peer);
  KeptConnection::Reply AnswerCompile(absl::string_view request,
                                      const PeerCredentials& peer, bool shared);
  KeptConnection::Reply AnswerNvvm(absl::string_view request,
                                   const PeerCredentials& peer);
  KeptConnection::Reply AnswerLink(absl::string_view request,
                                   const PeerCredentials& peer);
  // `turn`'s answer now, or the promise of it (`what` names the request in
  // the log).
  KeptConnection::Reply Promised(Turn turn, UserStats::Counters& user,
                                 uid_t uid, absl::Time start,
                                 absl::string_view what, bool shared = false);
  // An answer as replied now, counted.
  KeptConnection::Reply ReplyNow(const CacheAnswer& answer,
                                 UserStats::Counters& user, uid_t uid,
                                 absl::Time start, absl::string_view what,
                                 bool shared = false);
  // An answer delivered through `later` (a promise's AnswerLater), counted.
  using Deliver =
      std::function<void(std::shared_ptr<const std::string>, bool refused)>;
  void Keep(const Deliver& later, const CacheAnswer& answer,
            UserStats::Counters& user, absl::Time start);
  // A hit's reply: its bytes, and with `shared` (the caller takes a file),
  // at least shared_answer_size of them and room under the bound, its
  // sealed file too (counted in shared_answers).
  KeptConnection::Reply HitReply(const std::shared_ptr<const HotAnswer>& hit,
                                 bool shared);

  Conversations* const conversations_;
  ActionKinds* const kinds_;
  RequestCounting* const counting_;
  ServiceCounters* const counters_;
  const FramedDoorOptions options_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_FRAMED_DOOR_H_
