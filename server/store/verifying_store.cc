#include "server/store/verifying_store.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/store/object_frame.h"

namespace jitcache {

VerifyingStore::VerifyingStore(std::unique_ptr<KvBackend> backend)
    : backend_(std::move(backend)) {}

void VerifyingStore::RemoveCorrupt(Column column, const Digest& key) {
  corrupt_removed_.fetch_add(1, std::memory_order_relaxed);
  const KvWrite erase{column, key.AsBytes(), {}, /*erase=*/true};
  if (absl::Status s = backend_->Write({&erase, 1}); !s.ok()) {
    JITCACHE_LOG(Warning) << "could not remove corrupt entry " << key.Hex()
                          << ": " << s;
  }
}

absl::StatusOr<std::optional<StoredObject>> VerifyingStore::GetObject(
    const Digest& digest) {
  absl::StatusOr<std::optional<std::string>> frame =
      backend_->Get(Column::kObjects, digest.AsBytes());
  if (!frame.ok()) return frame.status();
  if (!frame->has_value()) return std::nullopt;
  absl::StatusOr<DecodedObject> decoded = DecodeObjectFrame(**frame);
  if (!decoded.ok()) {
    JITCACHE_LOG(Warning) << "object " << digest.Hex()
                          << " failed verification ("
                          << decoded.status().message() << "); removed";
    RemoveCorrupt(Column::kObjects, digest);
    return std::nullopt;
  }
  // The bytes are the frame's prefix: drop the trailer, keep the buffer.
  const ObjectKind kind = decoded->kind;
  (*frame)->resize(decoded->bytes.size());
  return StoredObject{kind, std::move(**frame)};
}

absl::StatusOr<std::optional<v1::ActionRecord>> VerifyingStore::GetAction(
    const Digest& key) {
  absl::StatusOr<std::optional<std::string>> raw =
      backend_->Get(Column::kActions, key.AsBytes());
  if (!raw.ok()) return raw.status();
  if (!raw->has_value()) return std::nullopt;
  v1::ActionRecord record;
  if (!record.ParseFromString(**raw) || record.format_version() != 1) {
    JITCACHE_LOG(Warning) << "action record " << key.Hex()
                          << " does not parse; removed";
    RemoveCorrupt(Column::kActions, key);
    return std::nullopt;
  }
  return record;
}

absl::Status VerifyingStore::PutObjects(std::span<const ObjectRef> objects) {
  return PutResult(std::nullopt, v1::ActionRecord(), objects);
}

absl::Status VerifyingStore::PutResult(const Digest& key,
                                       const v1::ActionRecord& record,
                                       std::span<const ObjectRef> objects) {
  return PutResult(std::optional<Digest>(key), record, objects);
}

absl::Status VerifyingStore::PutResult(const std::optional<Digest>& key,
                                       const v1::ActionRecord& record,
                                       std::span<const ObjectRef> objects) {
  std::vector<std::string> frames;
  frames.reserve(objects.size());
  std::vector<KvWrite> writes;
  writes.reserve(objects.size() + 1);
  for (const ObjectRef& object : objects) {
    frames.push_back(EncodeObjectFrame(object.kind, object.bytes));
    writes.push_back(
        {Column::kObjects, object.digest.AsBytes(), frames.back()});
  }
  std::string serialized;
  if (key.has_value()) {
    serialized = record.SerializeAsString();
    writes.push_back({Column::kActions, key->AsBytes(), serialized});
  }
  return backend_->Write(writes);
}

absl::Status VerifyingStore::PutAction(const Digest& key,
                                       const v1::ActionRecord& record) {
  const std::string serialized = record.SerializeAsString();
  const KvWrite write{Column::kActions, key.AsBytes(), serialized};
  return backend_->Write({&write, 1});
}

absl::Status VerifyingStore::RemoveAction(const Digest& key) {
  const KvWrite erase{Column::kActions, key.AsBytes(), {}, /*erase=*/true};
  return backend_->Write({&erase, 1});
}

absl::StatusOr<VerifyReport> VerifyingStore::Verify() {
  VerifyReport report;
  constexpr size_t kMaxProblems = 20;
  auto problem = [&report](std::string text) {
    if (report.problems.size() < kMaxProblems) {
      report.problems.push_back(std::move(text));
    }
  };
  absl::flat_hash_map<std::string, uint64_t> good_objects;  // digest -> size
  absl::flat_hash_set<std::string> referenced;
  absl::Status scan = backend_->ForEach(
      Column::kObjects, [&](absl::string_view key, absl::string_view frame) {
        ++report.objects;
        absl::StatusOr<DecodedObject> decoded = DecodeObjectFrame(frame);
        absl::StatusOr<Digest> digest = Digest::FromBytes(key);
        if (!decoded.ok() || !digest.ok() ||
            Digest::Of(decoded->bytes) != *digest) {
          ++report.bad_objects;
          problem(absl::StrCat(
              "object ", absl::BytesToHexString(key), ": ",
              decoded.ok() ? "content does not match its SHA-256 address"
                           : decoded.status().message()));
          return true;
        }
        good_objects[key] = decoded->bytes.size();
        return true;
      });
  if (!scan.ok()) return scan;
  scan = backend_->ForEach(Column::kActions, [&](absl::string_view key,
                                                 absl::string_view value) {
    ++report.records;
    v1::ActionRecord record;
    if (!record.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
        record.format_version() != 1) {
      ++report.bad_records;
      problem(absl::StrCat("record ", absl::BytesToHexString(key),
                           ": does not parse"));
      return true;
    }
    // A link's inputs must outlive it, like its output.
    for (const std::string& input : record.input_digests()) {
      referenced.insert(input);
      if (!good_objects.contains(input)) {
        ++report.dangling_records;
        problem(absl::StrCat("record ", absl::BytesToHexString(key),
                             ": its input ", absl::BytesToHexString(input),
                             " is missing or damaged"));
        return true;
      }
    }
    if (record.object_digest().empty()) return true;  // a compile error
    referenced.insert(record.object_digest());
    auto it = good_objects.find(record.object_digest());
    if (it == good_objects.end() || it->second != record.object_size()) {
      ++report.dangling_records;
      problem(absl::StrCat("record ", absl::BytesToHexString(key),
                           ": its object ",
                           absl::BytesToHexString(record.object_digest()),
                           " is missing or damaged"));
    }
    return true;
  });
  if (!scan.ok()) return scan;
  for (const auto& [digest, size] : good_objects) {
    if (!referenced.contains(digest)) {
      ++report.unreferenced_objects;
      problem(absl::StrCat("object ", absl::BytesToHexString(digest),
                           " is named by no record"));
    }
  }
  return report;
}

StoreStats VerifyingStore::Stats() {
  const KvStats kv = backend_->Stats();
  return {kv.actions, kv.bytes,
          corrupt_removed_.load(std::memory_order_relaxed)};
}

}  // namespace jitcache
