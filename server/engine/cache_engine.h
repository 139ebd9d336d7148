#ifndef JITCACHE_SERVER_ENGINE_CACHE_ENGINE_H_
#define JITCACHE_SERVER_ENGINE_CACHE_ENGINE_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "jitcache/v1/store.pb.h"
#include "server/build/compile_pool.h"
#include "server/build/compiler.h"
#include "server/engine/action.h"
#include "server/engine/bounded_key_set.h"
#include "server/engine/hot_answers.h"
#include "server/engine/service_counters.h"
#include "server/engine/single_flight.h"
#include "server/engine/user_stats.h"
#include "server/store/object_store.h"
#include "server/store/remote_tier.h"
#include "server/store/tiered_store.h"

namespace jitcache {

// An answer whose log is a template (its record's log_names_program), the
// log written for a program named `program_name`, and log_program_name
// set to it; any other answer as it is.
void WriteLogFor(v1::CompileResponse& response, absl::string_view program_name);
std::shared_ptr<const HotAnswer> AnswerFor(
    std::shared_ptr<const HotAnswer> answer, absl::string_view program_name);

struct EngineOptions {
  ObjectStore* store = nullptr;  // not owned; outlives the engine
  Compiler* compiler = nullptr;  // not owned; outlives the engine
  CompilePool* pool = nullptr;   // not owned; outlives the engine
  // The team's tier behind the store; null: none. Not owned.
  RemoteTier* remote = nullptr;
  // Not owned; outlives the engine. What it did, counted.
  ServiceCounters* counters = nullptr;
  // An action running longer is cancelled and answered DEADLINE_EXCEEDED.
  absl::Duration compile_time_limit = absl::Minutes(10);
  // Bytes of hit answers kept in memory (HotAnswers); 0: none.
  uint64_t hot_cache_size = 0;
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Threads for the actions run elsewhere (place_proof.h) and for checking
  // disproved records: an action's own thread waits for its proofs, so
  // they cannot share the pool. Two for each of the pool's (a miss runs up
  // to two proofs), so that no proof waits for another.
  int proof_threads = 4;
  size_t max_queued_proofs = 1024;
};

// The cache itself, with no transport: look up, join or run, record, keep
// and publish, for every kind of Action alike. The gRPC service and the
// framed socket are thin doors in front of it (server/rpc/): they decode a
// request, make its Action, ask the engine, and encode its answer.
//
// A lookup answers from memory (HotAnswers) while the store still holds
// what the answer was built from, else from the store. A miss joins the
// single flight for its key: the first joiner's Action is queued on the
// pool, and the thread that runs it stores the result and completes every
// waiter. No caller's thread waits for a run. A waiter that leaves (its
// caller cancelled) is answered by its door; the run goes on for the others
// and for the store.
// Thread-safety: every method from any thread.
class CacheEngine {
 public:
  using SharedResult =
      absl::StatusOr<std::shared_ptr<const v1::CompileResponse>>;
  using Waiter = SingleFlight<SharedResult>::Waiter;

  explicit CacheEngine(EngineOptions options);
  CacheEngine(const CacheEngine&) = delete;
  CacheEngine& operator=(const CacheEngine&) = delete;

  // The stored answer for `key`, or nullopt on a miss; `record` (optional)
  // receives the record it was made from. A record whose object is gone is
  // removed (a miss: the next caller runs it again).
  absl::StatusOr<std::optional<v1::CompileResponse>> LookUp(
      const Digest& key, v1::ActionRecord* record = nullptr);
  // A hit's answer for `key`: from memory while the store still holds what
  // it was built from, else from the store (then kept in memory); null on
  // a miss.
  absl::StatusOr<std::shared_ptr<const HotAnswer>> HitAnswer(const Digest& key);

