#include "server/store/rocksdb_kv.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/log.h"

namespace jitcache {
namespace {

constexpr char kObjectsFamily[] = "objects";
constexpr char kActionsFamily[] = "actions";

// The one place rocksdb::Status becomes absl::Status.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

class RocksDbKv final : public KvBackend {
 public:
  RocksDbKv(std::unique_ptr<rocksdb::DB> db,
            std::vector<rocksdb::ColumnFamilyHandle*> handles)
      : db_(std::move(db)), handles_(std::move(handles)) {}

  ~RocksDbKv() override {
    // Flush what the memtables hold, so that the next open reads SST files
    // instead of replaying the whole WAL (1.2 s for 100,000 entries).
    rocksdb::FlushOptions flush;
    flush.wait = true;
    if (rocksdb::Status s = db_->Flush(flush, handles_); !s.ok()) {
      JITCACHE_LOG(Warning) << "store flush on close: " << s.ToString();
    }
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    db_->Close();
  }

  absl::StatusOr<std::optional<std::string>> Get(
      Column column, absl::string_view key) override {
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), Handle(column),
                 rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) return FromRocks(s, "store read");
    return value;
  }

  absl::Status Write(std::span<const KvWrite> writes) override {
    rocksdb::WriteBatch batch;
    for (const KvWrite& w : writes) {
      const rocksdb::Slice key(w.key.data(), w.key.size());
      rocksdb::Status s =
          w.erase ? batch.Delete(Handle(w.column), key)
                  : batch.Put(Handle(w.column), key,
                              rocksdb::Slice(w.value.data(), w.value.size()));
      if (!s.ok()) return FromRocks(s, "store batch");
    }
    // The WAL makes each batch survive a crash of the daemon; the batch
    // makes objects and their record appear together or not at all.
    return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                     "store write");
  }

  absl::Status ForEach(
      Column column,
      const std::function<bool(absl::string_view, absl::string_view)>& visit)
      override {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), Handle(column)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key(), v = it->value();
      if (!visit({k.data(), k.size()}, {v.data(), v.size()})) break;
    }
    return FromRocks(it->status(), "store scan");
  }

  KvStats Stats() override {
    KvStats stats;
    db_->GetIntProperty(Handle(Column::kActions), "rocksdb.estimate-num-keys",
                        &stats.actions);
    for (auto* h : handles_) {
      uint64_t v = 0;
      if (db_->GetIntProperty(h, "rocksdb.total-sst-files-size", &v)) {
        stats.bytes += v;
      }
      if (db_->GetIntProperty(h, "rocksdb.total-blob-file-size", &v)) {
        stats.bytes += v;
      }
      if (db_->GetIntProperty(h, "rocksdb.cur-size-all-mem-tables", &v)) {
        stats.bytes += v;
      }
    }
    return stats;
  }

 private:
  rocksdb::ColumnFamilyHandle* Handle(Column c) {
    return c == Column::kObjects ? handles_[1] : handles_[2];
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*>
      handles_;  // default, objects, actions
};

}  // namespace

absl::StatusOr<std::unique_ptr<KvBackend>> OpenRocksDbKv(
    const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create store directory ", path, ": ", ec.message()));
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("store directory ", path, " is not writable"));
  }

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;

  rocksdb::ColumnFamilyOptions objects;
  // Objects are large and written once: keep them in blob files so that
  // compaction does not rewrite them.
  objects.enable_blob_files = true;
  objects.min_blob_size = 4096;
  objects.compression = rocksdb::kNoCompression;
  rocksdb::ColumnFamilyOptions actions;
  actions.OptimizeForPointLookup(64);

  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kObjectsFamily, objects},
      {kActionsFamily, actions}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(db_options, path, families, &handles, &raw);
  if (!s.ok()) {
    if (s.IsIOError() && absl::StrContains(s.ToString(), "lock")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "store ", path,
          " is locked by another process (is another jitcached using it?): ",
          s.ToString()));
    }
    return FromRocks(s, absl::StrCat("cannot open store ", path));
  }
  return std::make_unique<RocksDbKv>(std::unique_ptr<rocksdb::DB>(raw),
                                     std::move(handles));
}

absl::StatusOr<std::unique_ptr<VerifyingStore>> OpenRocksDbStore(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<KvBackend>> kv = OpenRocksDbKv(path);
  if (!kv.ok()) return kv.status();
  return std::make_unique<VerifyingStore>(*std::move(kv));
}

}  // namespace jitcache
