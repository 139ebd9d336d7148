#ifndef JITCACHE_SERVER_ENGINE_ACTION_H_
#define JITCACHE_SERVER_ENGINE_ACTION_H_

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/digest.h"
#include "common/object_kind.h"
#include "server/build/compiler.h"
#include "server/engine/user_stats.h"

namespace jitcache {

// An input a miss needs, named by digest (a link's object): `at_hand` when
// the request carried its bytes.
struct NeededInput {
  Digest digest;
  std::string name;
  bool at_hand = false;
};

// What the cache engine runs on a miss, for one key: a compile, a link, a
// ptxas run or a libNVVM call sequence. The engine does the same for every
// kind (look up, join or run, record, keep, publish); what only one kind
// has is in its alternative of `kind`, so a new kind is a new alternative,
// not a new flag. `run` is the action itself (the caller's request bound to
// the compiler); its ActionResult mirrors the record the store keeps.
struct Action {
  struct Compile {};
  struct Link {
    std::vector<std::string> input_digests;  // raw, in order
    // An as-called link's first steps: where their part of its trace is
    // kept, for libnvJitLink.so.13 to answer each call of a later link;
    // and, for a link keyed without its inputs' names, their keys with the
    // names, where they go when the names show.
    std::vector<Digest> step_keys;
    std::vector<Digest> placed_step_keys;
  };
  struct Ptxas {
    // A run keyed without its names: where its answer goes when it shows
    // them, and what would show them; the key of the names' last parts,
    // where an answer that shows those and not the spelled directories
    // goes, and the names as spelled.
    std::optional<Digest> named_key;
    std::vector<std::string> names;
    std::optional<Digest> base_named_key;
    std::vector<std::string> spelled_names;
  };
  struct Nvvm {};
  using Run = std::function<absl::StatusOr<ActionResult>(absl::Time deadline)>;

  Digest key;
  std::variant<Compile, Link, Ptxas, Nvvm> kind;
  ObjectKind target = ObjectKind::kCubin;
  std::string arch;
  std::string program_name;
  std::vector<std::string> options;  // canonical
  uint64_t source_bytes = 0;
  Run run;

  // Whether the answer depends on the caller's place (or a link's on its
  // inputs' names), proven by running the same action elsewhere beside
  // `run` (place_proof.h). `placed_key`: where the answer goes when it
  // does; `run_elsewhere`: the proof (for a compile, under another program
  // name too), null when the place cannot be moved (the answer is then
  // kept for its place).
  std::optional<Digest> placed_key;
  Run run_elsewhere;
  // A compile's: elsewhere under the same program name, run where
  // `run_elsewhere` gave another answer (or could not be made): when it
  // agrees, the answer depends on the name alone and goes under
  // `named_key`.
  std::optional<Digest> named_key;
  Run run_elsewhere_named;
  // The program's name in `run_elsewhere`, `run_elsewhere_named` and
  // `run_elsewhere_same_directory` (a compile's): a log that differs by the
  // names alone is kept once, written for each caller's name.
  std::string elsewhere_program_name;
  std::string elsewhere_named_program_name;
  std::string same_directory_program_name;
  // A compile's: here, every file's time moved, run where nothing
  // elsewhere agreed: when it agrees, the answer depends on the place but
  // not on the times (a file spelled by its absolute path inside the
  // place, which no proof elsewhere can move) and goes under
  // `place_key_without_times`.
  std::optional<Digest> place_key_without_times;
  Run run_here_other_times;
  // `key` is a place's own key (its answer depends on the place), or the
  // working directory's.
  bool keyed_by_place = false;
  bool keyed_by_working_directory = false;
  bool keyed_by_program_name = false;
  bool keyed_without_file_times = false;
  // The same elsewhere but in the same working directory (only for a
  // program whose directory can move alone), run beside the other two:
  // when only it agrees, the answer goes under `working_directory_key`.
  std::optional<Digest> working_directory_key;
  Run run_elsewhere_same_directory;
  // The leader asked to be answered only once the key is final
  // (CompileRequest.wait_for_proof); otherwise it is answered when its own
  // run ends, under `placed_key`, if the proof is still running.
  bool wait_for_proof = false;

  // Who led it: charged its compile time.
  uid_t uid = 0;
  UserStats::Counters* user = nullptr;

  bool is_link() const { return std::holds_alternative<Link>(kind); }
  bool is_ptxas() const { return std::holds_alternative<Ptxas>(kind); }
  const Link* link() const { return std::get_if<Link>(&kind); }
  const Ptxas* ptxas() const { return std::get_if<Ptxas>(&kind); }
  // "compile", "link", "ptxas run", "libNVVM compile": for the log.
  const char* Noun() const {
    static constexpr const char* kNouns[] = {"compile", "link", "ptxas run",
                                             "libNVVM compile"};
    return kNouns[kind.index()];
  }
  // "compiled", "linked", "ran ptxas for", "ran libNVVM for": the log's
  // line for one that ran.
  const char* Done() const {
    static constexpr const char* kDone[] = {"compiled", "linked",
                                            "ran ptxas for", "ran libNVVM for"};
    return kDone[kind.index()];
  }
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_ACTION_H_
