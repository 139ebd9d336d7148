// One contract for every way an entry reaches a reader, run on each: the
// node's own store (RocksDB), and the team tier (two nodes' TieredStores
// over a real redis-server), where one node writes and publishes and
// another, with an empty store, asks. Whatever the path, a reader gets the
// record and bytes that were written, or a miss; damage is a miss that is
// counted and that the next build replaces; a link comes with its inputs;
// bytes a reader holds are never relabelled.
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/digest.h"
#include "gtest/gtest.h"
#include "server/remote/redis_tier.h"
#include "server/store/node_store.h"
#include "server/store/tiered_store.h"
#include "server/store/verifying_store.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/team_tier.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_env.h"

namespace jitcache {
namespace {

const std::string kFingerprint(32, '\x5a');

// How an entry's stored form is damaged.
enum class Damage { kFlipAByte, kTruncate, kReplaceWithGarbage };

// The node's own store: written and read in place. Damage is done to the
// object's stored frame (the record's, for garbage).
class LocalPath {
 public:
  bool SetUp() {
    auto store = OpenRocksDbStore(dir_.Sub("store"), {});
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return false;
    store_ = *std::move(store);
    return true;
  }
  void Write(const Digest& key, const v1::ActionRecord& record,
             std::span<const ObjectRef> objects) {
    EXPECT_TRUE(store_->PutResult(key, record, objects).ok());
  }
  ObjectStore& Reader(const Digest&) { return *store_; }
  ObjectStore& ReaderStore() { return *store_; }
  void Spoil(const Digest& key, const Digest& object, Damage damage) {
    const Column column = damage == Damage::kReplaceWithGarbage
                              ? Column::kActions
                              : Column::kObjects;
    const std::string id(damage == Damage::kReplaceWithGarbage
                             ? key.AsBytes()
                             : object.AsBytes());
    auto raw = store_->backend().Get(column, id);
    ASSERT_TRUE(raw.ok() && raw->has_value());
    std::string value = **raw;
    Apply(damage, &value);
    const KvWrite write{column, id, value};
    ASSERT_TRUE(store_->backend().Write({&write, 1}).ok());
  }
  uint64_t DamageSeen() { return store_->Stats().corrupt_removed; }

  static void Apply(Damage damage, std::string* value) {
    switch (damage) {
      case Damage::kFlipAByte:
        (*value)[value->size() / 2] ^= 0x01;
        break;
      case Damage::kTruncate:
        value->resize(4);
        break;
      case Damage::kReplaceWithGarbage:
        *value = "\xff\xff garbage";
        break;
    }
  }

 private:
  testing::TempDir dir_;
  std::unique_ptr<VerifyingStore> store_;
};

// Two nodes and the team's tier: node A builds (holding the key's lease),
// stores and publishes; node B, whose store starts empty, asks the tier as
// a request that missed locally does. Damage is done to the value in Redis.
class TeamTierPath {
 public:
  bool SetUp() {
    if (!testing::RedisServer::Available()) return false;
    std::signal(SIGPIPE, SIG_IGN);  // as jitcached: a dead Redis is an error
    redis_ = std::make_unique<testing::RedisServer>(dir_.Sub("redis.sock"));
    EXPECT_TRUE(redis_->Start().ok());
    const std::string key_file = dir_.Sub("team.keys");
    testing::WriteFile(key_file, std::string(64, 'c'));
    chmod(key_file.c_str(), 0600);
    for (auto* tier : {&tier_a_, &tier_b_}) {
      absl::StatusOr<std::unique_ptr<RedisTier>> t =
          testing::OpenTeamTier(redis_->url(), key_file);
      EXPECT_TRUE(t.ok()) << t.status();
      if (!t.ok()) return false;
      *tier = *std::move(t);
    }
    auto now = [] { return absl::Now(); };
    a_ = std::make_unique<TieredStore>(store_a_.get(), tier_a_.get(),
                                       kFingerprint, now);
    b_ = std::make_unique<TieredStore>(store_b_.get(), tier_b_.get(),
                                       kFingerprint, now);
    return true;
  }
  void Write(const Digest& key, const v1::ActionRecord& record,
             std::span<const ObjectRef> objects) {
    bool leased = false;
    EXPECT_FALSE(a_->FetchOrLease(key, absl::Now(), stop_, &leased));
    EXPECT_TRUE(leased);
    EXPECT_TRUE(store_a_->PutResult(key, record, objects).ok());
    a_->Publish(key, record);
    WaitUntilNoLease(key);  // published in the background, then let go
    EXPECT_EQ(redis_->Cli({"EXISTS", EntryName(key)}), "1\n");
  }
  // As a request that missed in B's store: B asks the tier, which stores
  // what it has in B's store. A lease B takes is given back (the tests
  // build on A).
  ObjectStore& Reader(const Digest& key) {
    bool leased = false;
    b_->FetchOrLease(key, absl::Now() + absl::Seconds(60), stop_, &leased);
    if (leased) {
      b_->Release(key);
      WaitUntilNoLease(key);
    }
    return *store_b_;
  }
  ObjectStore& ReaderStore() { return *store_b_; }
  void Spoil(const Digest& key, const Digest&, Damage damage) {
    // In Redis, byte by byte (Lua: values are binary).
    const char* script = nullptr;
    switch (damage) {
      case Damage::kFlipAByte:
        script =
            "local v = redis.call('GET', KEYS[1]) "
            "local i = math.floor(#v / 2) "
            "local b = bit.bxor(string.byte(v, i), 1) "
            "return redis.call('SET', KEYS[1], "
            "string.sub(v, 1, i - 1) .. string.char(b) .. string.sub(v, i + "
            "1))";
        break;
      case Damage::kTruncate:
        script =
            "return redis.call('SET', KEYS[1], "
            "string.sub(redis.call('GET', KEYS[1]), 1, 4))";
        break;
      case Damage::kReplaceWithGarbage:
        script = "return redis.call('SET', KEYS[1], '\\255\\255 garbage')";
        break;
    }
    ASSERT_EQ(redis_->Cli({"EVAL", script, "1", EntryName(key)}), "OK\n");
  }
  uint64_t DamageSeen() { return b_->stats().corrupt; }

