#ifndef JITCACHE_COMMON_FRAMED_PROTOCOL_H_
#define JITCACHE_COMMON_FRAMED_PROTOCOL_H_

// What a framed-socket request asks (server/net/framed_socket.h has the
// framing). A payload is one of:
//   a serialized CompileRequest                 -> a CompileResponse
//   kToolkit                                    -> a PingResponse (the
//                                                  toolkit's include
//                                                  directories and
//                                                  fingerprint, asked once
//                                                  per process)
//   kBatch, then a serialized HitBatchRequest   -> a HitBatchResponse
//   kPtxas, then a serialized PtxasRequest      -> a CompileResponse, when
//                                                  the run is done (a miss
//                                                  waits for it: the one
//                                                  request that is not a
//                                                  hit's alone)
//   kLink, then a serialized LinkRequest        -> a CompileResponse: an
//     (as_called: libnvJitLink.so.13's)            as-called link's trace,
//                                                  recorded steps (a hit or
//                                                  nothing) or the whole
//                                                  link (a miss waits for
//                                                  it, as kPtxas)
//   kNvvm, then a serialized NvvmRequest        -> a CompileResponse: a hit,
//     (libnvvm.so.4's)                             or (with_modules) the
//                                                  calls run on a miss, as
//                                                  kPtxas; without modules
//                                                  a miss is answered with
//                                                  nothing
//   kCompile, then a serialized CompileRequest -> a CompileResponse: a hit,
//     (libnvrtc.so.13's)                           or on a miss the compile's
//                                                  answer when it is done, as
//                                                  kPtxas; a FramedRefusal
//                                                  (NOT_FOUND) when the daemon
//                                                  lacks the included files'
//                                                  bytes: the caller sends
//                                                  them and asks again
//   kCompileShared, then a CompileRequest       -> as kCompile, but a hit at
//                                                  least as large as the
//                                                  daemon's
//                                                  --shared_answer_size may
//                                                  come as a sealed memory
//                                                  file (status byte 3, an
//                                                  empty frame, the file's
//                                                  descriptor on the first
//                                                  byte): its content is the
//                                                  CompileResponse
//   kHitShared, then a CompileRequest           -> as a bare CompileRequest
//     (libjitcache's)                              (a hit or nothing), but a
//                                                  large hit may come as a
//                                                  sealed memory file, as
//                                                  for kCompileShared
// The kind bytes are protobuf tags of wire type 7, which does not exist, so
// no serialized message starts with one: a bare CompileRequest (all that
// clients before kinds sent) is still understood.
namespace jitcache::framed_protocol {

inline constexpr char kToolkit = 0x07;
inline constexpr char kBatch = 0x0F;
inline constexpr char kPtxas = 0x17;
inline constexpr char kLink = 0x1F;
inline constexpr char kNvvm = 0x27;
inline constexpr char kCompile = 0x2F;
inline constexpr char kCompileShared = 0x37;
inline constexpr char kHitShared = 0x3F;

// The status byte that starts each answer (server/net/framed_socket.h):
// the answer's frame follows; none (the caller asks over gRPC or does the
// work itself); a FramedRefusal's frame follows; the answer is in the
// sealed memory file passed with the frame.
inline constexpr char kAnswered = 0;
inline constexpr char kNotAnswered = 1;
inline constexpr char kRefused = 2;
inline constexpr char kSharedFile = 3;

// At most this many requests in one batch; a batch's answer holds at most
// kMaxBatchAnswerBytes of answers (the requests past those are answered
// "not a hit", and the client asks them over gRPC).
inline constexpr int kMaxBatchRequests = 4096;
inline constexpr size_t kMaxBatchAnswerBytes = size_t{512} << 20;

}  // namespace jitcache::framed_protocol

#endif  // JITCACHE_COMMON_FRAMED_PROTOCOL_H_
