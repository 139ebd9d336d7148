#include "server/store/bundle_entries.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/absl_view.h"
#include "common/object_kind.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {
namespace {

// The objects a record names: its inputs, then its own object when it has
// one. One rule with a hit's (JitCacheService::LookUp): an OK record with
// an object digest; a compile error, a ptxas run that wrote nothing and an
// as-called link that made no cubin have none.
std::vector<std::string> ObjectsNamedBy(const v1::ActionRecord& record,
                                        bool* has_object) {
  std::vector<std::string> named(record.input_digests().begin(),
                                 record.input_digests().end());
  *has_object =
      record.outcome() == v1::OUTCOME_OK && !record.object_digest().empty();
  if (*has_object) named.push_back(record.object_digest());
  return named;
}

}  // namespace

absl::StatusOr<std::optional<v1::BundleEntry>> BundleEntryFor(
    ObjectStore& store, const Digest& key, const v1::ActionRecord& record) {
  v1::BundleEntry entry;
  entry.set_key(key.Hex());
  entry.set_record(record.SerializeAsString());
  bool has_object = false;
  for (const std::string& raw : ObjectsNamedBy(record, &has_object)) {
    std::optional<Digest> digest = Digest::FromBytes(raw);
    if (!digest.has_value()) return std::nullopt;
    absl::StatusOr<std::optional<StoredObject>> object =
        store.GetObject(*digest);
    if (!object.ok()) return object.status();
    if (!object->has_value()) return std::nullopt;
    v1::BundleObject* out = entry.add_objects();
    out->set_digest(digest->Hex());
    out->set_kind(ToWireKind((*object)->kind));
    out->set_data(std::move((*object)->bytes));
  }
  return entry;
}

namespace {

// Why an entry is refused, counted under its reason.
struct Refused {
  enum class Why { kCorrupt, kOtherToolchain, kPresent } why;
  std::string text;
};

void Count(const Refused& refused, const v1::BundleEntry& entry,
           size_t max_problems, v1::ImportResponse* response) {
  switch (refused.why) {
    case Refused::Why::kCorrupt:
      response->set_corrupt(response->corrupt() + 1);
      break;
    case Refused::Why::kOtherToolchain:
      response->set_other_toolchain(response->other_toolchain() + 1);
      break;
    case Refused::Why::kPresent:
      response->set_already_present(response->already_present() + 1);
      break;
  }
  if (static_cast<size_t>(response->problems_size()) < max_problems) {
    response->add_problems(
        absl::StrCat("entry ", entry.key().substr(0, 64), ": ", refused.text));
  }
}

// The entry's key and record: well formed, made by this toolchain.
std::optional<Refused> CheckRecord(const v1::BundleEntry& entry,
                                   absl::string_view fingerprint, Digest* key,
                                   v1::ActionRecord* record) {
  absl::StatusOr<Digest> parsed = Digest::FromHex(entry.key());
  if (!parsed.ok()) {
    return Refused{Refused::Why::kCorrupt, "its key is not a SHA-256 in hex"};
  }
  *key = *parsed;
  if (!record->ParseFromString(entry.record()) ||
      record->format_version() != 1) {
    return Refused{Refused::Why::kCorrupt, "its record does not parse"};
  }
  if (record->toolchain_fingerprint() != fingerprint) {
    return Refused{
        Refused::Why::kOtherToolchain,
        absl::StrCat("built by toolchain ",
                     absl::BytesToHexString(record->toolchain_fingerprint())
                         .substr(0, 16),
                     "..., this daemon's is ",
                     absl::BytesToHexString(fingerprint).substr(0, 16), "...")};
  }
  return std::nullopt;
}

// Every object the record names comes with it, whole: `objects` refers to
// the entry's bytes.
std::optional<Refused> CheckObjects(const v1::BundleEntry& entry,
                                    const v1::ActionRecord& record,
                                    std::vector<ObjectRef>* objects) {
  for (const v1::BundleObject& object : entry.objects()) {
    absl::StatusOr<Digest> digest = Digest::FromHex(object.digest());
    std::optional<ObjectKind> kind = FromWireKind(object.kind());
    if (!digest.ok() || !kind.has_value()) {
      return Refused{Refused::Why::kCorrupt,
                     "an object has no valid digest or kind"};
    }
    if (Digest::Of(object.data()) != *digest) {
      return Refused{
          Refused::Why::kCorrupt,
          absl::StrCat("object ", digest->Hex(), " does not match its digest")};
    }
    objects->push_back({*digest, *kind, object.data()});
  }
  auto carried = [objects](absl::string_view raw) -> const ObjectRef* {
    for (const ObjectRef& o : *objects) {
      if (o.digest.AsBytes() == StdView(raw)) return &o;
    }
    return nullptr;
  };
  bool has_object = false;
  for (const std::string& raw : ObjectsNamedBy(record, &has_object)) {
    if (carried(raw) == nullptr) {
      return Refused{
          Refused::Why::kCorrupt,
          absl::StrCat("its record names object ", absl::BytesToHexString(raw),
                       ", which the entry does not carry")};
    }
  }
  if (has_object &&
      carried(record.object_digest())->bytes.size() != record.object_size()) {
    return Refused{Refused::Why::kCorrupt,
                   "its object's size differs from its record's"};
  }
  return std::nullopt;
}

}  // namespace

absl::Status ImportBundleEntry(ObjectStore& store,
                               absl::string_view toolchain_fingerprint,
                               int64_t now_unix_ms,
                               const v1::BundleEntry& entry,
                               size_t max_problems,
                               v1::ImportResponse* response) {
  Digest key;
  v1::ActionRecord record;
  std::vector<ObjectRef> objects;
  std::optional<Refused> refused =
      CheckRecord(entry, toolchain_fingerprint, &key, &record);
  if (!refused.has_value()) refused = CheckObjects(entry, record, &objects);
  if (!refused.has_value()) {
    absl::StatusOr<std::optional<v1::ActionRecord>> present =
        store.GetAction(key);
    if (!present.ok()) return present.status();
    if (present->has_value()) {
      refused = Refused{Refused::Why::kPresent, "already in the store"};
    }
  }
  if (refused.has_value()) {
    Count(*refused, entry, max_problems, response);
    return absl::OkStatus();
  }
  // Imported now: young in the LRU order, so that an import into a full
  // store does not evict what it just brought.
  record.set_last_used_unix_ms(now_unix_ms);
  if (absl::Status s = store.PutResult(key, record, objects); !s.ok()) {
    return s;
  }
  response->set_imported(response->imported() + 1);
  return absl::OkStatus();
}

}  // namespace jitcache
