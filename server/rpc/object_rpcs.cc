// JitCacheService's content-addressed object RPCs: short store reads and
// writes, answered on the gRPC thread.
#include "absl/strings/str_cat.h"
#include "jitcache/v1/wire_kinds.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/jitcache_service.h"

namespace jitcache {

grpc::ServerUnaryReactor* JitCacheService::FindMissingObjects(
    grpc::CallbackServerContext* context,
    const v1::FindMissingObjectsRequest* request,
    v1::FindMissingObjectsResponse* response) {
  if (absl::Status s = CheckCount("digests", request->digests_size(),
                                  options_.limits.max_link_inputs);
      !s.ok()) {
    return Finish(context, s);
  }
  for (const std::string& hex : request->digests()) {
    absl::StatusOr<Digest> digest = Digest::FromHex(hex);
    if (!digest.ok()) return Finish(context, digest.status());
    // A read that verifies: a damaged object is reported missing (and
    // removed), so the client sends it again.
    absl::StatusOr<std::optional<StoredObject>> object =
        options_.store->GetObject(*digest);
    if (!object.ok()) return Finish(context, object.status());
    if (!object->has_value()) response->add_missing(hex);
  }
  return Finish(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* JitCacheService::UploadObject(
    grpc::CallbackServerContext* context,
    const v1::UploadObjectRequest* request,
    v1::UploadObjectResponse* /*response*/) {
  absl::StatusOr<Digest> claimed = Digest::FromHex(request->digest());
  if (!claimed.ok()) return Finish(context, claimed.status());
  std::optional<ObjectKind> kind = FromWireKind(request->kind());
  // Uploads are link inputs.
  if (!kind || !IsLinkInput(*kind)) {
    return Finish(
        context, absl::InvalidArgumentError("upload has no valid object kind"));
  }
  if (request->data().empty()) {
    return Finish(context, absl::InvalidArgumentError("upload has no bytes"));
  }
  const Digest actual = Digest::Of(request->data());
  if (actual != *claimed) {
    return Finish(context,
                  absl::DataLossError(absl::StrCat(
                      "uploaded bytes hash to ", actual.Hex(), ", not ",
                      claimed->Hex(), "; nothing was stored")));
  }
  const ObjectRef ref{actual, *kind, request->data()};
  return Finish(context, options_.store->PutObjects({&ref, 1}));
}

grpc::ServerUnaryReactor* JitCacheService::FetchObject(
    grpc::CallbackServerContext* context, const v1::FetchObjectRequest* request,
    v1::FetchObjectResponse* response) {
  absl::StatusOr<Digest> digest = Digest::FromHex(request->digest());
  if (!digest.ok()) return Finish(context, digest.status());
  absl::StatusOr<std::optional<StoredObject>> object =
      options_.store->GetObject(*digest);
  if (!object.ok()) return Finish(context, object.status());
  if (!object->has_value()) {
    return Finish(context,
                  absl::NotFoundError(absl::StrCat("object ", digest->Hex(),
                                                   " is not in the store")));
  }
  response->set_kind(ToWireKind((*object)->kind));
  response->set_data(std::move((*object)->bytes));
  return Finish(context, absl::OkStatus());
}

}  // namespace jitcache
