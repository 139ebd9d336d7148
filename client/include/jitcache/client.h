#ifndef JITCACHE_CLIENT_CLIENT_H_
#define JITCACHE_CLIENT_CLIENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "jitcache/object_code.h"
#include "jitcache/program.h"

namespace jitcache {

// The result of an asynchronous call. Copyable handle to shared state; safe
// to poll from any thread.
template <typename T>
class AsyncResult {
 public:
  struct State {
    absl::Notification done;
    absl::StatusOr<T> result = absl::UnknownError("not complete");
  };
  explicit AsyncResult(std::shared_ptr<State> state)
      : state_(std::move(state)) {}

  // Never blocks.
  bool is_complete() const { return state_->done.HasBeenNotified(); }
  // True when complete within `timeout`.
  bool wait(absl::Duration timeout) const {
    return state_->done.WaitForNotificationWithTimeout(timeout);
  }
  // Waits for completion.
  const absl::StatusOr<T>& get() const {
    state_->done.WaitForNotification();
    return state_->result;
  }

 private:
  std::shared_ptr<State> state_;
};

struct ClientOptions {
  std::string socket_path;  // empty: JITCACHE_SOCKET or the default socket
  // When the daemon cannot be reached (no socket, refused, client deadline),
  // compile in this process with NVRTC instead (served LOCAL).
  // JITCACHE_NO_FALLBACK=1 in the environment turns this off.
  bool local_fallback = true;
  absl::Duration ping_deadline = absl::Seconds(5);
  // Covers queueing and the compile itself (the daemon's own limit is 10 min).
  absl::Duration compile_deadline = absl::Minutes(15);
};

struct DaemonInfo {
  std::string daemon_version;
  std::string toolchain;
  std::string toolchain_fingerprint;
  unsigned key_schema_version = 0;
  std::vector<std::string> supported_archs;
  std::string store_path;
  // The NVRTC and nvJitLink files the daemon uses, and the ptxas binaries
  // it runs (resolved paths, stamps).
  struct Library {
    std::string name;  // "libnvrtc.so.13", "libnvJitLink.so.13", "ptxas"
    std::string path;
    uint64_t device = 0, inode = 0, size = 0;
    int64_t mtime_ns = 0;
    unsigned major = 0, minor = 0;  // its Version call's answer
    int64_t ctime_ns = 0;
  };
  std::vector<Library> libraries;
};

// One user's share of the daemon (see UserStats in jitcache.proto).
struct UserUsage {
  unsigned uid = 0;
  std::string name;  // empty when the user database has none
  uint64_t requests = 0, hits = 0, misses = 0, joins = 0, rejected = 0;
  double compile_seconds = 0;  // of the compiles this user led
  uint64_t queued = 0;
};

// The daemon's counters (see StatsResponse in jitcache.proto).
struct DaemonStats {
  // Every number the daemon reports, under its name in StatsResponse (the
  // name `jitcache stats` prints and the metrics export), in the daemon's
  // order; rejected ones as rejected_REASON. The members below are the
  // same numbers, typed, for programs.
  std::vector<std::pair<std::string, double>> values;
  uint64_t requests = 0, hits = 0, misses = 0, joins = 0;
  uint64_t compile_errors = 0, compiles = 0;  // compiles: builds that ran
  uint64_t link_requests = 0, link_errors = 0;
  uint64_t ptxas_requests = 0;
  std::map<std::string, uint64_t> rejected;  // by reason
  uint64_t queued = 0, running = 0, waiting = 0;
  double compile_seconds_spent = 0, compile_seconds_saved = 0;
  uint64_t store_entries = 0, store_bytes = 0, store_corrupt_removed = 0;
  uint64_t store_write_failures = 0;  // answers served but not kept
  uint64_t store_objects = 0, store_uploads = 0;
  uint64_t store_live_bytes = 0;  // uncompressed
  uint64_t store_max_bytes = 0;   // the cap; 0: none
  uint64_t store_evicted_entries = 0, store_evicted_bytes = 0;
  uint64_t store_eviction_runs = 0;
  // Compiles that cost their worker process, by why, and workers started.
  uint64_t compiler_crashes = 0, compiler_memory_limited = 0;
  uint64_t compiler_time_limited = 0, compile_workers_started = 0;
  // Compiles whose compiler ended its process without an answer.
  uint64_t compiler_exits = 0;
  // The cluster tier (--remote).
  uint64_t remote_hits = 0, remote_misses = 0, remote_errors = 0;
  uint64_t remote_corrupt = 0, remote_leases_waited = 0;
  uint64_t remote_bytes_up = 0, remote_bytes_down = 0;
  // Hits answered from memory (the daemon's --hot_cache_size), and what
  // that memory holds.
  uint64_t hot_hits = 0, hot_entries = 0, hot_bytes = 0, hot_max_bytes = 0;
  // Hits answered on the framed socket (no gRPC), and batches of them.
  uint64_t socket_hits = 0, socket_batches = 0;
  // Of those hits, how many went as a sealed memory file (libnvrtc.so.13's
  // large answers), and the bytes of such files the daemon holds now.
  uint64_t shared_answers = 0, shared_answer_bytes = 0;
  uint64_t remote_redirects = 0, remote_cluster_refreshes = 0;
  uint64_t remote_replica_hits = 0, remote_replica_misses = 0;
  uint64_t store_recovered = 0, store_quarantined = 0;
  // Compiles run a second time elsewhere to tell whether their answer
  // depends on the caller's place, and how many did not (shared by every
  // place) and did (kept for their place).
  uint64_t place_proofs = 0, place_shared = 0, place_kept = 0;
  // Of those kept, how many depend on the program's name alone (shared by
  // every place that names the program the same way).
  uint64_t place_name_kept = 0;
  // Misses answered before their place proof ended (kept for their place
  // meanwhile).
  uint64_t place_answered_before_proof = 0;
  // Proofs whose verdict is not yet kept: those misses' keys are not final.
  uint64_t place_proofs_running = 0;
  // libNVVM compiles and verifies asked (libnvvm.so.4).
  uint64_t nvvm_requests = 0;
  // Link records a caller's nvJitLink answered otherwise: removed when a
  // second link agreed with the caller, kept when it agreed with the record.
  uint64_t records_disproved = 0, disproofs_refuted = 0;
  // Every user for an administrator; the caller's own row for others.
  std::vector<UserUsage> users;
};

class Client;
namespace internal {
struct AskedCompile;
absl::StatusOr<ObjectCode> CompileAndRecord(const Client& client,
                                            const Program& program,
                                            const ProgramOptions& options,
                                            CodeType target,
                                            AskedCompile* asked);
}  // namespace internal

// A connection to jitcached. Every call has a deadline. Errors are the
// daemon's (INVALID_ARGUMENT for a bad request, ...) or UNAVAILABLE when it
// cannot be reached. A program that fails to compile is not an error: the
// ObjectCode says compiled == false and carries the log.
// Thread-safety: one Client may be used from many threads at once.
class Client {
 public:
  // Does not contact the daemon; the first call does.
  static absl::StatusOr<Client> Connect(ClientOptions options = {});

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  absl::StatusOr<DaemonInfo> Ping() const;
  // `zero`: an administrator's reset of the counters after reading them
  // (PERMISSION_DENIED for others).
  absl::StatusOr<DaemonStats> Stats(bool zero = false) const;
  absl::StatusOr<ObjectCode> Compile(const Program& program,
                                     const ProgramOptions& options,
                                     CodeType target) const;
  // Returns at once; any number may be in flight from one thread (gRPC's
  // callback API: no thread per call).
  AsyncResult<ObjectCode> CompileAsync(const Program& program,
                                       const ProgramOptions& options,
                                       CodeType target) const;

