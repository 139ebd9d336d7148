// One suite, run against every ObjectStore implementation.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/absl_view.h"
#include "common/digest.h"
#include "gtest/gtest.h"
#include "server/store/node_store.h"
#include "server/store/object_frame.h"
#include "server/store/verifying_store.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

struct MemoryStoreFactory {
  std::unique_ptr<VerifyingStore> Open() { return NewMemoryStore(); }
};

struct RocksDbStoreFactory {
  testing::TempDir dir;
  // Sizes its logs and memtables from the cap, as the daemon does.
  uint64_t max_size = 0;
  std::unique_ptr<VerifyingStore> Open() {
    auto store = OpenRocksDbStore(dir.Sub("store"), {.max_size = max_size});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
};

v1::ActionRecord MakeRecord(const Digest& object, size_t size) {
  v1::ActionRecord r;
  r.set_format_version(1);
  r.set_outcome(v1::OUTCOME_OK);
  r.set_target(v1::TARGET_CUBIN);
  r.set_object_digest(std::string(object.AsBytes()));
  r.set_object_size(size);
  r.set_log("a warning");
  auto* name = r.add_lowered_names();
  name->set_name_expression("k<int>");
  name->set_lowered_name("_Z1kIiEvv");
  r.set_compile_time_us(1234);
  return r;
}

template <typename Factory>
class StoreConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = factory_.Open();
    ASSERT_NE(store_, nullptr);
  }
  // Writes one entry (key -> record -> object) and returns its key.
  Digest PutEntry(const std::string& bytes) {
    const Digest object = Digest::Of(bytes);
    const Digest key = Digest::Of("key:" + bytes);
    const ObjectRef ref{object, ObjectKind::kCubin, bytes};
    v1::ActionRecord record = MakeRecord(object, bytes.size());
    record.set_last_used_unix_ms(++last_used_);  // in the order written
    EXPECT_TRUE(store_->PutResult(key, record, {&ref, 1}).ok());
    return key;
  }

  Factory factory_;
  std::unique_ptr<VerifyingStore> store_;
  int64_t last_used_ = 0;
};

using Factories = ::testing::Types<MemoryStoreFactory, RocksDbStoreFactory>;
TYPED_TEST_SUITE(StoreConformance, Factories);

TYPED_TEST(StoreConformance, MissIsEmptyNotError) {
  auto object = this->store_->GetObject(Digest::Of("nothing"));
  ASSERT_TRUE(object.ok());
  EXPECT_FALSE(object->has_value());
  auto action = this->store_->GetAction(Digest::Of("nothing"));
  ASSERT_TRUE(action.ok());
  EXPECT_FALSE(action->has_value());
}

TYPED_TEST(StoreConformance, PutThenGetReturnsSameRecordAndBytes) {
  const std::string bytes(100000, 'x');
  const Digest key = this->PutEntry(bytes);
  auto action = this->store_->GetAction(key);
  ASSERT_TRUE(action.ok() && action->has_value());
  EXPECT_EQ((*action)->log(), "a warning");
  EXPECT_EQ((*action)->lowered_names(0).lowered_name(), "_Z1kIiEvv");
  auto object =
      this->store_->GetObject(*Digest::FromBytes((*action)->object_digest()));
  ASSERT_TRUE(object.ok() && object->has_value());
  EXPECT_EQ((*object)->bytes, bytes);
  EXPECT_EQ((*object)->kind, ObjectKind::kCubin);
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 0u);
}

TYPED_TEST(StoreConformance, CorruptObjectIsAMissAndIsRemoved) {
  const std::string bytes = "object bytes";
  this->PutEntry(bytes);
  const Digest digest = Digest::Of(bytes);
  auto raw =
      this->store_->backend().Get(Column::kObjects, AbslView(digest.AsBytes()));
  ASSERT_TRUE(raw.ok() && raw->has_value());
  std::string damaged = **raw;
  damaged[0] ^= 0x01;  // one flipped bit in the body
  const KvWrite write{Column::kObjects, AbslView(digest.AsBytes()), damaged};
  ASSERT_TRUE(this->store_->backend().Write({&write, 1}).ok());

  auto object = this->store_->GetObject(digest);
  ASSERT_TRUE(object.ok());
  EXPECT_FALSE(object->has_value());
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 1u);
  auto after =
      this->store_->backend().Get(Column::kObjects, AbslView(digest.AsBytes()));
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->has_value()) << "corrupt object was not removed";
}

