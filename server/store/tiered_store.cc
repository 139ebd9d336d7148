#include "server/store/tiered_store.h"

#include <optional>
#include <utility>

#include "absl/time/clock.h"
#include "common/log.h"
#include "server/store/bundle_entries.h"

namespace jitcache {

TieredStore::TieredStore(ObjectStore* local, RemoteTier* remote,
                         std::string fingerprint,
                         std::function<absl::Time()> now)
    : local_(local),
      remote_(remote),
      fingerprint_(std::move(fingerprint)),
      now_(std::move(now)) {}

bool TieredStore::Fetch(const Digest& key, bool* unreachable) {
  const RemoteTier::Read read = remote_->Get(key);
  *unreachable = read.outcome == RemoteTier::Read::Outcome::kUnreachable;
  if (!read.found()) return false;
  v1::BundleEntry entry;
  if (!entry.ParseFromString(read.entry) || entry.key() != key.Hex()) {
    remote_->CountCorrupt(key);
    return false;
  }
  v1::ImportResponse checked;
  if (absl::Status s =
          ImportBundleEntry(*local_, fingerprint_, absl::ToUnixMillis(now_()),
                            entry, /*max_problems=*/0, &checked);
      !s.ok()) {
    JITCACHE_LOG(Warning) << "cannot store the remote entry " << key.Hex()
                          << ": " << s;
    return false;
  }
  if (checked.imported() + checked.already_present() != 1) {
    // A digest that does not match, or another toolchain's record under our
    // key: never served.
    remote_->CountCorrupt(key);
    return false;
  }
  remote_->CountHit(read.entry.size());
  return true;
}

bool TieredStore::FetchOrLease(const Digest& key, absl::Time give_up,
                               const std::atomic<bool>& stop, bool* leased) {
  *leased = false;
  bool unreachable = false;
  if (Fetch(key, &unreachable)) return true;
  // A tier that cannot be read cannot be leased from either: build here
  // without another timeout.
  if (unreachable) return false;
  RemoteTier::Lease lease = remote_->TryLease(key);
  if (lease == RemoteTier::Lease::kHeldByOther) {
    // Another node compiles this key: wait for its result rather than
    // compile it again, as long as it keeps its lease and until `give_up`.
    remote_->CountLeaseWait();
    while (lease == RemoteTier::Lease::kHeldByOther && !stop.load() &&
           absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(20));
      if (Fetch(key, &unreachable)) return true;
      if (!remote_->LeaseHeld(key)) lease = remote_->TryLease(key);
    }
  }
  if (lease != RemoteTier::Lease::kTaken) return false;
  *leased = true;
  // The holder may have published and let go between our look and our
  // lease.
  if (Fetch(key, &unreachable)) {
    remote_->Release(key);
    *leased = false;
    return true;
  }
  return false;
}

void TieredStore::Publish(const Digest& key, const v1::ActionRecord& record) {
  absl::StatusOr<std::optional<v1::BundleEntry>> entry =
      BundleEntryFor(*local_, key, record);
  if (!entry.ok() || !entry->has_value()) {
    remote_->Release(key);
    return;
  }
  remote_->Publish(key, (*entry)->SerializeAsString());
}

void TieredStore::Release(const Digest& key) { remote_->Release(key); }

}  // namespace jitcache