  // One program of a batch, compiled for each of `archs` (replacing
  // options.arch; empty: options.arch alone).
  struct PrecompileItem {
    Program program;
    ProgramOptions options;
    CodeType target = CodeType::kCubin;
    std::vector<std::string> archs;
  };
  struct PrecompileOutcome {
    size_t item = 0;
    std::string arch;
    absl::StatusOr<ObjectCode> code;
  };
  // Compiles a whole batch in parallel without loading anything. Outcomes
  // come in order (item 0 x its archs, item 1 x its archs, ...); `progress`
  // (optional) is called with (done, total) as they complete. Each is asked
  // with ProgramOptions::wait_for_proof, so that every cache_key is final,
  // as an export needs.
  std::vector<PrecompileOutcome> Precompile(
      const std::vector<PrecompileItem>& items,
      const std::function<void(size_t done, size_t total)>& progress = {})
      const;

  // Content-addressed objects (digests are lower-case hex SHA-256).
  absl::StatusOr<std::vector<std::string>> FindMissingObjects(
      const std::vector<std::string>& digests) const;
  // DATA_LOSS when the bytes do not hash to `digest`.
  absl::Status UploadObject(const std::string& digest, CodeType kind,
                            const std::string& bytes) const;
  // NOT_FOUND naming the digest when the daemon does not have it.
  absl::StatusOr<ObjectCode> FetchObject(const std::string& digest) const;