TYPED_TEST(StoreConformance, TruncatedObjectIsAMiss) {
  const std::string bytes = "a longer object body";
  this->PutEntry(bytes);
  const Digest digest = Digest::Of(bytes);
  const KvWrite write{Column::kObjects, AbslView(digest.AsBytes()), "JCOB"};
  ASSERT_TRUE(this->store_->backend().Write({&write, 1}).ok());
  auto object = this->store_->GetObject(digest);
  ASSERT_TRUE(object.ok());
  EXPECT_FALSE(object->has_value());
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 1u);
}

TYPED_TEST(StoreConformance, CorruptRecordIsAMissAndIsRemoved) {
  const Digest key = this->PutEntry("bytes");
  const KvWrite write{Column::kActions, AbslView(key.AsBytes()),
                      "\xff\xff garbage"};
  ASSERT_TRUE(this->store_->backend().Write({&write, 1}).ok());
  auto action = this->store_->GetAction(key);
  ASSERT_TRUE(action.ok());
  EXPECT_FALSE(action->has_value());
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 1u);
  auto after =
      this->store_->backend().Get(Column::kActions, AbslView(key.AsBytes()));
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->has_value());
}

TYPED_TEST(StoreConformance, RemoveActionAndStats) {
  const Digest key = this->PutEntry("bytes");
  EXPECT_GE(this->store_->Stats().actions, 1u);
  ASSERT_TRUE(this->store_->RemoveAction(key).ok());
  auto action = this->store_->GetAction(key);
  ASSERT_TRUE(action.ok());
  EXPECT_FALSE(action->has_value());
}

TYPED_TEST(StoreConformance, VerifyFindsEveryKindOfDamage) {
  this->PutEntry("sound");
  this->PutEntry("to be damaged");
  const Digest damaged = Digest::Of("to be damaged");
  auto raw = this->store_->backend().Get(Column::kObjects,
                                         AbslView(damaged.AsBytes()));
  ASSERT_TRUE(raw.ok() && raw->has_value());
  std::string flipped = **raw;
  flipped[1] ^= 0x40;  // in the body
  // A well-framed object filed under the wrong address: only SHA-256 sees it.
  const std::string misfiled = EncodeObjectFrame(ObjectKind::kPtx, "other");
  const Digest wrong = Digest::Of("not other");
  const KvWrite writes[] = {
      {Column::kObjects, AbslView(damaged.AsBytes()), flipped},
      {Column::kObjects, AbslView(wrong.AsBytes()), misfiled},
      {Column::kActions, AbslView(Digest::Of("junk").AsBytes()),
       "\x08\xff\xff"}};
  ASSERT_TRUE(this->store_->backend().Write(writes).ok());

  auto report = this->store_->Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok());
  EXPECT_EQ(report->objects, 3u);
  EXPECT_EQ(report->records, 3u);
  EXPECT_EQ(report->bad_objects, 2u);
  EXPECT_EQ(report->bad_records, 1u);
  EXPECT_EQ(report->dangling_records, 1u);      // the damaged entry's record
  EXPECT_EQ(report->unreferenced_objects, 0u);  // bad ones are not counted
  EXPECT_FALSE(report->problems.empty());
}

TYPED_TEST(StoreConformance, VerifyPassesASoundStore) {
  this->PutEntry("one");
  this->PutEntry("two");
  auto report = this->store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->unreferenced_objects, 0u);
  EXPECT_EQ(report->objects, 2u);
  EXPECT_EQ(report->records, 2u);
}

// A link record naming `inputs` (already stored) with its own output.
Digest PutLink(ObjectStore& store, const std::vector<std::string>& inputs,
               const std::string& output, absl::Status* status = nullptr) {
  const Digest object = Digest::Of(output);
  const Digest key = Digest::Of("link:" + output);
  v1::ActionRecord record = MakeRecord(object, output.size());
  for (const std::string& in : inputs) {
    record.add_input_digests(std::string(Digest::Of(in).AsBytes()));
    record.add_input_sizes(in.size());
  }
  const ObjectRef ref{object, ObjectKind::kCubin, output};
  absl::Status s = store.PutResult(key, record, {&ref, 1});
  if (status != nullptr) *status = s;
  return key;
}

