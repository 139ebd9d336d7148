// A caller's disproof of a link record (LinkRequest.disproves), checked by
// linking again: a caller can cost the daemon a link, never a right record.
#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/rpc/jitcache_service.h"

namespace jitcache {
namespace {

// Whether a link run again answers as the record: every call's answer, both
// outputs' results and bytes, and the cubin.
bool SameAnswer(const v1::CompileResponse& recorded,
                const CompileResult& again) {
  if (!again.link_trace.has_value()) return false;
  v1::NvJitLinkTrace before = recorded.link_trace();
  v1::NvJitLinkTrace after = *again.link_trace;
  const std::string cubin_digest =
      again.ok && !again.object.empty() ? Digest::Of(again.object).Hex() : "";
  return before.SerializeAsString() == after.SerializeAsString() &&
         recorded.object_digest() == cubin_digest;
}

}  // namespace

void JitCacheService::CheckDisproof(uid_t uid,
                                    std::shared_ptr<const PreparedLink> link,
                                    bool named,
                                    std::shared_ptr<const HotAnswer> recorded) {
  const Digest key = LinkKeyAt(*link, named);
  // A record already shown right is not linked again for anyone.
  if (refuted_disproofs_.Has(key)) return;
  if (disproofs_running_.fetch_add(1) >= kMaxDisproofs) {
    --disproofs_running_;
    return;
  }
  CompilePool::Task task;
  task.run = [this, link, named, recorded, key] {
    absl::Cleanup done = [this] { --disproofs_running_; };
    v1::CompileResponse record;
    if (!record.ParseFromString(recorded->serialized)) return;
    absl::StatusOr<CompileResult> again =
        RunLink(*link, absl::Now() + options_.compile_time_limit);
    if (!again.ok()) return;  // nothing shown either way
    if (SameAnswer(record, *again)) {
      refuted_disproofs_.Remember(key);
      ++counters_.disproofs_refuted;
      JITCACHE_LOG(Info) << "link " << key.Hex()
                         << ": a caller's nvJitLink answered otherwise, the "
                            "link run again as recorded: kept";
      return;
    }
    // Only the record compared: one written since (a newer link) is not
    // this one's to remove.
    if (!options_.store->StillCurrent(key, recorded->record_version)) return;
    // Removed with every first step kept with it: a hit asks the store,
    // whose record versions then no longer match what memory holds.
    for (const Digest& step : named ? link->named_step_keys : link->step_keys) {
      options_.store->RemoveAction(step).IgnoreError();
    }
    if (absl::Status s = options_.store->RemoveAction(key); !s.ok()) {
      JITCACHE_LOG(Warning)
          << "link " << key.Hex()
          << ": a disproved record could not be removed: " << s;
      return;
    }
    // And the team's copy, which would bring it back on the next miss.
    if (tiered_ != nullptr) tiered_->Forget(key);
    ++counters_.records_disproved;
    JITCACHE_LOG(Warning)
        << "link " << key.Hex()
        << ": a caller's nvJitLink answered otherwise and "
           "the link run again did too: the record is removed";
  };
  task.cancel = [this] { --disproofs_running_; };
  if (!proofs_.Submit(uid, std::move(task)).ok()) --disproofs_running_;
}

}  // namespace jitcache