  // One input of a link: by digest (the daemon must have it) or by bytes.
  struct LinkInput {
    CodeType kind = CodeType::kLtoir;
    std::string name;
    std::string digest;  // used when not empty
    std::string bytes;   // used otherwise
  };
  // The Link RPC as it is; Linker adds hashing and uploads on top.
  absl::StatusOr<ObjectCode> Link(const std::vector<LinkInput>& inputs,
                                  const std::vector<std::string>& options,
                                  CodeType target) const;
  AsyncResult<ObjectCode> LinkAsync(const std::vector<LinkInput>& inputs,
                                    const std::vector<std::string>& options,
                                    CodeType target) const;

  // nvJitLink's C API as a caller drove it (what libnvJitLink.so.13 asks
  // over the framed socket, asked over gRPC): options as spelled, inputs with
  // their names, each naming its digest and carrying its bytes: sent with the
  // request when `send_bytes` (a link the daemon is not expected to have), else
  // only if the daemon lacks them. The answer is what the real nvJitLink
  // answered, call by call. With `steps_only`, what the daemon recorded for
  // nvJitLinkCreate and these inputs' adds (NOT_FOUND when it has none);
  // otherwise the whole link, run on a miss.
  struct NvJitLinkStep {
    int result = 0;  // nvJitLinkResult of the call
    // The logs right after it: Get*LogSize's result and the log's bytes.
    int error_size_result = 0;
    std::string error_log;
    int info_size_result = 0;
    std::string info_log;
    bool operator==(const NvJitLinkStep&) const = default;
  };
  struct LinkTrace {
    bool handle_created = false;
    // nvJitLinkCreate, each nvJitLinkAddData, then nvJitLinkComplete.
    std::vector<NvJitLinkStep> steps;
    bool complete = false;
    int cubin_size_result = 0, cubin_result = 0;
    int ptx_size_result = 0, ptx_result = 0;
    std::string cubin, ptx;
    bool hit = false;  // the daemon answered from its store
  };
  absl::StatusOr<LinkTrace> LinkAsCalled(
      const std::vector<LinkInput>& inputs,
      const std::vector<std::string>& options, bool steps_only,
      bool send_bytes = false) const;

  const std::string& socket_path() const;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  // Compile, also saying what it asked the daemon in `asked` (when not
  // null): jitcache-full keeps that as a direct-mode memo.
  absl::StatusOr<ObjectCode> CompileRecorded(
      const Program& program, const ProgramOptions& options, CodeType target,
      internal::AskedCompile* asked) const;
  friend absl::StatusOr<ObjectCode> internal::CompileAndRecord(
      const Client& client, const Program& program,
      const ProgramOptions& options, CodeType target,
      internal::AskedCompile* asked);
  std::unique_ptr<Impl> impl_;
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_CLIENT_H_