bool HasAction(ObjectStore& store, const Digest& key) {
  auto a = store.GetAction(key);
  return a.ok() && a->has_value();
}

bool HasObject(ObjectStore& store, absl::string_view bytes) {
  auto o = store.GetObject(Digest::Of(StdView(bytes)));
  return o.ok() && o->has_value();
}

TYPED_TEST(StoreConformance, EvictionTakesTheLeastRecentlyUsedFirst) {
  const Digest a = this->PutEntry(std::string(1000, 'a'));
  const Digest b = this->PutEntry(std::string(1000, 'b'));
  const Digest c = this->PutEntry(std::string(1000, 'c'));
  // A hit on `a` makes `b` the oldest.
  ASSERT_TRUE(HasAction(*this->store_, a));
  const uint64_t live = this->store_->Stats().live_bytes;
  auto evicted = this->store_->Evict({live - 1, {}});
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(evicted->records, 1u);
  EXPECT_EQ(evicted->objects, 1u);
  EXPECT_TRUE(HasAction(*this->store_, a));
  EXPECT_FALSE(HasAction(*this->store_, b));
  EXPECT_FALSE(HasObject(*this->store_, std::string(1000, 'b')));
  EXPECT_TRUE(HasAction(*this->store_, c));
  EXPECT_LT(this->store_->Stats().live_bytes, live);
  auto report = this->store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->unreferenced_objects, 0u);
}

TYPED_TEST(StoreConformance, ALinkNeverOutlivesItsInputs) {
  const std::string in1(500, '1'), in2(500, '2');
  const Digest k1 = this->PutEntry(in1);
  const Digest k2 = this->PutEntry(in2);
  const Digest link = PutLink(*this->store_, {in1, in2}, "linked");
  // Evicting the compiles keeps their objects: the link names them.
  ASSERT_TRUE(this->store_->RemoveAction(k1).ok());
  ASSERT_TRUE(this->store_->RemoveAction(k2).ok());
  EXPECT_TRUE(HasObject(*this->store_, in1));
  EXPECT_TRUE(HasObject(*this->store_, in2));
  // Evicting everything takes the link and its inputs together.
  auto evicted = this->store_->Evict({0, {}});
  ASSERT_TRUE(evicted.ok());
  EXPECT_FALSE(HasAction(*this->store_, link));
  EXPECT_FALSE(HasObject(*this->store_, in1));
  EXPECT_EQ(this->store_->Stats().objects, 0u);
  auto report = this->store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->objects, 0u);
}

TYPED_TEST(StoreConformance, ALinkWhoseInputWasEvictedIsNotStored) {
  const std::string in(500, 'i');
  const Digest k = this->PutEntry(in);
  ASSERT_TRUE(this->store_->RemoveAction(k).ok());  // the input goes too
  absl::Status status;
  const Digest link = PutLink(*this->store_, {in}, "linked", &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_FALSE(HasAction(*this->store_, link));
}

// Objects are immutable: uploading bytes the store holds, under another
// kind, changes nothing the store records about them.
TYPED_TEST(StoreConformance, AnUploadOfHeldBytesChangesNothing) {
  const std::string bytes(900, 'c');
  this->PutEntry(bytes);  // a compile's cubin
  const ObjectRef relabel{Digest::Of(bytes), ObjectKind::kFatbin, bytes};
  ASSERT_TRUE(this->store_->PutObjects({&relabel, 1}).ok());
  auto object = this->store_->GetObject(Digest::Of(bytes));
  ASSERT_TRUE(object.ok() && object->has_value());
  EXPECT_EQ((*object)->kind, ObjectKind::kCubin);
  EXPECT_EQ(this->store_->Stats().uploads, 0u);

  const std::string up(700, 'v');
  const ObjectRef first{Digest::Of(up), ObjectKind::kLtoir, up};
  ASSERT_TRUE(this->store_->PutObjects({&first, 1}).ok());
  const ObjectRef again{Digest::Of(up), ObjectKind::kPtx, up};
  ASSERT_TRUE(this->store_->PutObjects({&again, 1}).ok());
  auto uploaded = this->store_->GetObject(Digest::Of(up));
  ASSERT_TRUE(uploaded.ok() && uploaded->has_value());
  EXPECT_EQ((*uploaded)->kind, ObjectKind::kLtoir);
  EXPECT_EQ(this->store_->Stats().uploads, 1u);
}

TYPED_TEST(StoreConformance, UploadsAreEntriesAndClearRemovesEverything) {
  const std::string up(700, 'u');
  const ObjectRef ref{Digest::Of(up), ObjectKind::kLtoir, up};
  ASSERT_TRUE(this->store_->PutObjects({&ref, 1}).ok());
  this->PutEntry("entry");
  EXPECT_EQ(this->store_->Stats().uploads, 1u);
  auto report = this->store_->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->unreferenced_objects, 0u);  // the upload names it
  auto cleared = this->store_->Clear();
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(cleared->records, 1u);
  EXPECT_EQ(cleared->uploads, 1u);
  EXPECT_FALSE(HasObject(*this->store_, up));
  const StoreStats stats = this->store_->Stats();
  EXPECT_EQ(stats.actions + stats.uploads + stats.objects + stats.live_bytes,
            0u);
}

