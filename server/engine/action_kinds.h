#ifndef JITCACHE_SERVER_ENGINE_ACTION_KINDS_H_
#define JITCACHE_SERVER_ENGINE_ACTION_KINDS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"
#include "server/build/kept_file_sets.h"
#include "server/engine/action.h"
#include "server/engine/cache_engine.h"
#include "server/engine/compile_request.h"
#include "server/engine/hot_answers.h"
#include "server/engine/link_request.h"
#include "server/engine/nvvm_request.h"
#include "server/engine/ptxas_request.h"
#include "server/store/object_store.h"

namespace jitcache {

// What each kind of action is to the engine, for both doors alike: which
// of a request's keys holds its answer (a compile's place-free key, its
// program name's, its working directory's or its place's; a link's without
// names or with them; a ptxas run's base names first), and the Action a miss
// runs (the request bound to the compiler, with its proofs). Thread-safety:
// every method from any thread.
class ActionKinds {
 public:
  // Which of a compile's keys holds its answer (PreparedCompile): the one
  // without place or name, the program's name's, the working directory's,
  // the place's without the files' times, the whole place's.
  enum class KeyLevel {
    kPlaceFree,
    kNamed,
    kWorkingDirectory,
    kPlaceWithoutTimes,
    kPlace
  };

  // Not owned; all outlive this. `proves_places`: whether the compiler runs
  // each compile in a view of the caller's place (compile workers), so that
  // an action run elsewhere proves whether an answer depends on the place.
  ActionKinds(CacheEngine* engine, Compiler* compiler, ObjectStore* store,
              bool proves_places, size_t kept_file_sets)
      : engine_(engine),
        compiler_(compiler),
        store_(store),
        proves_places_(proves_places),
        kept_file_sets_(kept_file_sets) {}

  static const Digest& KeyAt(const PreparedCompile& prepared, KeyLevel level);
  static const Digest& LinkKeyAt(const PreparedLink& link, bool named);

  // The stored answer for a compile: under its place-free key, or under
  // the key its record says the answer depends on; null on a miss. A log
  // kept as a template is written for this request's program name.
  // `level` (optional) says which key answered or is to be run.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> CompileHit(
      const PreparedCompile& prepared, KeyLevel* level = nullptr);
  // Whether `answer`, of a place-free build, was kept for another place
  // than `prepared`'s (it depends on its place): the caller is then served
  // under its own place's key (CompileHitForOwnPlace), on either door.
  static bool AnsweredForAnotherPlace(const v1::CompileResponse& answer,
                                      const PreparedCompile& prepared);
  // After such an answer: the place-free key says now which key holds this
  // place's answer, and where it says nothing the build kept it for its own
  // place alone (kPlace). `level` receives the key to run on a miss.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> CompileHitForOwnPlace(
      const PreparedCompile& prepared, KeyLevel* level);
  // An as-called link's stored answer: under its key without names, or
  // under its names' key where the record there says the names show (or
  // no proof could run); null on a miss. `named` says which key answered
  // or is to be run.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> LinkHit(
      const PreparedLink& link, bool* named);
  // A ptxas run's stored answer: under its base names' key first (with
  // names), else its own key; null on a miss. A record that says the names
  // matter is an answer here: the caller asks again with its names.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> PtxasHit(
      const PreparedPtxas& prepared);

  // The included files a compile's miss runs with: a set kept from an
  // earlier request of the same files, else null (the request's own, or
  // the caller is asked for them).
  std::shared_ptr<const FileSet> KeptFiles(const PreparedCompile& prepared) {
    return kept_file_sets_.Find(prepared.included_set);
  }

  // The Action of a compile's miss under the key of `level` (kPlaceFree:
  // with its proofs); `files` are its included files, kept for the next
  // miss (from the request when null, and then set).
  Action CompileAction(const v1::CompileRequest& request,
                       const PreparedCompile& prepared,
                       std::shared_ptr<const FileSet>& files, KeyLevel level);
  // A link's: `named`, under the key with the inputs' names; otherwise
  // keyed without them, with a proof (the link again under other names).
  // Its run keeps the inputs that came inline first (like uploads, so that
  // a later link can name them).
  Action LinkAction(std::shared_ptr<const PreparedLink> link, bool named);
  Action PtxasAction(const v1::PtxasRequest& request,
                     const PreparedPtxas& prepared);
  // A libNVVM request's (it came with its modules).
  Action NvvmAction(const v1::NvvmRequest& request,
                    const PreparedNvvm& prepared);
  // The link itself (also what a disproof runs again).
  absl::StatusOr<ActionResult> RunLink(const PreparedLink& link,
                                       absl::Time deadline);

 private:
  // CompileHit's answer as the store keeps it (a log template unwritten).
  absl::StatusOr<std::shared_ptr<const HotAnswer>> CompileHitAsKept(
      const PreparedCompile& prepared, KeyLevel* level);
  // Keeps the inputs that came with a link; a failed write is only logged.
  void KeepInlineInputs(const PreparedLink& link);

  CacheEngine* const engine_;
  Compiler* const compiler_;
  ObjectStore* const store_;
  const bool proves_places_;
  KeptFileSets kept_file_sets_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_ACTION_KINDS_H_