 private:
  // Leases are let go in the background too.
  void WaitUntilNoLease(const Digest& key) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (tier_a_->LeaseHeld(key) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    EXPECT_FALSE(tier_a_->LeaseHeld(key));
  }
  static std::string EntryName(const Digest& key) {
    return absl::StrCat("jitcache:v2:entry:", key.Hex());
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::RedisServer> redis_;
  std::unique_ptr<VerifyingStore> store_a_ = NewMemoryStore();
  std::unique_ptr<VerifyingStore> store_b_ = NewMemoryStore();
  std::unique_ptr<RedisTier> tier_a_, tier_b_;
  std::unique_ptr<TieredStore> a_, b_;
  const std::atomic<bool> stop_{false};
};

v1::ActionRecord Record(v1::Target target, const std::string& object) {
  v1::ActionRecord r;
  r.set_format_version(1);
  r.set_outcome(v1::OUTCOME_OK);
  r.set_target(target);
  r.set_object_digest(std::string(Digest::Of(object).AsBytes()));
  r.set_object_size(object.size());
  r.set_log("a warning");
  auto* name = r.add_lowered_names();
  name->set_name_expression("k<int>");
  name->set_lowered_name("_Z1kIiEvv");
  r.set_compile_time_us(1234);
  r.set_toolchain_fingerprint(kFingerprint);
  return r;
}

template <typename Path>
class EntryConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!path_.SetUp()) {
      GTEST_SKIP() << "redis-server and redis-cli are not installed (Debian: "
                      "redis-server); deploy/install-deps.sh installs them";
    }
  }
  // A compile's entry: its key, and its cubin `bytes`.
  Digest WriteCompile(const std::string& bytes,
                      v1::Target target = v1::TARGET_CUBIN) {
    const Digest key = Digest::Of("key:" + bytes + std::to_string(target));
    const ObjectRef ref{
        Digest::Of(bytes),
        target == v1::TARGET_PTX ? ObjectKind::kPtx : ObjectKind::kCubin,
        bytes};
    path_.Write(key, Record(target, bytes), {&ref, 1});
    return key;
  }
  // What the reader holds for `key` after asking: the record and object,
  // or nullopt.
  std::optional<std::pair<v1::ActionRecord, StoredObject>> Ask(
      const Digest& key) {
    ObjectStore& store = path_.Reader(key);
    auto action = store.GetAction(key);
    EXPECT_TRUE(action.ok()) << action.status();
    if (!action.ok() || !action->has_value()) return std::nullopt;
    auto object =
        store.GetObject(*Digest::FromBytes((*action)->object_digest()));
    EXPECT_TRUE(object.ok()) << object.status();
    if (!object.ok() || !object->has_value()) return std::nullopt;
    return std::make_pair(**action, **object);
  }
  // What a reader sees of an entry damaged by `damage`, then once the
  // next build has written it again.
  struct AfterDamage {
    bool miss = false;                 // the damaged entry was a miss
    uint64_t damage_seen = 0;          // counted by the path
    std::optional<std::string> bytes;  // after the next build's write
  };
  AfterDamage DamageThenRebuild(Damage damage, const std::string& bytes) {
    AfterDamage after;
    const Digest key = WriteCompile(bytes);
    path_.Spoil(key, Digest::Of(bytes), damage);
    after.miss = !Ask(key).has_value();
    after.damage_seen = path_.DamageSeen();
    WriteCompile(bytes);
    if (auto entry = Ask(key)) after.bytes = entry->second.bytes;
    return after;
  }

  Path path_;
};

using Paths = ::testing::Types<LocalPath, TeamTierPath>;
TYPED_TEST_SUITE(EntryConformance, Paths);

