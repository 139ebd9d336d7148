// JitCacheService's admin calls. Who may call them is decided from the
// peer's kernel credentials (see PeerListener), never from the request.
#include <unistd.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "jitcache/v1/wire_kinds.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/jitcache_service.h"
#include "server/store/bundle_entries.h"

namespace jitcache {
namespace {

// What the janitor calls when an eviction or clear it ran for `reactor` is
// done: fills the answer, counts an error, finishes the call.
std::function<void(StoreJanitor::Report)> FinishEviction(
    ServiceCounters* counters, grpc::ServerUnaryReactor* reactor,
    v1::EvictResponse* response) {
  return [counters, reactor, response](StoreJanitor::Report report) {
    response->set_records(report.evicted.records);
    response->set_uploads(report.evicted.uploads);
    response->set_objects(report.evicted.objects);
    response->set_live_bytes(report.evicted.bytes);
    response->set_bytes_before(report.bytes_before);
    response->set_bytes_after(report.bytes_after);
    if (!report.status.ok()) counters->Rejected(report.status.code());
    reactor->Finish(ToGrpcStatus(report.status));
  };
}

constexpr size_t kMaxProblems = 20;

}  // namespace

absl::Status JitCacheService::CheckAdmin(
    const grpc::CallbackServerContext& context, absl::string_view what) const {
  std::optional<PeerCredentials> peer = PeerOfCall(context);
  std::string who = "root, the daemon's own user (uid " +
                    std::to_string(options_.admin.daemon_uid) + ")";
  if (options_.admin.admin_gid.has_value()) {
    absl::StrAppend(&who, " and members of group ", options_.admin.admin_group);
  }
  if (!peer.has_value()) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " is for administrators (", who,
                     "), and this connection's user is not known"));
  }
  if (!IsAdmin(*peer, options_.admin)) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " is for administrators (", who, "); uid ",
                     peer->uid, " is not one"));
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* JitCacheService::Evict(
    grpc::CallbackServerContext* context, const v1::EvictRequest* request,
    v1::EvictResponse* response) {
  if (absl::Status s = CheckAdmin(*context, "evict"); !s.ok()) {
    return Finish(context, s);
  }
  if (!request->has_to_size_bytes() && request->older_than_seconds() <= 0) {
    return Finish(context,
                  absl::InvalidArgumentError(
                      "evict needs a size to reach or an age (older than)"));
  }
  if (options_.janitor == nullptr) {
    return Finish(context,
                  absl::UnimplementedError("this daemon has no janitor"));
  }
  std::optional<uint64_t> to_size;
  if (request->has_to_size_bytes()) to_size = request->to_size_bytes();
  std::optional<absl::Time> older_than;
  if (request->older_than_seconds() > 0) {
    older_than = options_.now() - absl::Seconds(request->older_than_seconds());
  }
  // Eviction and compaction take a while: the janitor's thread does them
  // and finishes the call, so no gRPC thread waits.
  auto* reactor = context->DefaultReactor();
  options_.janitor->EvictNow(to_size, older_than,
                             FinishEviction(&counters_, reactor, response));
  return reactor;
}

grpc::ServerUnaryReactor* JitCacheService::Clear(
    grpc::CallbackServerContext* context, const v1::ClearRequest* /*request*/,
    v1::EvictResponse* response) {
  if (absl::Status s = CheckAdmin(*context, "clear"); !s.ok()) {
    return Finish(context, s);
  }
  if (options_.janitor == nullptr) {
    return Finish(context,
                  absl::UnimplementedError("this daemon has no janitor"));
  }
  auto* reactor = context->DefaultReactor();
  options_.janitor->ClearNow(FinishEviction(&counters_, reactor, response));
  return reactor;
}

grpc::ServerUnaryReactor* JitCacheService::GetConfig(
    grpc::CallbackServerContext* context, const v1::ConfigRequest* /*request*/,
    v1::ConfigResponse* response) {
  if (absl::Status s = CheckAdmin(*context, "config"); !s.ok()) {
    return Finish(context, s);
  }
  for (const auto& [name, value] : options_.config) {
    auto* setting = response->add_settings();
    setting->set_name(name);
    setting->set_value(value);
  }
  return Finish(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* JitCacheService::ImportEntries(
    grpc::CallbackServerContext* context, const v1::ImportRequest* request,
    v1::ImportResponse* response) {
  // Imported entries are trusted like compiles: a key names what its
  // program compiles to, and nobody can check that without compiling. Only
  // an administrator may vouch for a bundle.
  if (absl::Status s = CheckAdmin(*context, "import"); !s.ok()) {
    return Finish(context, s);
  }
  for (const v1::BundleEntry& entry : request->entries()) {
    if (absl::Status s = ImportEntry(entry, response); !s.ok()) {
      // A store that cannot be written (a full disk): stop; what is
      // imported is whole, entry by entry.
      return Finish(context, s);
    }
  }
  return Finish(context, absl::OkStatus());
}

absl::Status JitCacheService::ImportEntry(const v1::BundleEntry& entry,
                                          v1::ImportResponse* response) {
  return ImportBundleEntry(
      *options_.store, options_.compiler->toolchain().fingerprint,
      absl::ToUnixMillis(options_.now()), entry, kMaxProblems, response);
}

}  // namespace jitcache