  // Joins the flight for `key` (a miss) with `waiter`; the joiner that
  // leads queues the Action `make_action` makes, charged to `uid` (whose
  // counters `user` are). `waiter` is called once, from the thread that
  // ends the run (or this one, when the pool refuses it). A compile's
  // flight may end with a log template (WriteLogFor): a compile's waiter
  // gives its program's name as `log_for`, and is handed the log written
  // for it.
  void Join(uid_t uid, UserStats::Counters& user, const Digest& key,
            Waiter waiter, const std::function<Action()>& make_action,
            std::string log_for = "");
  // The one way a caller sends what a miss lacks, for every kind and both
  // doors: a miss whose inputs (named by digest) the store does not hold
  // is answered NOT_FOUND naming the first one missing (a read that
  // verifies: a damaged object is missing), before anything runs; the
  // caller sends the inputs' bytes with the same request and asks again.
  // (A compile's included files go the same way: NOT_FOUND, with the
  // jitcache-send-included trailer; a libNVVM program's modules too.)
  absl::Status FindMissingInputs(const std::vector<NeededInput>& inputs);

  // A flight for `key` is under way.
  bool Running(const Digest& key) { return flights_.Open(key); }
  size_t waiters() const { return flights_.waiters(); }

  // An as-called link that read the caller's files (it is refused at once
  // from now on: the caller's own nvJitLink links it).
  bool ReadsCallersFiles(const Digest& key) const {
    return callers_own_links_.Has(key);
  }
  // A caller's own nvJitLink answered otherwise than `recorded`, the answer
  // kept under `key` (its first steps under `step_keys`): runs `again` on
  // the proof threads and, when that answer is not the record's, removes
  // the record, its first steps' and the team tier's copy (at most
  // kMaxDisproofs checks at once; more are not checked: a caller can cost a
  // few links, never the proof threads).
  void CheckDisproof(uid_t uid, const Digest& key,
                     std::vector<Digest> step_keys, Action::Run again,
                     std::shared_ptr<const HotAnswer> recorded);

  // Makes running actions stop (they answer UNAVAILABLE); their runs watch
  // `cancelled()`. Queued ones are cancelled by the pool's own Shutdown.
  void CancelRunning() { shutting_down_.store(true); }
  const std::atomic<bool>* cancelled() const { return &shutting_down_; }

  const HotAnswers& hot_answers() const { return hot_answers_; }
  // The store with the team's tier behind it; null without one.
  const TieredStore* tiered() const { return tiered_.get(); }

 private:
  // Where an action's answer goes once the place is decided: the flight's
  // key, the working directory's or the place's; `marker`: the flight's
  // key says which.
  struct PlaceVerdict {
    bool placed = false;
    bool working_directory_only = false;
    bool program_name_only = false;
    bool marker = false;
    // Its log kept as a template (LogTemplate), written for each caller.
    bool log_names_program = false;
    // Under the place's key without the files' times.
    bool without_file_times = false;
  };
  using Proof = std::shared_future<absl::StatusOr<ActionResult>>;
  // An action's proofs (Action::run_elsewhere and the others), each started
  // when it is needed: those beside the action with its deadline, later
  // ones with their own (LateProofDeadline).
  struct Proofs {
    Proof elsewhere;
    Proof named;
    Proof same_directory;
  };

  // Where an action's answer was kept: its key, and for a ptxas run whose
  // answer shows its names, the key of those names and what went there.
  struct Kept {
    Digest answer_key;
    bool stored = false;
    const Digest* named_at = nullptr;
    std::optional<v1::ActionRecord> named;
  };

