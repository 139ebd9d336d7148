#include "server/engine/cache_engine.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/nvrtc_program.h"
#include "jitcache/v1/wire_kinds.h"
#include "server/build/path_stats.h"
#include "server/engine/link_request.h"
#include "server/engine/object_last.h"
#include "server/engine/place_proof.h"
#include "server/engine/ptxas_request.h"

namespace jitcache {
namespace {

void FillFromRecord(const Digest& key, const v1::ActionRecord& record,
                    v1::CompileResponse* response) {
  response->set_outcome(record.outcome());
  response->set_log(record.log());
  *response->mutable_lowered_names() = record.lowered_names();
  response->set_cache_key(key.Hex());
  response->set_compile_time_us(record.compile_time_us());
  response->set_target(record.target());
  if (!record.object_digest().empty()) {
    response->set_object_digest(absl::BytesToHexString(record.object_digest()));
  }
  if (record.has_link_trace()) {
    *response->mutable_link_trace() = record.link_trace();
  }
  if (record.has_ptxas_run()) {
    *response->mutable_ptxas_run() = record.ptxas_run();
  }
  if (record.has_nvvm_run()) {
    *response->mutable_nvvm_run() = record.nvvm_run();
  }
  if (record.place_matters()) response->set_place_matters(true);
  if (record.working_directory_only()) {
    response->set_working_directory_only(true);
  }
  if (record.program_name_only()) response->set_program_name_only(true);
  if (record.place_without_times()) response->set_place_without_times(true);
  // A template (kProgramNameInLog where the name was), written for each
  // program by WriteLogFor.
  if (record.log_names_program()) {
    response->set_log_program_name(std::string(kProgramNameInLog));
  }
}

// What a place-free key keeps when the answer depends on the place: the
// entry's description (for `jitcache ls`), no answer (no outcome).
v1::ActionRecord PlaceMattersRecord(const v1::ActionRecord& answer) {
  v1::ActionRecord marker;
  marker.set_format_version(answer.format_version());
  marker.set_target(answer.target());
  marker.set_arch(answer.arch());
  *marker.mutable_options() = answer.options();
  marker.set_program_name(answer.program_name());
  marker.set_source_bytes(answer.source_bytes());
  marker.set_toolchain_fingerprint(answer.toolchain_fingerprint());
  marker.set_created_unix_ms(answer.created_unix_ms());
  marker.set_last_used_unix_ms(answer.last_used_unix_ms());
  marker.set_place_matters(true);
  marker.set_working_directory_only(answer.working_directory_only());
  marker.set_program_name_only(answer.program_name_only());
  marker.set_place_without_times(answer.place_without_times());
  return marker;
}

// The part of an as-called link's trace its first `inputs` adds made.
v1::NvJitLinkTrace FirstSteps(const v1::NvJitLinkTrace& whole, size_t inputs) {
  v1::NvJitLinkTrace first;
  first.set_handle_created(whole.handle_created());
  for (int i = 0; i < whole.steps_size() && static_cast<size_t>(i) <= inputs;
       ++i) {
    *first.add_steps() = whole.steps(i);
  }
  return first;
}

// A compile that failed because a file was not there. The compile sees
// only what the client sent; a file the client's scan could not foresee is
// missing for it but may be there for the caller. The requester gets the
// answer (the NVRTC library then asks the real NVRTC), but it is never
// stored: a later request, or the file appearing, must not meet it.
bool FailedForAMissingFile(const ActionResult& result) {
  return !result.ok && LogSaysAFileWasMissing(result.log);
}

// Whether a link run again answers as the record: every call's answer, both
// outputs' results and bytes, and the cubin.
bool SameLinkRecord(const v1::CompileResponse& recorded,
                    const ActionResult& again) {
  if (!again.link_trace.has_value()) return false;
  const std::string cubin_digest =
      again.ok && !again.object.empty() ? Digest::Of(again.object).Hex() : "";
  return recorded.link_trace().SerializeAsString() ==
             again.link_trace->SerializeAsString() &&
         recorded.object_digest() == cubin_digest;
}

}  // namespace

CacheEngine::CacheEngine(EngineOptions options)
    : options_(std::move(options)),
      counters_(*options_.counters),
      tiered_(options_.remote == nullptr
                  ? nullptr
                  : std::make_unique<TieredStore>(
                        options_.store, options_.remote,
                        options_.compiler->toolchain().fingerprint,
                        options_.now)) {}

absl::StatusOr<std::optional<v1::CompileResponse>> CacheEngine::LookUp(
    const Digest& key, v1::ActionRecord* record_out) {
  absl::StatusOr<std::optional<v1::ActionRecord>> record =
      options_.store->GetAction(key);
  if (!record.ok()) return record.status();
  if (!record->has_value()) return std::nullopt;
  v1::ActionRecord& r = **record;
  v1::CompileResponse response;
  // A record names its object, when it has one (an as-called link that
  // made no cubin has none), by digest.
  if (r.outcome() == v1::OUTCOME_OK && !r.object_digest().empty()) {
    std::optional<Digest> digest = Digest::FromBytes(r.object_digest());
    absl::StatusOr<std::optional<StoredObject>> object =
        digest.has_value()
            ? options_.store->GetObject(*digest)
            : absl::StatusOr<std::optional<StoredObject>>(std::nullopt);
    if (!object.ok()) return object.status();
    if (!object->has_value() || (*object)->bytes.size() != r.object_size()) {
      // The record outlived its object: drop it and build again.
      JITCACHE_LOG(Warning)
          << "entry " << key.Hex() << " lost its object; rebuilding";
      if (absl::Status s = options_.store->RemoveAction(key); !s.ok()) {
        JITCACHE_LOG(Warning)
            << "cannot remove entry " << key.Hex() << ": " << s;
      }
      return std::nullopt;
    }
    response.set_object(std::move((*object)->bytes));
  }
  // The store keeps the last use itself, off this path.
  FillFromRecord(key, r, &response);
  if (record_out != nullptr) *record_out = std::move(r);
  return response;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> CacheEngine::HitAnswer(
    const Digest& key) {
  if (std::shared_ptr<const HotAnswer> hot = hot_answers_.Find(key)) {
    if (options_.store->StillCurrent(key, hot->record_version)) {
      // A record that says the place matters is no hit of its own.
      if (!hot->place_marker) ++counters_.hot_hits;
      return hot;
    }
    hot_answers_.Drop(key);
  }
  const std::optional<uint64_t> version = options_.store->RecordVersion(key);
  absl::StatusOr<std::optional<v1::CompileResponse>> hit = LookUp(key);
  if (!hit.ok()) return hit.status();
  if (!hit->has_value()) return nullptr;
  (*hit)->set_served(v1::SERVED_HIT);
  auto answer = std::make_shared<HotAnswer>();
  answer->compile_time_us = (*hit)->compile_time_us();
  answer->outcome = (*hit)->outcome();
  answer->place_marker =
      (*hit)->place_matters() && (*hit)->outcome() == v1::OUTCOME_UNSPECIFIED;
  answer->marker_working_directory_only =
      answer->place_marker && (*hit)->working_directory_only();
  answer->marker_program_name_only =
      answer->place_marker && (*hit)->program_name_only();
  answer->marker_place_without_times =
      answer->place_marker && (*hit)->place_without_times();
  answer->log_template = (*hit)->log_program_name() == kProgramNameInLog;
  answer->serialized = SerializeObjectLast(std::move(**hit));
  if (version.has_value()) {
    answer->record_version = *version;
    hot_answers_.Keep(key, answer);
  }
  return answer;
}

void CacheEngine::Join(uid_t uid, UserStats::Counters& user, const Digest& key,
                       Waiter waiter,
                       const std::function<Action()>& make_action,
                       std::string log_for) {
  if (!log_for.empty()) {
    waiter = [log_for = std::move(log_for), waiter = std::move(waiter)](
                 const SharedResult& result, bool leader) {
      if (!result.ok() || (*result)->log_program_name() != kProgramNameInLog) {
        waiter(result, leader);
        return;
      }
      auto mine = std::make_shared<v1::CompileResponse>(**result);
      WriteLogFor(*mine, log_for);
      waiter(SharedResult(std::move(mine)), leader);
    };
  }
  if (!flights_.Join(key, std::move(waiter))) return;
  auto shared = std::make_shared<Action>(make_action());
  shared->uid = uid;
  shared->user = &user;
  CompilePool::Task task;
  task.run = [this, shared] { RunAction(*shared); };
  task.cancel = [this, shared] {
    flights_.Complete(shared->key,
                      absl::UnavailableError("the daemon is shutting down"));
  };
  if (absl::Status s = options_.pool->Submit(uid, std::move(task)); !s.ok()) {
    flights_.Complete(shared->key, s);
  }
}

v1::ActionRecord CacheEngine::RecordOf(const Action& action,
                                       const ActionResult& result) const {
  const int64_t now_ms = absl::ToUnixMillis(options_.now());
  v1::ActionRecord record;
  record.set_format_version(1);
  record.set_outcome(result.ok          ? v1::OUTCOME_OK
                     : action.is_link() ? v1::OUTCOME_LINK_ERROR
                                        : v1::OUTCOME_COMPILE_ERROR);
  record.set_target(ToWireTarget(action.target));
  record.set_log(result.log);
  for (const auto& [expr, lowered] : result.lowered_names) {
    v1::LoweredName* name = record.add_lowered_names();
    name->set_name_expression(expr);
    name->set_lowered_name(lowered);
  }
  if (const Action::Link* link = action.link()) {
    for (const std::string& input : link->input_digests) {
      record.add_input_digests(input);
    }
  }
  record.set_arch(action.arch);
  for (const std::string& option : action.options) record.add_options(option);
  record.set_program_name(action.program_name);
  record.set_source_bytes(action.source_bytes);
  record.set_toolchain_fingerprint(options_.compiler->toolchain().fingerprint);
  record.set_compile_time_us(absl::ToInt64Microseconds(result.elapsed));
  record.set_created_unix_ms(now_ms);
  record.set_last_used_unix_ms(now_ms);
  if (result.link_trace.has_value()) {
    *record.mutable_link_trace() = *result.link_trace;
  }
  if (result.ptxas_run.has_value()) {
    *record.mutable_ptxas_run() = *result.ptxas_run;
  }
  if (result.nvvm_run.has_value()) {
    *record.mutable_nvvm_run() = *result.nvvm_run;
  }
  return record;
}

bool CacheEngine::AnsweredByTier(const Action& action, bool* leased) {
  const Digest& key = action.key;
  // Another flight may have stored this key between our miss and now.
  absl::StatusOr<std::optional<v1::CompileResponse>> stored = LookUp(key);
  if (stored.ok() && stored->has_value()) {
    flights_.Complete(
        key, std::make_shared<const v1::CompileResponse>(**std::move(stored)));
    return true;
  }
  if (tiered_ == nullptr ||
      !tiered_->FetchOrLease(key, absl::Now() + options_.compile_time_limit,
                             shutting_down_, leased)) {
    return false;
  }
  // The team's tier had it: checked, and stored here, like an import.
  v1::ActionRecord whole;
  absl::StatusOr<std::optional<v1::CompileResponse>> fetched =
      LookUp(key, &whole);
  if (!fetched.ok() || !fetched->has_value()) return false;
  // An as-called link from another node: its first steps are kept here
  // too, so that this node's next caller is answered call by call.
  if (whole.has_link_trace()) KeepFirstSteps(action, whole, false, false);
  (*fetched)->set_served_remotely(true);
  flights_.Complete(
      key, std::make_shared<const v1::CompileResponse>(**std::move(fetched)));
  return true;
}

absl::StatusOr<ActionResult> CacheEngine::RunWithProofs(const Action& action,
                                                        Proofs& proofs) {
  ++counters_.compiles;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.compile_time_limit;
  // The proof runs beside the action itself, so a miss takes no longer;
  // the one under the same name only when there is no other.
  if (action.run_elsewhere || action.run_elsewhere_named) {
    ++counters_.place_proofs;
    ++counters_.place_proofs_running;
  }
  if (action.run_elsewhere) {
    proofs.elsewhere = RunElsewhere(action, action.run_elsewhere, deadline);
  } else if (action.run_elsewhere_named) {
    proofs.named = RunElsewhere(action, action.run_elsewhere_named, deadline);
  }
  if (action.run_elsewhere_same_directory) {
    proofs.same_directory =
        RunElsewhere(action, action.run_elsewhere_same_directory, deadline);
  }
  absl::StatusOr<ActionResult> result = action.run(deadline);
  const absl::Duration took = absl::Now() - start;
  counters_.compile_time.Observe(took);
  action.user->compile_us += absl::ToInt64Microseconds(took);
  if (!result.ok()) {
    if (action.is_link() && IsReadsCallersFiles(result.status())) {
      callers_own_links_.Remember(action.key);
    }
    JITCACHE_LOG(Warning) << action.Noun() << " " << action.key.Hex() << " uid "
                          << action.uid << " failed after " << took << ": "
                          << result.status();
    return result;
  }
  JITCACHE_LOG(Info) << action.Done() << " " << action.key.Hex() << " uid "
                     << action.uid << " " << action.arch << " in " << took
                     << (result->ok ? ""
                                    : (action.is_link() ? ": link error"
                                                        : ": compile error"));
  return result;
}

CacheEngine::Kept CacheEngine::Keep(const Action& action, ActionResult& result,
                                    const PlaceVerdict& place,
                                    v1::ActionRecord& record,
                                    std::vector<ObjectRef>& objects) {
  const Digest& key = action.key;
  const Action::Ptxas* ptxas = action.ptxas();
  Kept kept;
  // A ptxas answer that shows the names by their last parts alone is kept
  // for those: any spelling of the same base names shares it.
  const bool base_names_only =
      ptxas != nullptr && ptxas->base_named_key.has_value() &&
      AnswerShowsNames(result, ptxas->names) &&
      AnswerShowsBaseNamesOnly(result, ptxas->spelled_names);
  kept.answer_key =
      place.placed
          ? (place.working_directory_only ? *action.working_directory_key
             : place.program_name_only    ? *action.named_key
             : place.without_file_times   ? *action.place_key_without_times
                                          : *action.placed_key)
      : base_names_only && !ptxas->named_key.has_value()
          ? *ptxas->base_named_key
          : key;
  if (place.placed || action.keyed_by_place) record.set_place_matters(true);
  if (place.working_directory_only || action.keyed_by_working_directory) {
    record.set_working_directory_only(true);
  }
  if (place.program_name_only || action.keyed_by_program_name) {
    record.set_program_name_only(true);
  }
  if (place.without_file_times || action.keyed_without_file_times) {
    record.set_place_without_times(true);
  }
  // A key that holds less than the program's whole name (the name's key
  // holds an absolute name's base name; the working directory's, none) is
  // shared by programs of other names: a log that names the program is
  // kept as a template there, whoever ran it, proof or not.
  const bool shared_by_other_names =
      place.program_name_only || place.working_directory_only ||
      action.keyed_by_program_name || action.keyed_by_working_directory;
  if (place.log_names_program || shared_by_other_names) {
    if (std::optional<std::string> log_template =
            LogTemplate(record.log(), action.program_name)) {
      record.set_log(*std::move(log_template));
      record.set_log_names_program(true);
    }
  }
  // A ptxas answer that holds for the leader's names alone: kept under
  // them, and every requester of this flight (the leader too) asks again
  // with its own names.
  kept.named_at = ptxas == nullptr || !ptxas->named_key.has_value() ? nullptr
                  : base_names_only ? &*ptxas->base_named_key
                                    : &*ptxas->named_key;
  if (kept.named_at != nullptr && AnswerShowsNames(result, ptxas->names)) {
    if (absl::Status s =
            options_.store->PutResult(*kept.named_at, record, objects);
        !s.ok()) {
      JITCACHE_LOG(Debug) << "cannot store " << kept.named_at->Hex() << ": "
                          << s;
    } else {
      kept.named = record;
    }
    result.object.clear();
    objects.clear();
    record.clear_object_digest();
    record.clear_object_size();
    record.clear_log();
    record.clear_ptxas_run();
    record.mutable_ptxas_run()->set_names_matter(true);
  }
  // A compile that failed for a missing file is answered, never kept.
  const bool keep = !std::holds_alternative<Action::Compile>(action.kind) ||
                    !FailedForAMissingFile(result);
  absl::Status stored =
      keep ? options_.store->PutResult(kept.answer_key, record, objects)
           : absl::FailedPreconditionError("it failed for a missing file");
  if (stored.ok() && place.marker) {
    stored = options_.store->PutResult(key, PlaceMattersRecord(record),
                                       /*objects=*/{});
  }
  if (!stored.ok() && keep) {
    // The answer is still right; it is just not cached. The store logs
    // when its writes start and stop failing.
    JITCACHE_LOG(Debug) << "cannot store " << kept.answer_key.Hex() << ": "
                        << stored;
  }
  kept.stored = stored.ok();
  if (kept.stored && result.link_trace.has_value()) {
    KeepFirstSteps(action, record, place.placed, place.marker);
  }
  return kept;
}

void CacheEngine::RunAction(const Action& action) {
  const Digest& key = action.key;
  bool leased = false;
  if (AnsweredByTier(action, &leased)) return;
  Proofs proofs;
  // Under way until this action has kept its verdict, whichever way it
  // ends.
  absl::Cleanup proof_ended = [&] {
    if (action.run_elsewhere || action.run_elsewhere_named) {
      --counters_.place_proofs_running;
    }
  };
  absl::StatusOr<ActionResult> result = RunWithProofs(action, proofs);
  if (!result.ok()) {
    if (leased) tiered_->Release(key);
    flights_.Complete(key, result.status());
    return;
  }
  v1::ActionRecord record = RecordOf(action, *result);
  counters_.compile_us_spent += record.compile_time_us();
  std::vector<ObjectRef> objects;
  // No bytes, no object: an as-called link that made no cubin (refused,
  // failed, or PTX alone) has all it answers in its trace.
  if (result->ok && !result->object.empty()) {
    const Digest digest = Digest::Of(result->object);
    record.set_object_digest(std::string(digest.AsBytes()));
    record.set_object_size(result->object.size());
    objects.push_back({digest, action.target, result->object});
  }
  // (An answer that is not kept is not kept early either.)
  const bool answered_early =
      (!std::holds_alternative<Action::Compile>(action.kind) ||
       !FailedForAMissingFile(*result)) &&
      AnswerLeaderBeforeProof(action, record, objects, *result, proofs);
  // An action keyed without its place: kept there when the place did not
  // change the answer, else under its place's key.
  const PlaceVerdict place = DecidePlace(action, result, proofs);
  const Kept kept = Keep(action, *result, place, record, objects);
  if (answered_early && kept.stored &&
      (!place.placed || place.working_directory_only ||
       place.program_name_only || place.without_file_times)) {
    DropEarlyAnswer(action);
  }

  auto response = std::make_shared<v1::CompileResponse>();
  // (A log template stays one: each waiter has it written for its own
  // program, Join.)
  FillFromRecord(kept.answer_key, record, response.get());
  if (result->ok) response->set_object(std::move(result->object));
  flights_.Complete(key, std::shared_ptr<const v1::CompileResponse>(response));
  // The requesters have their answer; the cluster gets it in the background.
  if (leased) Publish(action, place, kept, record);
}

void CacheEngine::Publish(const Action& action, const PlaceVerdict& place,
                          const Kept& kept, const v1::ActionRecord& record) {
  const Digest& key = action.key;
  if (!kept.stored) {
    tiered_->Release(key);
    return;
  }
  if (place.placed) {
    tiered_->Publish(kept.answer_key, record);
    if (place.marker) {
      tiered_->Publish(key, PlaceMattersRecord(record));
    } else {
      tiered_->Release(key);
    }
    return;
  }
  tiered_->Publish(key, record);
  // Unleased: a node asks for it only once this key has said so.
  if (kept.named.has_value()) tiered_->Publish(*kept.named_at, *kept.named);
}

bool CacheEngine::AnswerLeaderBeforeProof(const Action& action,
                                          const v1::ActionRecord& record,
                                          const std::vector<ObjectRef>& objects,
                                          const ActionResult& here,
                                          Proofs& proofs) {
  // (Nor while the store cannot be written: the early copy is one write
  // more for a disk that refuses them, and would not be kept.)
  const Proof& first =
      proofs.elsewhere.valid() ? proofs.elsewhere : proofs.named;
  if (!action.placed_key.has_value() || !first.valid() ||
      action.wait_for_proof || options_.store->WritesFailing()) {
    return false;
  }
  // Ended, and no proof under the same name to run: the verdict is at hand
  // (DecidePlace waits for the compile that keeps the working directory
  // only where this one differs).
  if (first.wait_for(std::chrono::seconds(0)) == std::future_status::ready &&
      !NamedProofNeeded(action, here, proofs)) {
    return false;
  }
  // What a place's own key keeps: exact for this place, whatever the proof
  // says of others.
  v1::ActionRecord placed = record;
  placed.set_place_matters(true);
  if (absl::Status s =
          options_.store->PutResult(*action.placed_key, placed, objects);
      !s.ok()) {
    JITCACHE_LOG(Debug) << "cannot store " << action.placed_key->Hex() << ": "
                        << s;
    return false;
  }
  if (placed.has_link_trace()) {
    KeepFirstSteps(action, placed, /*placed=*/true, /*marker=*/false);
  }
  auto response = std::make_shared<v1::CompileResponse>();
  FillFromRecord(*action.placed_key, placed, response.get());
  response->set_proof_pending(true);
  if (here.ok) response->set_object(here.object);
  ++counters_.place_answered_before_proof;
  flights_.AnswerLeader(action.key, response);
  return true;
}

void CacheEngine::DropEarlyAnswer(const Action& action) {
  // The whole answer's key alone: first steps' keys are prefixes that other
  // links share (another link's marker may point at one), and a step's
  // record holds for its names whatever this verdict says.
  if (absl::Status s = options_.store->RemoveAction(*action.placed_key);
      !s.ok()) {
    JITCACHE_LOG(Debug) << "cannot remove " << action.placed_key->Hex() << ": "
                        << s;
  }
}

CacheEngine::Proof CacheEngine::RunElsewhere(const Action& action,
                                             Action::Run run,
                                             absl::Time deadline) {
  auto answer = std::make_shared<std::promise<absl::StatusOr<ActionResult>>>();
  Proof out = answer->get_future().share();
  CompilePool::Task task;
  task.run = [answer, run = std::move(run), deadline] {
    answer->set_value(run(deadline));
  };
  task.cancel = [answer] {
    answer->set_value(absl::UnavailableError("the daemon is shutting down"));
  };
  if (absl::Status s = proofs_.Submit(action.uid, std::move(task)); !s.ok()) {
    answer->set_value(s);
  }
  return out;
}

bool CacheEngine::Agrees(const Action& action, const ActionResult& here,
                         const absl::StatusOr<ActionResult>& there) {
  return there.ok() && (action.is_link() ? SameLinkAnswer(here, *there)
                                         : SameAnswer(here, *there));
}

bool CacheEngine::AgreesButTheName(const Action& action,
                                   const ActionResult& here,
                                   const absl::StatusOr<ActionResult>& there,
                                   const std::string& there_program_name) {
  return there.ok() && !action.is_link() &&
         SameAnswerButTheName(here, action.program_name, *there,
                              there_program_name);
}

void WriteLogFor(v1::CompileResponse& response,
                 absl::string_view program_name) {
  if (response.log_program_name() != kProgramNameInLog) return;
  response.set_log(LogFor(response.log(), program_name));
  response.set_log_program_name(std::string(program_name));
}

std::shared_ptr<const HotAnswer> AnswerFor(
    std::shared_ptr<const HotAnswer> answer, absl::string_view program_name) {
  if (answer == nullptr || !answer->log_template) return answer;
  v1::CompileResponse response;
  if (!response.ParseFromString(answer->serialized)) return answer;
  WriteLogFor(response, program_name);
  auto mine = std::make_shared<HotAnswer>();
  mine->record_version = answer->record_version;
  mine->compile_time_us = answer->compile_time_us;
  mine->outcome = answer->outcome;
  mine->serialized = SerializeObjectLast(std::move(response));
  return mine;
}

absl::Time CacheEngine::LateProofDeadline() const {
  return absl::Now() + options_.compile_time_limit;
}

bool CacheEngine::NamedProofNeeded(const Action& action,
                                   const ActionResult& here,
                                   const Proofs& proofs) const {
  if (!action.run_elsewhere_named || proofs.named.valid()) return false;
  if (!proofs.elsewhere.valid()) return true;
  const absl::StatusOr<ActionResult>& there = proofs.elsewhere.get();
  // A proof that failed proves nothing: no other runs after it.
  return there.ok() && !Agrees(action, here, there) &&
         !AgreesButTheName(action, here, there, action.elsewhere_program_name);
}

CacheEngine::PlaceVerdict CacheEngine::Unproven(const Action& action,
                                                const absl::Status& status) {
  // Nothing proven either way: kept for this place, asked again later.
  JITCACHE_LOG(Warning) << action.Noun() << " " << action.key.Hex()
                        << " elsewhere failed: " << status;
  ++counters_.place_kept;
  return {.placed = true, .marker = false};
}

std::optional<CacheEngine::PlaceVerdict> CacheEngine::VerdictElsewhere(
    const Action& action, const absl::StatusOr<ActionResult>& here,
    Proofs& proofs) {
  if (!proofs.elsewhere.valid()) return std::nullopt;
  const absl::StatusOr<ActionResult>& there = proofs.elsewhere.get();
  if (!there.ok()) return Unproven(action, there.status());
  if (here.ok() && Agrees(action, *here, there)) {
    ++counters_.place_shared;
    return PlaceVerdict{};
  }
  // The same but for the program's name in the log: shared, the log
  // written for each caller's name.
  if (here.ok() &&
      AgreesButTheName(action, *here, there, action.elsewhere_program_name)) {
    ++counters_.place_shared;
    JITCACHE_LOG(Debug) << "compile " << action.key.Hex() << " ("
                        << action.program_name
                        << ") names its program in its log alone";
    return PlaceVerdict{.log_names_program = true};
  }
  return std::nullopt;
}

std::optional<CacheEngine::PlaceVerdict> CacheEngine::VerdictUnderTheName(
    const Action& action, const absl::StatusOr<ActionResult>& here,
    Proofs& proofs) {
  if (here.ok() && NamedProofNeeded(action, *here, proofs)) {
    proofs.named =
        RunElsewhere(action, action.run_elsewhere_named, LateProofDeadline());
  }
  if (!proofs.named.valid()) return std::nullopt;
  const absl::StatusOr<ActionResult>& named = proofs.named.get();
  if (!named.ok()) return Unproven(action, named.status());
  // The same, or the same but for the program's name in the log (its
  // directory there): written for each caller's name.
  const bool same = here.ok() && Agrees(action, *here, named);
  if (!same &&
      !(here.ok() && AgreesButTheName(action, *here, named,
                                      action.elsewhere_named_program_name))) {
    return std::nullopt;
  }
  ++counters_.place_kept;
  ++counters_.place_name_kept;
  JITCACHE_LOG(Debug) << "compile " << action.key.Hex() << " ("
                      << action.program_name
                      << ") shows its program's name; kept under "
                      << action.named_key->Hex()
                      << (same ? "" : ", its log written for each name");
  return PlaceVerdict{.placed = true,
                      .program_name_only = true,
                      .marker = true,
                      .log_names_program = !same};
}

std::optional<CacheEngine::PlaceVerdict> CacheEngine::VerdictInThePlace(
    const Action& action, const absl::StatusOr<ActionResult>& here,
    Proofs& proofs) {
  if (!here.ok()) return std::nullopt;
  // Moved everything but the working directory, and the same: the answer
  // depends on the working directory alone.
  if (proofs.same_directory.valid()) {
    const absl::StatusOr<ActionResult>& beside = proofs.same_directory.get();
    const bool same = Agrees(action, *here, beside);
    if (same || AgreesButTheName(action, *here, beside,
                                 action.same_directory_program_name)) {
      return PlaceVerdict{.placed = true,
                          .working_directory_only = true,
                          .marker = true,
                          .log_names_program = !same};
    }
  }
  // Here with other times: the answer depends on the place, not the times.
  if (!action.run_here_other_times) return std::nullopt;
  const absl::StatusOr<ActionResult> moved =
      RunElsewhere(action, action.run_here_other_times, LateProofDeadline())
          .get();
  if (!Agrees(action, *here, moved)) return std::nullopt;
  JITCACHE_LOG(Debug) << "compile " << action.key.Hex() << " ("
                      << action.program_name
                      << ") depends on its place, not its files' times; "
                         "kept under "
                      << action.place_key_without_times->Hex();
  return PlaceVerdict{
      .placed = true, .marker = true, .without_file_times = true};
}

CacheEngine::PlaceVerdict CacheEngine::DecidePlace(
    const Action& action, const absl::StatusOr<ActionResult>& here,
    Proofs& proofs) {
  if (!action.placed_key.has_value()) return {};
  if (!proofs.elsewhere.valid() && !proofs.named.valid()) {
    // The place cannot be moved (or this compiler cannot move it): decided
    // by the place-free key alone, for good.
    ++counters_.place_kept;
    return {.placed = true, .marker = true};
  }
  // Under another name and elsewhere (the same answer holds for any name
  // and place), then elsewhere under the same name (it depends on the name
  // alone), then the place's own narrower keys.
  if (std::optional<PlaceVerdict> v = VerdictElsewhere(action, here, proofs)) {
    return *v;
  }
  if (std::optional<PlaceVerdict> v =
          VerdictUnderTheName(action, here, proofs)) {
    return *v;
  }
  ++counters_.place_kept;
  if (std::optional<PlaceVerdict> v = VerdictInThePlace(action, here, proofs)) {
    return *v;
  }
  const Proof& last = proofs.named.valid() ? proofs.named : proofs.elsewhere;
  const absl::StatusOr<ActionResult>& there = last.get();
  JITCACHE_LOG(Debug) << (action.is_link() ? "link " : "compile ")
                      << action.key.Hex()
                      << (action.is_link()
                              ? ""
                              : absl::StrCat(" (", action.program_name, ")"))
                      << (action.is_link() ? " shows its inputs' names"
                                           : " depends on its place")
                      << "; kept under " << action.placed_key->Hex() << " ("
                      << (!here.ok()   ? here.status().ToString()
                          : there.ok() ? FirstDifference(*here, *there)
                                       : there.status().ToString())
                      << ")";
  return {.placed = true, .marker = true};
}

void CacheEngine::KeepFirstSteps(const Action& action,
                                 const v1::ActionRecord& whole, bool placed,
                                 bool marker) {
  const Action::Link* link = action.link();
  if (link == nullptr) return;
  const std::vector<Digest>& keys =
      placed ? link->placed_step_keys : link->step_keys;
  // A refused nvJitLinkCreate leaves one step however many inputs follow.
  const size_t known = std::min(
      keys.size(), static_cast<size_t>(whole.link_trace().steps_size()));
  for (size_t inputs = 0; inputs < known; ++inputs) {
    v1::ActionRecord record;
    record.set_format_version(1);
    record.set_outcome(v1::OUTCOME_OK);
    record.set_target(whole.target());
    record.set_arch(whole.arch());
    *record.mutable_options() = whole.options();
    record.set_toolchain_fingerprint(whole.toolchain_fingerprint());
    record.set_created_unix_ms(whole.created_unix_ms());
    record.set_last_used_unix_ms(whole.last_used_unix_ms());
    *record.mutable_link_trace() = FirstSteps(whole.link_trace(), inputs);
    if (placed) record.set_place_matters(true);
    absl::Status s = options_.store->PutResult(keys[inputs], record, {});
    if (s.ok() && placed && marker && inputs < link->step_keys.size()) {
      s = options_.store->PutResult(link->step_keys[inputs],
                                    PlaceMattersRecord(record), {});
    }
    if (!s.ok()) {
      JITCACHE_LOG(Debug) << "cannot store the first steps of "
                          << action.key.Hex() << ": " << s;
      return;
    }
  }
}

void CacheEngine::CheckDisproof(uid_t uid, const Digest& key,
                                std::vector<Digest> step_keys,
                                Action::Run again,
                                std::shared_ptr<const HotAnswer> recorded) {
  // A record already shown right is not run again for anyone.
  if (refuted_disproofs_.Has(key)) return;
  if (disproofs_running_.fetch_add(1) >= kMaxDisproofs) {
    --disproofs_running_;
    return;
  }
  CompilePool::Task task;
  task.run = [this, key, step_keys = std::move(step_keys),
              again = std::move(again), recorded] {
    absl::Cleanup done = [this] { --disproofs_running_; };
    v1::CompileResponse record;
    if (!record.ParseFromString(recorded->serialized)) return;
    absl::StatusOr<ActionResult> answer =
        again(absl::Now() + options_.compile_time_limit);
    if (!answer.ok()) return;  // nothing shown either way
    if (SameLinkRecord(record, *answer)) {
      refuted_disproofs_.Remember(key);
      ++counters_.disproofs_refuted;
      JITCACHE_LOG(Info) << "link " << key.Hex()
                         << ": a caller's nvJitLink answered otherwise, the "
                            "link run again as recorded: kept";
      return;
    }
    RemoveDisproved(key, step_keys, *recorded);
  };
  task.cancel = [this] { --disproofs_running_; };
  if (!proofs_.Submit(uid, std::move(task)).ok()) --disproofs_running_;
}

void CacheEngine::RemoveDisproved(const Digest& key,
                                  const std::vector<Digest>& step_keys,
                                  const HotAnswer& recorded) {
  // Only the record compared: one written since (a newer link) is not this
  // one's to remove.
  if (!options_.store->StillCurrent(key, recorded.record_version)) return;
  // Removed with every first step kept with it: a hit asks the store, whose
  // record versions then no longer match what memory holds.
  for (const Digest& step : step_keys) {
    options_.store->RemoveAction(step).IgnoreError();
  }
  if (absl::Status s = options_.store->RemoveAction(key); !s.ok()) {
    JITCACHE_LOG(Warning) << "link " << key.Hex()
                          << ": a disproved record could not be removed: " << s;
    return;
  }
  // And the team's copy, which would bring it back on the next miss.
  if (tiered_ != nullptr) tiered_->Forget(key);
  ++counters_.records_disproved;
  JITCACHE_LOG(Warning) << "link " << key.Hex()
                        << ": a caller's nvJitLink answered otherwise and "
                           "the link run again did too: the record is removed";
}

absl::Status CacheEngine::FindMissingInputs(
    const std::vector<NeededInput>& inputs) {
  for (const NeededInput& input : inputs) {
    if (input.at_hand) continue;
    absl::StatusOr<std::optional<StoredObject>> object =
        options_.store->GetObject(input.digest);
    if (!object.ok()) return object.status();
    if (!object->has_value()) {
      return absl::NotFoundError(
          absl::StrCat("the daemon lacks object ", input.digest.Hex(), " (",
                       input.name, "): send its bytes with the request"));
    }
  }
  return absl::OkStatus();
}

}  // namespace jitcache
