#ifndef JITCACHE_SERVER_RPC_PTXAS_REQUEST_H_
#define JITCACHE_SERVER_RPC_PTXAS_REQUEST_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/rpc/request_limits.h"

namespace jitcache {

// A ptxas request, checked, with its keys. The file names are keyed only
// when an answer showed them: the
// first run is keyed without them (`key`), and when its answer shows any
// of `names`, it is kept under `named_key` instead and `key` says only
// that the names matter (PtxasRun.names_matter).
struct PreparedPtxas {
  Digest key;
  std::optional<Digest> named_key;  // set unless the request keyed names
  std::vector<std::string> names;   // what would show the names
  PtxasJob job;
};

// FAILED_PRECONDITION for a ptxas this daemon does not run (or a file that
// is no longer the one it registered), and for a command line it cannot
// key (the caller runs its own ptxas); INVALID_ARGUMENT for a malformed
// request. Pure; thread-safe.
absl::StatusOr<PreparedPtxas> PreparePtxas(const v1::PtxasRequest& request,
                                           const ToolchainInfo& toolchain,
                                           const RequestLimits& limits);

// Whether a run's answer shows any of `names`: its stderr, stdout or
// output file holds one of them.
bool AnswerShowsNames(const CompileResult& result,
                      const std::vector<std::string>& names);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_PTXAS_REQUEST_H_
