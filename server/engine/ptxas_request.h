#ifndef JITCACHE_SERVER_ENGINE_PTXAS_REQUEST_H_
#define JITCACHE_SERVER_ENGINE_PTXAS_REQUEST_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "common/ptxas_command.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/engine/request_limits.h"

namespace jitcache {

// A ptxas request, checked, with its key: what a hit needs, and nothing
// copied out of the request. The file names are keyed only when an answer
// showed them: a first run is keyed without them, and when its answer
// shows any of PtxasMiss::names, it is kept under PtxasMiss::named_key
// instead and the nameless key says only that the names matter
// (PtxasRun.names_matter).
struct PreparedPtxas {
  Digest key;
  // With names (request.with_names()): the key of their last parts alone,
  // which holds an answer that showed those and not the directories (any
  // spelling of the same base names shares it); looked up first.
  std::optional<Digest> base_named_key;
  const ToolchainInfo::Library* ptxas = nullptr;  // the toolchain's
  PtxasCommand command;
  // Where the caller's files are, in the compile view: absolute, normal.
  std::string input_path, output_path;
  std::vector<std::string> source_paths;  // in request.sources() order
};

// FAILED_PRECONDITION for a ptxas this daemon does not run (or a file that
// is no longer the one it registered), and for a command line it cannot
// key (the caller runs its own ptxas); INVALID_ARGUMENT for a malformed
// request. Pure; thread-safe.
absl::StatusOr<PreparedPtxas> PreparePtxas(const v1::PtxasRequest& request,
                                           const ToolchainInfo& toolchain,
                                           const RequestLimits& limits);

// What the request that leads a miss adds: the run itself, and where its
// answer goes when it shows the names.
struct PtxasMiss {
  PtxasJob job;
  std::optional<Digest> named_key;       // set unless the request keyed names
  std::optional<Digest> base_named_key;  // the names' last parts
  std::vector<std::string> names;        // what would show the names
  // The input's and output's names as spelled.
  std::vector<std::string> spelled;
};
PtxasMiss MakePtxasMiss(const v1::PtxasRequest& request,
                        const PreparedPtxas& prepared);

// Whether a run's answer shows any of `names`: its stderr, stdout or
// output file holds one of them.
bool AnswerShowsNames(const ActionResult& result,
                      const std::vector<std::string>& names);

// Whether an answer that shows names shows them by their last parts alone:
// for each name spelled with a directory (lexically normal), the answer
// holds neither the spelling nor any tail of it longer than the last part;
// a name spelled without one (its spelling is its last part) must not show
// at all, since it cannot tell the two apart.
bool AnswerShowsBaseNamesOnly(const ActionResult& result,
                              const std::vector<std::string>& spelled);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_PTXAS_REQUEST_H_