TYPED_TEST(StoreConformance, ForEachRecordStartsAtAKey) {
  std::vector<Digest> keys;
  for (int i = 0; i < 5; ++i) keys.push_back(this->PutEntry(std::to_string(i)));
  std::sort(keys.begin(), keys.end(), [](const Digest& x, const Digest& y) {
    return x.AsBytes() < y.AsBytes();
  });
  std::vector<Digest> seen;
  ASSERT_TRUE(this->store_
                  ->ForEachRecord(AbslView(keys[2].AsBytes()),
                                  [&](const Digest& key, const auto&) {
                                    seen.push_back(key);
                                    return true;
                                  })
                  .ok());
  EXPECT_EQ(seen, std::vector<Digest>(keys.begin() + 2, keys.end()));
}

TEST(RocksDbStore, ReopenRebuildsTheIndexFromRecords) {
  RocksDbStoreFactory factory;
  auto store = factory.Open();
  ASSERT_NE(store, nullptr);
  const ObjectRef up{Digest::Of("upload"), ObjectKind::kLtoir, "upload"};
  ASSERT_TRUE(store->PutObjects({&up, 1}).ok());
  const std::string bytes(3000, 'z');
  const Digest object = Digest::Of(bytes);
  const ObjectRef ref{object, ObjectKind::kCubin, bytes};
  ASSERT_TRUE(store
                  ->PutResult(Digest::Of("k"), MakeRecord(object, bytes.size()),
                              {&ref, 1})
                  .ok());
  const StoreStats before = store->Stats();
  store.reset();
  store = factory.Open();
  ASSERT_NE(store, nullptr);
  const StoreStats after = store->Stats();
  EXPECT_EQ(after.actions, 1u);
  EXPECT_EQ(after.uploads, 1u);
  EXPECT_EQ(after.objects, 2u);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
}

TEST(RocksDbStore, EvictionAndReclaimShrinkTheFiles) {
  RocksDbStoreFactory factory;
  // A store of about this size, so that what RocksDB allocates in advance
  // (its manifest, its log) is sized for it.
  factory.max_size = 4 << 20;
  auto store = factory.Open();
  ASSERT_NE(store, nullptr);
  std::string noise;
  for (int i = 0; i < 200; ++i) {
    // Incompressible: each object is its own 8 KiB of hash output.
    std::string bytes;
    for (int j = 0; j < 256; ++j) {
      bytes += std::string(Digest::Of(absl::StrCat(i, ":", j)).AsBytes());
    }
    const Digest object = Digest::Of(bytes);
    const ObjectRef ref{object, ObjectKind::kCubin, bytes};
    ASSERT_TRUE(store
                    ->PutResult(Digest::Of(absl::StrCat("k", i)),
                                MakeRecord(object, bytes.size()), {&ref, 1})
                    .ok());
  }
  ASSERT_TRUE(store->Reclaim(1.0).ok());
  const uint64_t full = store->Stats().bytes;
  EXPECT_GT(full, 200u * 8192);
  ASSERT_TRUE(store->Evict({store->Stats().live_bytes / 4, {}}).ok());
  ASSERT_TRUE(store->Reclaim(1.0).ok());
  const uint64_t after = store->Stats().bytes;
  EXPECT_LT(after, full / 3) << "files " << full << " -> " << after;
}

