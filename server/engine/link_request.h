#ifndef JITCACHE_SERVER_ENGINE_LINK_REQUEST_H_
#define JITCACHE_SERVER_ENGINE_LINK_REQUEST_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/build/source_stats.h"
#include "server/engine/action.h"
#include "server/engine/request_limits.h"

namespace jitcache {

struct PreparedLink {
  Digest key;
  ObjectKind target = ObjectKind::kCubin;
  std::vector<std::string> options;  // canonical
  std::string arch;                  // "sm_90"
  // In link order; the bytes come from the store when the link runs.
  struct Input {
    Digest digest;
    ObjectKind kind;
    std::string name;
    bool typed_by_content = false;  // LinkInput.typed_by_content
    // As called, PTX that names source files: the caller's stat of each
    // (LinkInput.sources), in order.
    std::vector<SourceStat> sources;
  };
  std::vector<Input> inputs;
  // Inputs that came inline: stored before the link, like uploads.
  struct Inline {
    Digest digest;
    ObjectKind kind;
    std::string bytes;
  };
  std::vector<Inline> inline_objects;
  // nvJitLink's C API as the caller drove it (LinkRequest.as_called): the
  // options above are as spelled, and the answer is a trace.
  bool as_called = false;
  bool steps_only = false;  // `key` names the first steps, not a link
  // As called, whole: the keys of its first steps (nvJitLinkCreate, then
  // with each input added), under which their part of the trace is kept.
  std::vector<Digest> step_keys;
  // As called, `key` and `step_keys` leave the inputs' names out; these
  // hold them, for answers that show them (a proof tells, as for a
  // compile's place: the link run again with other names).
  std::optional<Digest> named_key;
  std::vector<Digest> named_step_keys;
};

// `link` with every input under another name (other length, directory and
// stem, the same extension), where no caller's input would be named: the
// link a proof runs beside the caller's to tell whether its answer shows
// the names. Pure.
PreparedLink RenamedElsewhere(const PreparedLink& link);

// Validates a Link request and computes its key; INVALID_ARGUMENT naming the
// input or option for any bad input. Pure; thread-safe.
absl::StatusOr<PreparedLink> PrepareLink(const v1::LinkRequest& request,
                                         const ToolchainInfo& toolchain,
                                         const RequestLimits& limits);

// The link's inputs as a miss needs them (CacheEngine::FindMissingInputs):
// those that came inline are at hand.
std::vector<NeededInput> NeededInputsOf(const PreparedLink& link);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_LINK_REQUEST_H_
