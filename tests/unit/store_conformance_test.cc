// One suite, run against every ObjectStore implementation.
#include <memory>
#include <string>

#include "common/digest.h"
#include "gtest/gtest.h"
#include "server/store/object_frame.h"
#include "server/store/rocksdb_kv.h"
#include "server/store/verifying_store.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

struct MemoryStoreFactory {
  std::unique_ptr<VerifyingStore> Open() { return NewMemoryStore(); }
};

struct RocksDbStoreFactory {
  testing::TempDir dir;
  std::unique_ptr<VerifyingStore> Open() {
    auto store = OpenRocksDbStore(dir.Sub("store"));
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
    EXPECT_TRUE(
        store_->PutResult(key, MakeRecord(object, bytes.size()), {&ref, 1})
            .ok());
    return key;
  }

  Factory factory_;
  std::unique_ptr<VerifyingStore> store_;
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
  auto raw = this->store_->backend().Get(Column::kObjects, digest.AsBytes());
  ASSERT_TRUE(raw.ok() && raw->has_value());
  std::string damaged = **raw;
  damaged[0] ^= 0x01;  // one flipped bit in the body
  const KvWrite write{Column::kObjects, digest.AsBytes(), damaged};
  ASSERT_TRUE(this->store_->backend().Write({&write, 1}).ok());

  auto object = this->store_->GetObject(digest);
  ASSERT_TRUE(object.ok());
  EXPECT_FALSE(object->has_value());
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 1u);
  auto after = this->store_->backend().Get(Column::kObjects, digest.AsBytes());
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->has_value()) << "corrupt object was not removed";
}

TYPED_TEST(StoreConformance, TruncatedObjectIsAMiss) {
  const std::string bytes = "a longer object body";
  this->PutEntry(bytes);
  const Digest digest = Digest::Of(bytes);
  const KvWrite write{Column::kObjects, digest.AsBytes(), "JCOB"};
  ASSERT_TRUE(this->store_->backend().Write({&write, 1}).ok());
  auto object = this->store_->GetObject(digest);
  ASSERT_TRUE(object.ok());
  EXPECT_FALSE(object->has_value());
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 1u);
}

TYPED_TEST(StoreConformance, CorruptRecordIsAMissAndIsRemoved) {
  const Digest key = this->PutEntry("bytes");
  const KvWrite write{Column::kActions, key.AsBytes(), "\xff\xff garbage"};
  ASSERT_TRUE(this->store_->backend().Write({&write, 1}).ok());
  auto action = this->store_->GetAction(key);
  ASSERT_TRUE(action.ok());
  EXPECT_FALSE(action->has_value());
  EXPECT_EQ(this->store_->Stats().corrupt_removed, 1u);
  auto after = this->store_->backend().Get(Column::kActions, key.AsBytes());
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
  auto raw = this->store_->backend().Get(Column::kObjects, damaged.AsBytes());
  ASSERT_TRUE(raw.ok() && raw->has_value());
  std::string flipped = **raw;
  flipped[1] ^= 0x40;  // in the body
  // A well-framed object filed under the wrong address: only SHA-256 sees it.
  const std::string misfiled = EncodeObjectFrame(ObjectKind::kPtx, "other");
  const Digest wrong = Digest::Of("not other");
  const KvWrite writes[] = {
      {Column::kObjects, damaged.AsBytes(), flipped},
      {Column::kObjects, wrong.AsBytes(), misfiled},
      {Column::kActions, Digest::Of("junk").AsBytes(), "\x08\xff\xff"}};
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
