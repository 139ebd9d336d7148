#ifndef JITCACHE_SERVER_STORE_BUNDLE_ENTRIES_H_
#define JITCACHE_SERVER_STORE_BUNDLE_ENTRIES_H_

// Store entries as bundle entries (a record with every object it names)
// and back: what export, import and the remote tier exchange. An entry
// coming in is checked as a bundle's is: its key, record, toolchain and
// every object's digest, size and kind; nothing of it is stored unless all
// of it holds. Thread-safe as the store is.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "jitcache/v1/store.pb.h"
#include "server/store/object_store.h"

namespace jitcache {

// The entry for the stored `record` under `key`; nullopt when an object it
// names is gone or its digest is not one.
absl::StatusOr<std::optional<v1::BundleEntry>> BundleEntryFor(
    ObjectStore& store, const Digest& key, const v1::ActionRecord& record);

// Stores `entry` if it holds and is new, counting it in `response`
// (imported, already_present, other_toolchain or corrupt, with at most
// `max_problems` reasons); an error only when the store fails. Its record
// is marked used at `now_unix_ms`, so that an import into a full store does
// not evict what it just brought.
absl::Status ImportBundleEntry(ObjectStore& store,
                               absl::string_view toolchain_fingerprint,
                               int64_t now_unix_ms,
                               const v1::BundleEntry& entry,
                               size_t max_problems,
                               v1::ImportResponse* response);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_STORE_BUNDLE_ENTRIES_H_