// RocksDB underneath, with writes that fail once armed (a full disk).
class FailingKv final : public KvBackend {
 public:
  explicit FailingKv(std::unique_ptr<KvBackend> real)
      : real_(std::move(real)) {}
  std::atomic<bool> fail{false};

  absl::StatusOr<std::optional<std::string>> Get(
      Column column, absl::string_view key) override {
    return real_->Get(column, key);
  }
  absl::Status Write(std::span<const KvWrite> writes) override {
    if (fail) return absl::ResourceExhaustedError("No space left on device");
    return real_->Write(writes);
  }
  absl::Status ForEach(
      Column column,
      const std::function<bool(absl::string_view, absl::string_view)>& visit,
      absl::string_view start) override {
    return real_->ForEach(column, visit, start);
  }
  absl::Status EraseAll(Column column) override {
    if (fail) return absl::ResourceExhaustedError("No space left on device");
    return real_->EraseAll(column);
  }
  absl::Status Reclaim(double cutoff) override {
    return real_->Reclaim(cutoff);
  }
  uint64_t Bytes() override { return real_->Bytes(); }

 private:
  std::unique_ptr<KvBackend> real_;
};

TEST(RocksDbStore, AFailedEvictionOrClearRemovesNothing) {
  testing::TempDir dir;
  auto kv = OpenRocksDbKv(dir.Sub("s"));
  ASSERT_TRUE(kv.ok());
  auto failing = std::make_unique<FailingKv>(*std::move(kv));
  FailingKv* disk = failing.get();
  auto store = VerifyingStore::Open(std::move(failing));
  ASSERT_TRUE(store.ok());
  std::vector<Digest> keys;
  for (int i = 0; i < 2500; ++i) {  // more than one eviction batch
    const std::string bytes = absl::StrCat("object ", i);
    const Digest object = Digest::Of(bytes);
    const ObjectRef ref{object, ObjectKind::kPtx, bytes};
    v1::ActionRecord record = MakeRecord(object, bytes.size());
    record.set_last_used_unix_ms(i);
    keys.push_back(Digest::Of(absl::StrCat("k", i)));
    ASSERT_TRUE((*store)->PutResult(keys.back(), record, {&ref, 1}).ok());
  }
  const StoreStats before = (*store)->Stats();
  disk->fail = true;
  auto evicted = (*store)->Evict({0, {}});
  EXPECT_EQ(evicted.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE((*store)->Clear().ok());
  disk->fail = false;
  const StoreStats after = (*store)->Stats();
  EXPECT_EQ(after.actions, before.actions);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  for (const Digest& key : keys) ASSERT_TRUE(HasAction(**store, key));
  auto report = (*store)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->records, 2500u);
  // With room again, the same eviction goes through.
  auto retried = (*store)->Evict({0, {}});
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->records, 2500u);
}

TEST(RocksDbStore, ReopenKeepsData) {
  RocksDbStoreFactory factory;
  auto store = factory.Open();
  ASSERT_NE(store, nullptr);
  const std::string bytes = "persistent bytes";
  const Digest object = Digest::Of(bytes);
  const Digest key = Digest::Of("key");
  const ObjectRef ref{object, ObjectKind::kPtx, bytes};
  ASSERT_TRUE(
      store->PutResult(key, MakeRecord(object, bytes.size()), {&ref, 1}).ok());
  store.reset();
  store = factory.Open();
  ASSERT_NE(store, nullptr);
  auto action = store->GetAction(key);
  ASSERT_TRUE(action.ok() && action->has_value());
  auto got = store->GetObject(object);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->bytes, bytes);
  EXPECT_EQ((*got)->kind, ObjectKind::kPtx);
}

TEST(RocksDbStore, SecondOpenOfALockedStoreNamesThePath) {
  testing::TempDir dir;
  auto first = OpenRocksDbStore(dir.Sub("s"));
  ASSERT_TRUE(first.ok());
  auto second = OpenRocksDbStore(dir.Sub("s"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find(dir.Sub("s")),
            absl::string_view::npos);
}

TEST(RocksDbStore, UncreatableStoreIsAClearError) {
  testing::TempDir dir;
  FILE* f = fopen(dir.Sub("file").c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  auto store = OpenRocksDbStore(dir.Sub("file/store"));
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(dir.Sub("file/store")),
            absl::string_view::npos);
}

}  // namespace
}  // namespace jitcache
