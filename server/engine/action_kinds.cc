#include "server/engine/action_kinds.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/engine/place_proof.h"

namespace jitcache {

const Digest& ActionKinds::KeyAt(const PreparedCompile& prepared,
                                 KeyLevel level) {
  switch (level) {
    case KeyLevel::kPlaceFree:
      return prepared.key;
    case KeyLevel::kNamed:
      return prepared.named_key;
    case KeyLevel::kWorkingDirectory:
      return prepared.working_directory_key;
    case KeyLevel::kPlaceWithoutTimes:
      return prepared.place_key_without_times;
    case KeyLevel::kPlace:
      break;
  }
  return prepared.placed_key;
}

const Digest& ActionKinds::LinkKeyAt(const PreparedLink& link, bool named) {
  return named && link.named_key.has_value() ? *link.named_key : link.key;
}

bool ActionKinds::AnsweredForAnotherPlace(const v1::CompileResponse& answer,
                                          const PreparedCompile& prepared) {
  // (A log template is written for each waiter's own name by the flight,
  // CacheEngine::Join: never another program's here.)
  return answer.place_matters() &&
         answer.cache_key() != prepared.placed_key.Hex() &&
         answer.cache_key() != prepared.named_key.Hex() &&
         answer.cache_key() != prepared.place_key_without_times.Hex() &&
         answer.cache_key() != prepared.working_directory_key.Hex();
}

absl::StatusOr<std::shared_ptr<const HotAnswer>>
ActionKinds::CompileHitForOwnPlace(const PreparedCompile& prepared,
                                   KeyLevel* level) {
  *level = KeyLevel::kPlaceFree;
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      CompileHit(prepared, level);
  if (hit.ok() && *hit == nullptr && *level == KeyLevel::kPlaceFree) {
    *level = KeyLevel::kPlace;
  }
  return hit;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> ActionKinds::CompileHit(
    const PreparedCompile& prepared, KeyLevel* level) {
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      CompileHitAsKept(prepared, level);
  if (!hit.ok()) return hit;
  return AnswerFor(*std::move(hit), prepared.program_name);
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> ActionKinds::CompileHitAsKept(
    const PreparedCompile& prepared, KeyLevel* level) {
  // Without proofs nothing is shared between places: each place's key
  // alone (no record under the place-free key).
  if (!proves_places_) {
    if (level != nullptr) *level = KeyLevel::kPlace;
    return engine_->HitAnswer(prepared.placed_key);
  }
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      engine_->HitAnswer(prepared.key);
  KeyLevel at = KeyLevel::kPlaceFree;
  if (hit.ok() && *hit == nullptr) {
    // An answer kept for its place when its proof could not run, or
    // while it runs (the place-free key says nothing then): this place's
    // own; for a caller that waits for the proof, not while it runs.
    if (prepared.wait_for_proof && engine_->Running(prepared.key)) {
      if (level != nullptr) *level = at;
      return hit;
    }
    absl::StatusOr<std::shared_ptr<const HotAnswer>> own =
        engine_->HitAnswer(prepared.placed_key);
    if (!own.ok() || *own != nullptr) {
      if (level != nullptr) *level = KeyLevel::kPlace;
      return own;
    }
    // A verdict kept between the two reads (the place-free key written,
    // then the place's early copy dropped): the place-free key again.
    hit = engine_->HitAnswer(prepared.key);
  }
  if (hit.ok() && *hit != nullptr && (*hit)->place_marker) {
    at = (*hit)->marker_working_directory_only ? KeyLevel::kWorkingDirectory
         : (*hit)->marker_program_name_only    ? KeyLevel::kNamed
         : (*hit)->marker_place_without_times  ? KeyLevel::kPlaceWithoutTimes
                                               : KeyLevel::kPlace;
    hit = engine_->HitAnswer(KeyAt(prepared, at));
  }
  if (level != nullptr) *level = at;
  return hit;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> ActionKinds::LinkHit(
    const PreparedLink& link, bool* named) {
  *named = false;
  if (!link.named_key.has_value()) return engine_->HitAnswer(link.key);
  // Without proofs, the names are always keyed.
  if (!proves_places_) {
    *named = true;
    return engine_->HitAnswer(*link.named_key);
  }
  absl::StatusOr<std::shared_ptr<const HotAnswer>> hit =
      engine_->HitAnswer(link.key);
  if (hit.ok() && *hit == nullptr) {
    // An answer kept under its names when its proof could not run, or
    // while it runs.
    absl::StatusOr<std::shared_ptr<const HotAnswer>> own =
        engine_->HitAnswer(*link.named_key);
    if (!own.ok() || *own != nullptr) {
      *named = true;
      return own;
    }
    // A verdict kept between the two reads: the key without names again.
    hit = engine_->HitAnswer(link.key);
  }
  if (hit.ok() && *hit != nullptr && (*hit)->place_marker) {
    *named = true;
    return engine_->HitAnswer(*link.named_key);
  }
  return hit;
}

absl::StatusOr<std::shared_ptr<const HotAnswer>> ActionKinds::PtxasHit(
    const PreparedPtxas& prepared) {
  // An answer kept for the base names holds for any spelling of them: one
  // lookup on such a hit.
  if (prepared.base_named_key.has_value()) {
    absl::StatusOr<std::shared_ptr<const HotAnswer>> base =
        engine_->HitAnswer(*prepared.base_named_key);
    if (!base.ok() || *base != nullptr) return base;
  }
  return engine_->HitAnswer(prepared.key);
}

Action ActionKinds::CompileAction(const v1::CompileRequest& request,
                                  const PreparedCompile& prepared,
                                  std::shared_ptr<const FileSet>& files,
                                  KeyLevel level) {
  auto job = std::make_shared<CompileJob>(MakeCompileJob(request, prepared));
  if (request.includes_resolved()) {
    if (files == nullptr) {
      files = kept_file_sets_.Keep(prepared.included_set,
                                   CarriedFiles(request, prepared));
    }
    job->files = files;
  }
  Action build;
  build.key = KeyAt(prepared, level);
  build.keyed_by_place = level != KeyLevel::kPlaceFree;
  build.keyed_by_working_directory = level == KeyLevel::kWorkingDirectory;
  build.keyed_by_program_name = level == KeyLevel::kNamed;
  build.keyed_without_file_times = level == KeyLevel::kPlaceWithoutTimes;
  build.target = prepared.target;
  build.arch = prepared.arch;
  build.program_name = prepared.program_name;
  build.options = prepared.options;
  build.source_bytes = prepared.source_bytes;
  auto run_job = [this](std::shared_ptr<const CompileJob> which) {
    return [this, which](absl::Time deadline) -> absl::StatusOr<ActionResult> {
      CompileJob run = *which;
      run.deadline = deadline;
      run.cancelled = engine_->cancelled();
      return compiler_->Compile(run);
    };
  };
  build.run = run_job(job);
  build.wait_for_proof = prepared.wait_for_proof;
  if (level == KeyLevel::kPlaceFree) {
    build.placed_key = prepared.placed_key;
    build.working_directory_key = prepared.working_directory_key;
    build.named_key = prepared.named_key;
    build.place_key_without_times = prepared.place_key_without_times;
    if (proves_places_) {
      // Elsewhere under another name first (the answer then holds for any
      // name and place); elsewhere under the same name only where that
      // differs or cannot run; the working directory kept, beside them.
      if (std::optional<CompileJob> renamed = ElsewhereRenamedJob(*job)) {
        build.elsewhere_program_name = renamed->program_name;
        build.run_elsewhere =
            run_job(std::make_shared<const CompileJob>(*std::move(renamed)));
      }
      std::optional<CompileJob> elsewhere = ElsewhereJob(*job);
      if (elsewhere.has_value()) {
        build.elsewhere_named_program_name = elsewhere->program_name;
        build.run_elsewhere_named =
            run_job(std::make_shared<const CompileJob>(*std::move(elsewhere)));
        std::optional<CompileJob> same_directory =
            ElsewhereButTheWorkingDirectoryJob(*job);
        if (same_directory.has_value()) {
          build.same_directory_program_name = same_directory->program_name;
          build.run_elsewhere_same_directory = run_job(
              std::make_shared<const CompileJob>(*std::move(same_directory)));
        }
      }
      // Last, where nothing elsewhere agreed: here, every file's time moved.
      if (std::optional<CompileJob> other_times = OtherTimesJob(*job)) {
        build.run_here_other_times = run_job(
            std::make_shared<const CompileJob>(*std::move(other_times)));
      }
    }
  }
  return build;
}

Action ActionKinds::LinkAction(std::shared_ptr<const PreparedLink> link,
                               bool named) {
  Action build;
  build.key = LinkKeyAt(*link, named);
  build.target = link->target;
  build.arch = link->arch;
  build.options = link->options;
  Action::Link steps;
  steps.step_keys = named ? link->named_step_keys : link->step_keys;
  build.keyed_by_place = named && link->named_key.has_value();
  if (!named && link->named_key.has_value() && proves_places_) {
    // The proof: the same link under other names, beside it.
    build.placed_key = link->named_key;
    steps.placed_step_keys = link->named_step_keys;
    auto renamed =
        std::make_shared<const PreparedLink>(RenamedElsewhere(*link));
    build.run_elsewhere = [this, renamed](absl::Time deadline) {
      return RunLink(*renamed, deadline);
    };
  }
  for (const auto& input : link->inputs) {
    steps.input_digests.emplace_back(input.digest.AsBytes());
  }
  build.kind = std::move(steps);
  // Only a link that runs keeps what came inline (a hit writes nothing).
  build.run = [this,
               link](absl::Time deadline) -> absl::StatusOr<ActionResult> {
    KeepInlineInputs(*link);
    return RunLink(*link, deadline);
  };
  return build;
}

Action ActionKinds::PtxasAction(const v1::PtxasRequest& request,
                                const PreparedPtxas& prepared) {
  // The leader's alone: a hit copies nothing out of its request.
  auto miss = std::make_shared<PtxasMiss>(MakePtxasMiss(request, prepared));
  Action build;
  build.key = prepared.key;
  build.target = ObjectKind::kCubin;
  build.program_name = miss->job.program;
  build.options = miss->job.arguments;
  build.source_bytes = miss->job.ptx.size();
  build.kind = Action::Ptxas{.named_key = miss->named_key,
                             .names = miss->names,
                             .base_named_key = miss->base_named_key,
                             .spelled_names = miss->spelled};
  build.run = [this, miss](absl::Time deadline) {
    miss->job.deadline = deadline;  // run once, by one pool thread
    return compiler_->Ptxas(miss->job);
  };
  return build;
}

Action ActionKinds::NvvmAction(const v1::NvvmRequest& request,
                               const PreparedNvvm& prepared) {
  auto job = std::make_shared<NvvmJob>(MakeNvvmJob(request));
  Action build;
  build.key = prepared.key;
  build.target = prepared.target;
  build.options = prepared.options;
  build.source_bytes = prepared.module_bytes;
  build.kind = Action::Nvvm{};
  build.run = [this, job](absl::Time deadline) {
    job->deadline = deadline;  // run once, by one pool thread
    return compiler_->Nvvm(*job);
  };
  return build;
}

void ActionKinds::KeepInlineInputs(const PreparedLink& link) {
  if (link.inline_objects.empty()) return;
  std::vector<ObjectRef> refs;
  for (const auto& o : link.inline_objects) {
    refs.push_back({o.digest, o.kind, o.bytes});
  }
  // The link runs on the bytes that came with it, so a failed write (a
  // full disk) fails nothing: as every other write, it is counted and
  // logged by the store, and a later request that names these inputs by
  // digest alone is asked for their bytes again (NOT_FOUND).
  if (absl::Status s = store_->PutObjects(refs); !s.ok()) {
    JITCACHE_LOG(Debug) << "cannot keep a link's inputs: " << s;
  }
}

absl::StatusOr<ActionResult> ActionKinds::RunLink(const PreparedLink& link,
                                                  absl::Time deadline) {
  LinkJob job;
  job.options = link.options;
  job.target = link.target;
  job.deadline = deadline;
  job.as_called = link.as_called;
  // Each source once; one path with two answers (two inputs stat'ed at two
  // moments) is no link a worker can lay out.
  for (const auto& input : link.inputs) {
    for (const SourceStat& source : input.sources) {
      auto same = std::find_if(
          job.sources.begin(), job.sources.end(),
          [&](const SourceStat& s) { return s.path == source.path; });
      if (same == job.sources.end()) {
        job.sources.push_back(source);
      } else if (same->exists != source.exists || same->size != source.size ||
                 same->mtime_ns != source.mtime_ns) {
        return absl::FailedPreconditionError(
            absl::StrCat("link: source ", source.path,
                         " was two files for the caller: the caller links it"));
      }
    }
  }
  for (const auto& input : link.inputs) {
    // What came inline is at hand (a proof may start before it is kept).
    auto sent =
        std::find_if(link.inline_objects.begin(), link.inline_objects.end(),
                     [&](const PreparedLink::Inline& o) {
                       return o.digest == input.digest;
                     });
    if (sent != link.inline_objects.end()) {
      job.inputs.push_back(
          {input.kind, input.name, sent->bytes, input.typed_by_content});
      continue;
    }
    absl::StatusOr<std::optional<StoredObject>> object =
        store_->GetObject(input.digest);
    if (!object.ok()) return object.status();
    if (!object->has_value()) {
      return absl::NotFoundError(
          absl::StrCat("link ", input.name, ": object ", input.digest.Hex(),
                       " is not in the store; upload it first"));
    }
    job.inputs.push_back({input.kind, input.name, std::move((*object)->bytes),
                          input.typed_by_content});
  }
  return compiler_->Link(job);
}

}  // namespace jitcache
