// Bundle files: a round trip, and every kind of damage a reader must refuse
// without crashing or allocating what a hostile length claims.
#include "client/bundle/bundle_file.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "common/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

v1::BundleEntry MakeEntry(int i) {
  v1::BundleEntry entry;
  entry.set_key(Digest::Of(absl::StrCat("key", i)).Hex());
  entry.set_record(absl::StrCat("record ", i));
  v1::BundleObject* object = entry.add_objects();
  object->set_data(std::string(100 + i, static_cast<char>('a' + i)));
  object->set_digest(Digest::Of(object->data()).Hex());
  object->set_kind(v1::OBJECT_KIND_CUBIN);
  return entry;
}

class BundleFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::BundleHeader header;
    header.set_format_version(kBundleFormatVersion);
    header.set_toolchain_fingerprint("abcd");
    header.set_entries(3);
    auto writer = BundleWriter::Create(path_, header);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer->Add(MakeEntry(i)).ok());
    ASSERT_TRUE(writer->Finish().ok());
    good_ = ReadAll(path_);
  }

  // Reads the whole bundle at `path`: OK with the entry count, or the error.
  absl::StatusOr<int> ReadBundle(const std::string& path) {
    auto reader = BundleReader::Open(path);
    if (!reader.ok()) return reader.status();
    int n = 0;
    while (true) {
      auto entry = reader->Next();
      if (!entry.ok()) return entry.status();
      if (!entry->has_value()) return n;
      if (absl::Status s = CheckBundleEntry(**entry); !s.ok()) return s;
      ++n;
    }
  }

  testing::TempDir dir_;
  std::string path_ = dir_.Sub("b.jcb");
  std::string good_;
};

TEST_F(BundleFileTest, RoundTrip) {
  auto reader = BundleReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->header().toolchain_fingerprint(), "abcd");
  for (int i = 0; i < 3; ++i) {
    auto entry = reader->Next();
    ASSERT_TRUE(entry.ok() && entry->has_value());
    EXPECT_EQ((*entry)->key(), MakeEntry(i).key());
    EXPECT_EQ((*entry)->objects(0).data(), MakeEntry(i).objects(0).data());
  }
  auto end = reader->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

TEST_F(BundleFileTest, EveryTruncationIsAnError) {
  for (size_t cut = 0; cut < good_.size(); ++cut) {
    WriteAll(dir_.Sub("t.jcb"), good_.substr(0, cut));
    auto read = ReadBundle(dir_.Sub("t.jcb"));
    EXPECT_FALSE(read.ok()) << "cut at " << cut;
  }
}

TEST_F(BundleFileTest, EveryFlippedByteIsAnError) {
  for (size_t at = 0; at < good_.size(); ++at) {
    std::string bad = good_;
    bad[at] = static_cast<char>(bad[at] ^ 0x40);
    WriteAll(dir_.Sub("f.jcb"), bad);
    auto read = ReadBundle(dir_.Sub("f.jcb"));
    EXPECT_FALSE(read.ok()) << "flipped byte " << at;
  }
}

TEST_F(BundleFileTest, HostileLengthsAreRefusedBeforeAllocation) {
  // The header frame claims 4 GiB - 1 bytes.
  std::string bad = good_.substr(0, 13) + std::string("\xff\xff\xff\xff", 4) +
                    good_.substr(17);
  WriteAll(dir_.Sub("h.jcb"), bad);
  auto read = ReadBundle(dir_.Sub("h.jcb"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("claims"));
}

TEST_F(BundleFileTest, TrailingBytesAndOtherFilesAreRefused) {
  WriteAll(dir_.Sub("x.jcb"), good_ + "x");
  EXPECT_FALSE(ReadBundle(dir_.Sub("x.jcb")).ok());
  WriteAll(dir_.Sub("n.jcb"), "not a bundle at all");
  auto read = ReadBundle(dir_.Sub("n.jcb"));
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("not a jitcache bundle"));
  EXPECT_FALSE(ReadBundle(dir_.Sub("missing.jcb")).ok());
}

TEST_F(BundleFileTest, AnObjectThatDoesNotMatchItsDigestIsNamed) {
  v1::BundleEntry entry = MakeEntry(1);
  entry.mutable_objects(0)->set_data("other bytes");
  absl::Status s = CheckBundleEntry(entry);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("does not match its digest"));
}

TEST_F(BundleFileTest, AnUnfinishedWriterLeavesNoFile) {
  {
    auto writer = BundleWriter::Create(dir_.Sub("u.jcb"), v1::BundleHeader());
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Add(MakeEntry(0)).ok());
  }
  EXPECT_FALSE(std::ifstream(dir_.Sub("u.jcb")).good());
  EXPECT_FALSE(std::ifstream(dir_.Sub("u.jcb.tmp")).good());
}

}  // namespace
}  // namespace jitcache
