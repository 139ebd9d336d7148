#ifndef JITCACHE_SERVER_STORE_TIERED_STORE_H_
#define JITCACHE_SERVER_STORE_TIERED_STORE_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "common/digest.h"
#include "jitcache/v1/store.pb.h"
#include "server/store/object_store.h"
#include "server/store/remote_tier.h"

namespace jitcache {

// The node's store with the team's tier behind it: on a local miss the
// tier is asked, and what it answers is checked as an import is and stored
// locally before anyone is answered from it (bundle_entries.h); a result
// built here goes to the tier after its requesters have it. The request
// handlers see entries and leases, never the tier's protocol.
// Thread-safety: every method from any thread.
class TieredStore {
 public:
  // `local` and `remote` outlive this. `fingerprint`: the toolchain whose
  // entries this node may take.
  TieredStore(ObjectStore* local, RemoteTier* remote, std::string fingerprint,
              std::function<absl::Time()> now);

  // Before building `key`: true when the tier had its entry (now in the
  // local store). Otherwise false, having waited while another node holds
  // the key's lease (until `give_up`, or `stop`), and `*leased` says
  // whether this node now holds it (Publish or Release it then).
  bool FetchOrLease(const Digest& key, absl::Time give_up,
                    const std::atomic<bool>& stop, bool* leased);

  // After a build whose result is stored locally: the entry goes to the
  // tier in the background and this node's lease is released.
  void Publish(const Digest& key, const v1::ActionRecord& record);
  // Releases this node's lease without a result.
  void Release(const Digest& key);
  // The team's entry for `key` is deleted (a record shown wrong).
  void Forget(const Digest& key) { remote_->Forget(key); }

  RemoteStats stats() const { return remote_->stats(); }

 private:
  // The tier's entry for `key`, checked and stored locally; false when
  // there is none or it is bad (counted). `*unreachable`: the tier could
  // not be asked.
  bool Fetch(const Digest& key, bool* unreachable);

  ObjectStore* const local_;
  RemoteTier* const remote_;
  const std::string fingerprint_;
  const std::function<absl::Time()> now_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_TIERED_STORE_H_
