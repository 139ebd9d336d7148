#ifndef JITCACHE_SERVER_BUILD_WORKER_PROTOCOL_H_
#define JITCACHE_SERVER_BUILD_WORKER_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/length_frame.h"
#include "jitcache/v1/worker.pb.h"
#include "server/build/compiler.h"

namespace jitcache {

// The daemon <-> jitcache-worker protocol: on a socketpair, each side
// writes length frames (frame::Write, common/length_frame.h). The daemon sends
// a WorkerRequest, the worker answers one WorkerResponse. A worker that dies of
// a signal first sends, from its signal handler, the frame kCrashFrameLength |
// u64 peak address-space bytes, so that the daemon can tell a compile that hit
// the memory limit from one that crashed.
inline constexpr uint32_t kCrashFrameLength = frame::kNoFrameLength;

v1::WorkerRequest ToWorkerRequest(const CompileJob& job);
v1::WorkerRequest ToWorkerRequest(const LinkJob& job);
v1::WorkerRequest ToWorkerRequest(const PtxasJob& job);
v1::WorkerRequest ToWorkerRequest(const NvvmJob& job);
// The job a request carries (no cancellation flag: a worker is killed);
// INVALID_ARGUMENT for a kind that is not one.
absl::StatusOr<CompileJob> CompileJobFrom(const v1::WorkerCompile& compile,
                                          absl::Time deadline);
absl::StatusOr<LinkJob> LinkJobFrom(const v1::WorkerLink& link,
                                    absl::Time deadline);
// INVALID_ARGUMENT for paths that are not absolute and normal.
absl::StatusOr<PtxasJob> PtxasJobFrom(const v1::WorkerPtxas& ptxas,
                                      absl::Time deadline);

v1::WorkerResponse ToWorkerResponse(const absl::StatusOr<ActionResult>& r);
absl::StatusOr<ActionResult> FromWorkerResponse(v1::WorkerResponse response);

// One whole frame (blocking), or nullopt at EOF or on a bad length. A crash
// frame comes back as nullopt with *crash_peak_bytes set.
std::optional<std::string> ReadFrame(int fd, size_t max_bytes,
                                     std::optional<uint64_t>* crash_peak_bytes);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_WORKER_PROTOCOL_H_
