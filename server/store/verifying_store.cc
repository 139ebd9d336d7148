#include "server/store/verifying_store.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/absl_view.h"
#include "common/log.h"
#include "server/store/object_frame.h"

namespace jitcache {

namespace {

// What an object costs the index: its key, its bytes and its frame trailer.
uint64_t ObjectBytes(uint64_t size) {
  return 32 + size + kObjectFrameTrailerSize;
}

// A stored record, or nullopt when it does not parse (or is of a format
// this daemon does not read): one rule for lookups, scans and --verify.
std::optional<v1::ActionRecord> ParseRecord(absl::string_view value) {
  v1::ActionRecord record;
  if (!record.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
      record.format_version() != 1) {
    return std::nullopt;
  }
  return record;
}

// Objects removed in one eviction batch at most: one atomic write, short
// enough not to hold the write lock for long.
constexpr size_t kEvictionBatch = 1000;

}  // namespace

VerifyingStore::VerifyingStore(std::unique_ptr<KvBackend> backend,
                               StoreOptions options)
    : backend_(std::move(backend)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<VerifyingStore>> VerifyingStore::Open(
    std::unique_ptr<KvBackend> backend, StoreOptions options) {
  auto store = std::unique_ptr<VerifyingStore>(
      new VerifyingStore(std::move(backend), std::move(options)));
  if (absl::Status s = store->LoadIndex(); !s.ok()) return s;
  return store;
}

void VerifyingStore::IndexRecord(absl::string_view key,
                                 const v1::ActionRecord& record,
                                 uint64_t value_bytes) {
  std::vector<StoreIndex::Object> objects;
  if (!record.object_digest().empty()) {
    objects.push_back(
        {record.object_digest(), ObjectBytes(record.object_size())});
  }
  for (int i = 0; i < record.input_digests_size(); ++i) {
    const uint64_t size =
        i < record.input_sizes_size() ? record.input_sizes(i) : 0;
    objects.push_back({record.input_digests(i), ObjectBytes(size)});
  }
  index_.Put(StoreIndex::Kind::kRecord, key, record.last_used_unix_ms(),
             key.size() + value_bytes, objects);
}

void VerifyingStore::IndexUpload(absl::string_view digest,
                                 const v1::UploadRecord& upload,
                                 uint64_t value_bytes) {
  index_.Put(StoreIndex::Kind::kUpload, digest, upload.uploaded_unix_ms(),
             digest.size() + value_bytes,
             {{std::string(digest), ObjectBytes(upload.size())}});
}

absl::Status VerifyingStore::LoadIndex() {
  absl::Status s = backend_->ForEach(
      Column::kActions, [this](absl::string_view key, absl::string_view value) {
        // A record that does not parse is left to its own lookup (removed
        // there) and to --verify; it names nothing the index can trust.
        if (std::optional<v1::ActionRecord> record = ParseRecord(value)) {
          IndexRecord(key, *record, value.size());
        }
        return true;
      });
  if (s.ok()) {
    s = backend_->ForEach(Column::kUploads, [this](absl::string_view key,
                                                   absl::string_view value) {
      v1::UploadRecord upload;
      if (upload.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        IndexUpload(key, upload, value.size());
      }
      return true;
    });
  }
  // A damaged block ends the scan early: the store still serves. What lies
  // past it is missing from the index (never evicted, not counted) until a
  // lookup finds it unreadable and removes it, or a compile rewrites it.
  if (absl::IsDataLoss(s)) {
    JITCACHE_LOG(Warning) << "the store is damaged (" << s.message()
                          << "); serving it, each unreadable entry a miss; "
                             "jitcached --verify says what is affected";
    return absl::OkStatus();
  }
  return s;
}

void VerifyingStore::RemoveCorrupt(Column column, const Digest& key) {
  corrupt_removed_.fetch_add(1, std::memory_order_relaxed);
  absl::MutexLock lock(&write_mu_);
  absl::Status s;
  if (column == Column::kActions) {
    s = RemoveEntry(StoreIndex::Kind::kRecord, key);
  } else {
    index_.ForgetObject(AbslView(key.AsBytes()));
    const KvWrite erase{column, AbslView(key.AsBytes()), {}, /*erase=*/true};
    s = Commit({&erase, 1});
  }
  if (!s.ok()) {
    JITCACHE_LOG(Warning) << "could not remove corrupt entry " << key.Hex()
                          << ": " << s;
  }
}

absl::Status VerifyingStore::RemoveEntry(StoreIndex::Kind kind,
                                         const Digest& key) {
  const std::vector<std::string> orphans =
      index_.Remove(kind, AbslView(key.AsBytes()));
  std::vector<KvWrite> writes;
  writes.push_back(
      {kind == StoreIndex::Kind::kRecord ? Column::kActions : Column::kUploads,
       AbslView(key.AsBytes()),
       {},
       /*erase=*/true});
  for (const std::string& digest : orphans) {
    writes.push_back({Column::kObjects, digest, {}, /*erase=*/true});
  }
  return Commit(writes);
}

absl::StatusOr<std::optional<StoredObject>> VerifyingStore::GetObject(
    const Digest& digest) {
  absl::StatusOr<std::optional<std::string>> frame =
      backend_->Get(Column::kObjects, AbslView(digest.AsBytes()));
  if (!frame.ok() && absl::IsDataLoss(frame.status())) {
    // The backend's own checksum failed (a damaged block or blob file):
    // a miss, like a frame that fails ours; the delete shadows it.
    JITCACHE_LOG(Warning) << "object " << digest.Hex() << " is unreadable ("
                          << frame.status().message() << "); removed";
    RemoveCorrupt(Column::kObjects, digest);
    return std::nullopt;
  }
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

std::optional<uint64_t> VerifyingStore::RecordVersion(const Digest& key) {
  return index_.RecordVersion(AbslView(key.AsBytes()));
}

bool VerifyingStore::StillCurrent(const Digest& key, uint64_t version) {
  return index_.TouchIfCurrent(AbslView(key.AsBytes()), version, NowMs());
}

absl::StatusOr<std::optional<v1::ActionRecord>> VerifyingStore::GetAction(
    const Digest& key) {
  absl::StatusOr<std::optional<std::string>> raw =
      backend_->Get(Column::kActions, AbslView(key.AsBytes()));
  if (!raw.ok() && absl::IsDataLoss(raw.status())) {
    JITCACHE_LOG(Warning) << "action record " << key.Hex() << " is unreadable ("
                          << raw.status().message() << "); removed";
    RemoveCorrupt(Column::kActions, key);
    return std::nullopt;
  }
  if (!raw.ok()) return raw.status();
  if (!raw->has_value()) return std::nullopt;
  std::optional<v1::ActionRecord> record = ParseRecord(**raw);
  if (!record.has_value()) {
    JITCACHE_LOG(Warning) << "action record " << key.Hex()
                          << " does not parse; removed";
    RemoveCorrupt(Column::kActions, key);
    return std::nullopt;
  }
  index_.Touch(AbslView(key.AsBytes()), NowMs());
  return record;
}

absl::Status VerifyingStore::PutObjects(std::span<const ObjectRef> objects) {
  absl::Status s;
  {
    absl::MutexLock lock(&write_mu_);
    s = WriteUploads(objects);
  }
  if (s.ok()) NotifyWrite();
  return s;
}

void VerifyingStore::OnWrite(std::function<void()> listener) {
  absl::MutexLock lock(&listener_mu_);
  on_write_ = std::move(listener);
  // The old listener's owner may go once this returns.
  listener_mu_.Await(absl::Condition(
      +[](int* calls) { return *calls == 0; }, &listener_calls_));
}

void VerifyingStore::NotifyWrite() {
  std::function<void()> listener;
  {
    absl::MutexLock lock(&listener_mu_);
    if (!on_write_) return;
    listener = on_write_;
    ++listener_calls_;
  }
  // Outside every store lock: the listener may evict (see StoreJanitor).
  listener();
  absl::MutexLock lock(&listener_mu_);
  --listener_calls_;
}

absl::Status VerifyingStore::WriteUploads(std::span<const ObjectRef> uploaded) {
  const int64_t now_ms = NowMs();
  // Objects are immutable: bytes the store holds already (a compile's
  // output, an earlier upload) keep the kind and entries they have; an
  // upload of them, whatever kind it claims, changes nothing.
  std::vector<ObjectRef> objects;
  for (const ObjectRef& object : uploaded) {
    if (!index_.HasObject(AbslView(object.digest.AsBytes()))) {
      objects.push_back(object);
    }
  }
  std::vector<v1::UploadRecord> uploads(objects.size());
  std::vector<std::string> values;
  values.reserve(2 * objects.size());
  std::vector<KvWrite> writes;
  for (size_t i = 0; i < objects.size(); ++i) {
    const ObjectRef& object = objects[i];
    values.push_back(EncodeObjectFrame(object.kind, object.bytes));
    writes.push_back(
        {Column::kObjects, AbslView(object.digest.AsBytes()), values.back()});
    uploads[i].set_kind(static_cast<v1::ObjectKind>(object.kind));
    uploads[i].set_size(object.bytes.size());
    uploads[i].set_uploaded_unix_ms(now_ms);
    values.push_back(uploads[i].SerializeAsString());
    writes.push_back(
        {Column::kUploads, AbslView(object.digest.AsBytes()), values.back()});
  }
  if (writes.empty()) return absl::OkStatus();
  if (absl::Status s = Commit(writes); !s.ok()) return s;
  for (size_t i = 0; i < objects.size(); ++i) {
    IndexUpload(AbslView(objects[i].digest.AsBytes()), uploads[i],
                values[2 * i + 1].size());
  }
  return absl::OkStatus();
}

absl::Status VerifyingStore::PutResult(const Digest& key,
                                       const v1::ActionRecord& record,
                                       std::span<const ObjectRef> objects) {
  absl::Status s;
  {
    absl::MutexLock lock(&write_mu_);
    s = WriteResult(key, record, objects);
  }
  if (s.ok()) NotifyWrite();
  return s;
}

absl::Status VerifyingStore::WriteResult(const Digest& key,
                                         const v1::ActionRecord& record,
                                         std::span<const ObjectRef> objects) {
  // A link names its inputs: they must still be here, or the record would
  // outlive them. (Eviction holds the same lock, so this stays true until
  // the write lands.) Their sizes go into the record, so that the index can
  // be rebuilt from records alone.
  v1::ActionRecord stored = record;
  stored.clear_input_sizes();
  for (const std::string& input : record.input_digests()) {
    std::optional<uint64_t> size;
    for (const ObjectRef& o : objects) {
      if (AbslView(o.digest.AsBytes()) == input) size = o.bytes.size();
    }
    if (!size.has_value()) {
      const std::optional<uint64_t> bytes = index_.ObjectBytes(input);
      if (bytes.has_value()) size = *bytes - ObjectBytes(0);
    }
    if (!size.has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "input ", absl::BytesToHexString(input),
          " left the store (evicted) while the link ran; result not stored"));
    }
    stored.add_input_sizes(*size);
  }
  std::vector<std::string> frames;
  frames.reserve(objects.size());
  std::vector<KvWrite> writes;
  writes.reserve(objects.size() + 1);
  for (const ObjectRef& object : objects) {
    // Objects are immutable (as for uploads): bytes the store holds keep
    // the kind they were first stored with, whatever this entry calls them,
    // and are not written again.
    if (index_.HasObject(AbslView(object.digest.AsBytes()))) continue;
    frames.push_back(EncodeObjectFrame(object.kind, object.bytes));
    writes.push_back(
        {Column::kObjects, AbslView(object.digest.AsBytes()), frames.back()});
  }
  const std::string serialized = stored.SerializeAsString();
  writes.push_back({Column::kActions, AbslView(key.AsBytes()), serialized});
  if (absl::Status s = Commit(writes); !s.ok()) return s;
  IndexRecord(AbslView(key.AsBytes()), stored, serialized.size());
  return absl::OkStatus();
}

absl::Status VerifyingStore::RemoveAction(const Digest& key) {
  absl::MutexLock lock(&write_mu_);
  return RemoveEntry(StoreIndex::Kind::kRecord, key);
}

absl::Status VerifyingStore::ForEachRecord(
    absl::string_view start,
    const std::function<bool(const Digest&, const v1::ActionRecord&)>& visit) {
  return backend_->ForEach(
      Column::kActions,
      [&visit](absl::string_view key, absl::string_view value) {
        std::optional<Digest> digest = Digest::FromBytes(StdView(key));
        std::optional<v1::ActionRecord> record = ParseRecord(value);
        if (!digest.has_value() || !record.has_value()) return true;
        return visit(*digest, *record);
      },
      start);
}

absl::StatusOr<EvictionResult> VerifyingStore::Evict(const EvictionGoal& goal) {
  const uint64_t max_live =
      goal.max_live_bytes.value_or(std::numeric_limits<uint64_t>::max());
  const int64_t older_than = goal.older_than.has_value()
                                 ? absl::ToUnixMillis(*goal.older_than)
                                 : std::numeric_limits<int64_t>::min();
  EvictionResult total;
  while (true) {
    absl::MutexLock lock(&write_mu_);
    const StoreIndex::Victims victims =
        index_.Pick(max_live, older_than, kEvictionBatch);
    if (victims.entries.empty()) break;
    std::vector<KvWrite> writes;
    writes.reserve(victims.entries.size() + victims.objects.size());
    for (const auto& [kind, key] : victims.entries) {
      writes.push_back({kind == StoreIndex::Kind::kRecord ? Column::kActions
                                                          : Column::kUploads,
                        key,
                        {},
                        /*erase=*/true});
      (kind == StoreIndex::Kind::kRecord ? total.records : total.uploads)++;
    }
    for (const std::string& digest : victims.objects) {
      writes.push_back({Column::kObjects, digest, {}, /*erase=*/true});
    }
    // All of a batch or none of it: a failed write leaves every entry and
    // object of the batch in place, and the index as it was.
    if (absl::Status s = Commit(writes); !s.ok()) return s;
    index_.Remove(victims);
    total.objects += victims.objects.size();
    total.bytes += victims.bytes;
    evicted_records_ += victims.entries.size();
    evicted_bytes_ += victims.bytes;
  }
  return total;
}

absl::StatusOr<EvictionResult> VerifyingStore::Clear() {
  absl::MutexLock lock(&write_mu_);
  EvictionResult result;
  result.records = index_.records();
  result.uploads = index_.uploads();
  result.objects = index_.objects();
  result.bytes = index_.live_bytes();
  // Records first: a crash in between leaves objects nothing names
  // (reclaimable), never records that name nothing.
  for (Column c : {Column::kActions, Column::kUploads, Column::kObjects}) {
    if (absl::Status s = backend_->EraseAll(c); !s.ok()) return s;
  }
  index_.Clear();
  evicted_records_ += result.records + result.uploads;
  evicted_bytes_ += result.bytes;
  return result;
}

absl::Status VerifyingStore::Reclaim(double blob_age_cutoff) {
  return backend_->Reclaim(blob_age_cutoff);
}

absl::Status VerifyingStore::PersistLastUsed() {
  const std::vector<std::pair<std::string, int64_t>> touched =
      index_.TakeTouched();
  for (size_t start = 0; start < touched.size(); start += kEvictionBatch) {
    absl::MutexLock lock(&write_mu_);
    std::vector<std::string> values;
    std::vector<absl::string_view> keys;
    for (size_t i = start; i < std::min(touched.size(), start + kEvictionBatch);
         ++i) {
      const auto& [key, last_used] = touched[i];
      if (!index_.Contains(StoreIndex::Kind::kRecord, key)) continue;
      absl::StatusOr<std::optional<std::string>> raw =
          backend_->Get(Column::kActions, key);
      if (!raw.ok()) return raw.status();
      std::optional<v1::ActionRecord> record =
          raw->has_value() ? ParseRecord(**raw) : std::nullopt;
      if (!record.has_value() || record->last_used_unix_ms() >= last_used) {
        continue;
      }
      record->set_last_used_unix_ms(last_used);
      values.push_back(record->SerializeAsString());
      keys.push_back(key);
    }
    std::vector<KvWrite> writes;
    for (size_t i = 0; i < keys.size(); ++i) {
      writes.push_back(
          {Column::kActions, absl::string_view(keys[i]), values[i]});
    }
    if (absl::Status s = Commit(writes); !s.ok()) return s;
  }
  return absl::OkStatus();
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
        std::optional<Digest> digest = Digest::FromBytes(StdView(key));
        if (!decoded.ok() || !digest.has_value() ||
            Digest::Of(StdView(decoded->bytes)) != *digest) {
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
  scan = backend_->ForEach(
      Column::kActions, [&](absl::string_view key, absl::string_view value) {
        ++report.records;
        std::optional<v1::ActionRecord> parsed = ParseRecord(value);
        if (!parsed.has_value()) {
          ++report.bad_records;
          problem(absl::StrCat("record ", absl::BytesToHexString(key),
                               ": does not parse"));
          return true;
        }
        const v1::ActionRecord& record = *parsed;
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
  scan = backend_->ForEach(Column::kUploads,
                           [&](absl::string_view key, absl::string_view) {
                             ++report.uploads;
                             referenced.insert(std::string(key));
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

absl::Status VerifyingStore::Commit(std::span<const KvWrite> writes) {
  absl::Status s = backend_->Write(writes);
  if (!s.ok()) {
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    if (!writes_failing_.exchange(true)) {
      JITCACHE_LOG(Warning)
          << "the store cannot be written (" << s
          << "): answers are served but not kept until it can; counted as "
             "store_write_failures";
    }
  } else if (writes_failing_.exchange(false)) {
    JITCACHE_LOG(Warning) << "the store is written again, after "
                          << write_failures_.load() << " failed writes in all";
  }
  return s;
}

absl::Status VerifyingStore::ResumeWrites() {
  if (!writes_failing_.load()) return absl::OkStatus();
  return backend_->ResumeWrites();
}

StoreStats VerifyingStore::Stats() {
  StoreStats stats;
  stats.actions = index_.records();
  stats.uploads = index_.uploads();
  stats.objects = index_.objects();
  stats.bytes = backend_->Bytes();
  stats.live_bytes = index_.live_bytes();
  stats.corrupt_removed = corrupt_removed_.load(std::memory_order_relaxed);
  stats.write_failures = write_failures_.load(std::memory_order_relaxed);
  stats.evicted_records = evicted_records_.load(std::memory_order_relaxed);
  stats.evicted_bytes = evicted_bytes_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace jitcache
