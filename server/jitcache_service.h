#ifndef JITCACHE_SERVER_JITCACHE_SERVICE_H_
#define JITCACHE_SERVER_JITCACHE_SERVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "server/compile_pool.h"
#include "server/compile_reactor.h"
#include "server/compile_request.h"
#include "server/compiler.h"
#include "server/link_request.h"
#include "server/store/object_store.h"
#include "server/request_limits.h"
#include "server/service_counters.h"
#include "server/single_flight.h"

namespace jitcache {

struct ServiceOptions {
  ObjectStore* store = nullptr;  // not owned; outlives the service
  Compiler* compiler = nullptr;  // not owned; outlives the service
  CompilePool* pool = nullptr;   // not owned; outlives the service
  RequestLimits limits;
  std::string store_path;  // reported by Ping
  // A compile running longer is cancelled and answered DEADLINE_EXCEEDED.
  absl::Duration compile_time_limit = absl::Minutes(10);
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// The JitCache gRPC service (callback API). A handler validates, computes the
// key and reads the store; a hit finishes at once on the gRPC thread. A miss
// joins the single flight for its key; the first joiner queues one compile on
// the pool, and the worker that runs it stores the result and finishes every
// joined request. No gRPC thread waits for a compile. A request that is
// cancelled (or whose deadline passes) while it waits is answered at once and
// leaves its flight; the compile goes on for the others and for the store.
// Thread-safety: handlers run concurrently on gRPC's threads.
class JitCacheService final : public v1::JitCache::CallbackService {
 public:
  explicit JitCacheService(ServiceOptions options);

  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context,
                                 const v1::PingRequest* request,
                                 v1::PingResponse* response) override;
  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const v1::CompileRequest* request,
                                    v1::CompileResponse* response) override;
  grpc::ServerUnaryReactor* Link(grpc::CallbackServerContext* context,
                                 const v1::LinkRequest* request,
                                 v1::CompileResponse* response) override;
  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const v1::StatsRequest* request,
                                     v1::StatsResponse* response) override;
  // Content-addressed objects (object_rpcs.cc).
  grpc::ServerUnaryReactor* FindMissingObjects(
      grpc::CallbackServerContext* context,
      const v1::FindMissingObjectsRequest* request,
      v1::FindMissingObjectsResponse* response) override;
  grpc::ServerUnaryReactor* UploadObject(
      grpc::CallbackServerContext* context,
      const v1::UploadObjectRequest* request,
      v1::UploadObjectResponse* response) override;
  grpc::ServerUnaryReactor* FetchObject(
      grpc::CallbackServerContext* context,
      const v1::FetchObjectRequest* request,
      v1::FetchObjectResponse* response) override;

  // The hit-only path of HitSocket: a serialized CompileRequest in, the
  // serialized CompileResponse out when the store has the answer; nullopt
  // for anything else (a miss, a bad request), which the caller asks over
  // gRPC instead. Runs on the caller's thread.
  std::optional<std::string> AnswerHit(const std::string& request_bytes);

  // Makes running compiles stop (they answer UNAVAILABLE). Queued ones are
  // cancelled by the pool's own Shutdown.
  void CancelRunningCompiles() { shutting_down_.store(true); }

 private:
  using SharedResult =
      absl::StatusOr<std::shared_ptr<const v1::CompileResponse>>;

  // What a miss runs on a worker: a compile or a link of one key.
  struct Build {
    Digest key;
    ObjectKind target;
    bool is_link = false;
    std::vector<std::string> input_digests;  // raw; a link's inputs
    std::function<absl::StatusOr<CompileResult>(absl::Time deadline)> run;
  };

  // The stored answer for `key`, or nullopt on a miss.
  absl::StatusOr<std::optional<v1::CompileResponse>> LookUp(const Digest& key);
  // The common path of Compile and Link once the key is known: hit, or join
  // the flight and, leading, queue the build.
  // `make_build` runs only for the request that leads a miss: a hit copies
  // nothing out of its request.
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context,
                                  v1::CompileResponse* response,
                                  CompileReactor* reactor, const Digest& key,
                                  const std::function<Build()>& make_build);
  // Runs on a pool worker: builds, stores, and answers the flight.
  void RunBuild(const Build& build);
  absl::StatusOr<CompileResult> RunLink(const PreparedLink& link,
                                        absl::Time deadline);

  ServiceOptions options_;
  SingleFlight<SharedResult> flights_;
  ServiceCounters counters_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_JITCACHE_SERVICE_H_