TYPED_TEST(EntryConformance, AMissIsEmptyNotAnError) {
  EXPECT_EQ(this->Ask(Digest::Of("a key nobody wrote")), std::nullopt);
  EXPECT_EQ(this->path_.DamageSeen(), 0u);
}

TYPED_TEST(EntryConformance, WhatWasWrittenIsReadRecordAndBytes) {
  const std::string bytes(100000, 'x');
  const Digest key = this->WriteCompile(bytes);
  auto entry = this->Ask(key);
  ASSERT_TRUE(entry.has_value());
  const auto& [record, object] = *entry;
  EXPECT_EQ(record.log(), "a warning");
  ASSERT_EQ(record.lowered_names_size(), 1);
  EXPECT_EQ(record.lowered_names(0).lowered_name(), "_Z1kIiEvv");
  EXPECT_EQ(record.compile_time_us(), 1234);
  EXPECT_EQ(object.bytes, bytes);
  EXPECT_EQ(object.kind, ObjectKind::kCubin);
  EXPECT_EQ(this->path_.DamageSeen(), 0u);
}

TYPED_TEST(EntryConformance, AFlippedByteIsAMissCountedAndReplaced) {
  const std::string bytes(20000, 'd');
  const auto after = this->DamageThenRebuild(Damage::kFlipAByte, bytes);
  EXPECT_TRUE(after.miss);
  // The store removes damage, so counts it once; the tier cannot, so
  // counts it at each read.
  EXPECT_GE(after.damage_seen, 1u);
  EXPECT_EQ(after.bytes, bytes);
}

TYPED_TEST(EntryConformance, ATruncatedEntryIsAMissCountedAndReplaced) {
  const std::string bytes(20000, 'd');
  const auto after = this->DamageThenRebuild(Damage::kTruncate, bytes);
  EXPECT_TRUE(after.miss);
  // The store removes damage, so counts it once; the tier cannot, so
  // counts it at each read.
  EXPECT_GE(after.damage_seen, 1u);
  EXPECT_EQ(after.bytes, bytes);
}

TYPED_TEST(EntryConformance, GarbageInTheEntrysPlaceIsAMissCountedAndReplaced) {
  const std::string bytes(20000, 'd');
  const auto after =
      this->DamageThenRebuild(Damage::kReplaceWithGarbage, bytes);
  EXPECT_TRUE(after.miss);
  // The store removes damage, so counts it once; the tier cannot, so
  // counts it at each read.
  EXPECT_GE(after.damage_seen, 1u);
  EXPECT_EQ(after.bytes, bytes);
}

// A link's record names its inputs: a reader that has the link has them.
TYPED_TEST(EntryConformance, ALinkComesWithItsInputs) {
  const std::string in1(500, '1'), in2(700, '2'), linked(900, 'L');
  this->WriteCompile(in1);
  this->WriteCompile(in2);
  const Digest key = Digest::Of("link:" + linked);
  v1::ActionRecord record = Record(v1::TARGET_CUBIN, linked);
  const std::vector<ObjectRef> objects = {
      {Digest::Of(linked), ObjectKind::kCubin, linked},
      {Digest::Of(in1), ObjectKind::kCubin, in1},
      {Digest::Of(in2), ObjectKind::kCubin, in2}};
  for (const std::string& in : {in1, in2}) {
    record.add_input_digests(std::string(Digest::Of(in).AsBytes()));
    record.add_input_sizes(in.size());
  }
  this->path_.Write(key, record, objects);
  auto entry = this->Ask(key);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->second.bytes, linked);
  ObjectStore& reader = this->path_.ReaderStore();
  for (const std::string& in : {in1, in2}) {
    auto object = reader.GetObject(Digest::Of(in));
    ASSERT_TRUE(object.ok() && object->has_value()) << in.size();
    EXPECT_EQ((*object)->bytes, in);
  }
}

// Objects are immutable: an entry naming bytes the reader holds (from a
// compile of its own), under another kind, changes nothing the reader
// records about them.
TYPED_TEST(EntryConformance, BytesTheReaderHoldsAreNeverRelabelled) {
  const std::string bytes(900, 'c');
  const ObjectRef own{Digest::Of(bytes), ObjectKind::kCubin, bytes};
  ASSERT_TRUE(this->path_.ReaderStore()
                  .PutResult(Digest::Of("the reader's own compile"),
                             Record(v1::TARGET_CUBIN, bytes), {&own, 1})
                  .ok());
  const Digest ptx = this->WriteCompile(bytes, v1::TARGET_PTX);
  auto entry = this->Ask(ptx);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->first.target(), v1::TARGET_PTX);
  EXPECT_EQ(entry->second.bytes, bytes);
  EXPECT_EQ(entry->second.kind, ObjectKind::kCubin);
  EXPECT_EQ(this->path_.DamageSeen(), 0u);
}

}  // namespace
}  // namespace jitcache