  // Runs on a pool worker: runs, stores, answers the flight, publishes.
  void RunAction(const Action& action);
  // The store (written since the miss) or the team's tier (checked, and
  // stored here like an import) had the action's key: its flight is
  // answered. False when neither had it; `leased`: this node now holds the
  // key's lease and must publish or release it.
  bool AnsweredByTier(const Action& action, bool* leased);
  // Runs the action, its first proofs beside it (started into `proofs`),
  // timed, counted and logged.
  absl::StatusOr<ActionResult> RunWithProofs(const Action& action,
                                             Proofs& proofs);
  // Keeps a result (`record`, `objects`) under the key the verdict says,
  // with its first steps; a ptxas answer that shows its names goes under
  // their key, and `record` keeps only that it does.
  Kept Keep(const Action& action, ActionResult& result,
            const PlaceVerdict& place, v1::ActionRecord& record,
            std::vector<ObjectRef>& objects);
  // The record an action's result is kept as (its objects apart).
  v1::ActionRecord RecordOf(const Action& action,
                            const ActionResult& result) const;
  // Starts `run` on a proof thread.
  Proof RunElsewhere(const Action& action, Action::Run run,
                     absl::Time deadline);
  PlaceVerdict DecidePlace(const Action& action,
                           const absl::StatusOr<ActionResult>& here,
                           Proofs& proofs);
  // DecidePlace's steps, each a verdict or nullopt (the next step decides):
  // the proof elsewhere under another name; elsewhere under the same name
  // (started here where needed); the working directory kept, then here
  // with other times.
  std::optional<PlaceVerdict> VerdictElsewhere(
      const Action& action, const absl::StatusOr<ActionResult>& here,
      Proofs& proofs);
  std::optional<PlaceVerdict> VerdictUnderTheName(
      const Action& action, const absl::StatusOr<ActionResult>& here,
      Proofs& proofs);
  std::optional<PlaceVerdict> VerdictInThePlace(
      const Action& action, const absl::StatusOr<ActionResult>& here,
      Proofs& proofs);
  // A proof that failed: nothing proven, kept for this place (no marker).
  PlaceVerdict Unproven(const Action& action, const absl::Status& status);
  // Whether a proof gave `here`'s answer (a link's: under other names).
  static bool Agrees(const Action& action, const ActionResult& here,
                     const absl::StatusOr<ActionResult>& there);
  // Whether a compile's proof (its program named `there_program_name`) gave
  // `here`'s answer but for the program's name in the log
  // (SameAnswerButTheName).
  static bool AgreesButTheName(const Action& action, const ActionResult& here,
                               const absl::StatusOr<ActionResult>& there,
                               const std::string& there_program_name);
  // Whether the proof under the same name is still to run: the one under
  // another name ran and did not agree (or never ran).
  bool NamedProofNeeded(const Action& action, const ActionResult& here,
                        const Proofs& proofs) const;
  // A proof started once an earlier one ended: its own time limit, not
  // what is left of the action's.
  absl::Time LateProofDeadline() const;
  // A miss whose proof still runs when its own run ends: its answer is
  // kept under its place's key (and its first steps under theirs), and the
  // leader answered from there at once, so that the proof adds nothing to
  // its wait; the flight's other waiters wait for the verdict. False
  // (nothing done) when the proof has ended, the leader asked to wait, or
  // the store refused the answer.
  bool AnswerLeaderBeforeProof(const Action& action,
                               const v1::ActionRecord& record,
                               const std::vector<ObjectRef>& objects,
                               const ActionResult& here, Proofs& proofs);
  // After the verdict: the answer kept early under the place's key goes
  // when the verdict kept it elsewhere (it is found there now). Its first
  // steps stay: their keys are prefixes other links share, and each holds
  // for its names.
  void DropEarlyAnswer(const Action& action);
  // Keeps the trace of each of an as-called link's first steps under its
  // own key (Action::Link::step_keys), after the whole link was stored.
  // `placed`: the names showed, or no proof could tell (the steps go under
  // their names' keys); `marker`: the keys without names say so.
  void KeepFirstSteps(const Action& action, const v1::ActionRecord& whole,
                      bool placed, bool marker);
  // A disproved record (CheckDisproof), its first steps' and the team
  // tier's copy, removed when the store still holds the one compared.
  void RemoveDisproved(const Digest& key, const std::vector<Digest>& step_keys,
                       const HotAnswer& recorded);
  // The team's tier gets what was kept, or its lease back.
  void Publish(const Action& action, const PlaceVerdict& place,
               const Kept& kept, const v1::ActionRecord& record);

  EngineOptions options_;
  ServiceCounters& counters_;
  HotAnswers hot_answers_{options_.hot_cache_size};
  SingleFlight<SharedResult> flights_;
  std::atomic<bool> shutting_down_{false};
  const std::unique_ptr<TieredStore> tiered_;
  // Links whose run read the caller's files: refused at once.
  BoundedKeySet callers_own_links_;
  // Records a caller disproved that a second link showed right, and how
  // many disproofs are being checked.
  BoundedKeySet refuted_disproofs_;
  std::atomic<int> disproofs_running_{0};
  static constexpr int kMaxDisproofs = 4;
  // Where actions run elsewhere (place_proof.h): long-lived threads, as a
  // compile worker lives only as long as the thread that started it.
  // Last: stopped first, while the rest of the engine is still there.
  CompilePool proofs_{options_.proof_threads, options_.max_queued_proofs};
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_CACHE_ENGINE_H_
