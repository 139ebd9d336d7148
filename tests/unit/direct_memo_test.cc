#include "client/cli/direct_memo.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace jitcache::cli {
namespace {

FileStamp StampAt(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return StampOf(st);
}

DirectMemo Sample() {
  DirectMemo memo;
  memo.asked = std::string("asked\0bytes", 11);
  memo.cwd = "/work";
  memo.toolkit_fingerprint = "abc";
  memo.request = "request";
  memo.files = {{"/a/b.h", {1, 2, 3, -4, 5}}, {"/c.h", {6, 7, 8, 9, 10}}};
  memo.absent = {"/x/y.h", "/z.h"};
  return memo;
}

TEST(DirectMemo, EncodesEverythingAndRefusesEveryDamagedCopy) {
  const DirectMemo memo = Sample();
  const std::string bytes = EncodeDirectMemo(memo);
  std::optional<DirectMemo> back = DecodeDirectMemo(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->asked, memo.asked);
  EXPECT_EQ(back->cwd, memo.cwd);
  EXPECT_EQ(back->toolkit_fingerprint, memo.toolkit_fingerprint);
  EXPECT_EQ(back->request, memo.request);
  EXPECT_EQ(back->files, memo.files);
  EXPECT_EQ(back->absent, memo.absent);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeDirectMemo(bytes.substr(0, n)).has_value()) << n;
  }
  EXPECT_FALSE(DecodeDirectMemo(bytes + "x").has_value());
  std::string other_format = bytes;
  other_format[20] = '2';  // "...-memo-2"
  EXPECT_FALSE(DecodeDirectMemo(other_format).has_value());
  // A count that claims more than the bytes hold.
  std::string huge = bytes;
  const size_t count_at = bytes.size() - (8 + 6) - (8 + 4) - 8;  // absent
  ASSERT_EQ(huge[count_at], 2);
  huge[count_at + 7] = 0x7f;
  EXPECT_FALSE(DecodeDirectMemo(huge).has_value());
}

TEST(DirectMemo, NamesDifferByEveryPart) {
  const std::string base = DirectMemoName("s", "/w", "asked");
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(base, DirectMemoName("s", "/w", "asked"));
  EXPECT_NE(base, DirectMemoName("t", "/w", "asked"));
  EXPECT_NE(base, DirectMemoName("s", "/v", "asked"));
  EXPECT_NE(base, DirectMemoName("s", "/w", "asker"));
  // Length-prefixed: parts do not run into each other.
  EXPECT_NE(DirectMemoName("ab", "c", "d"), DirectMemoName("a", "bc", "d"));
  EXPECT_EQ(DirectMemoDir(""), "");
  EXPECT_EQ(DirectMemoDir("/c"), "/c/direct");
}

TEST(DirectMemo, StampsHoldUntilAFileOrAnAbsentPathChanges) {
  testing::TempDir dir;
  std::ofstream(dir.Sub("h.cuh")) << "#define A 1\n";
  DirectMemo memo;
  memo.files = {{dir.Sub("h.cuh"), StampAt(dir.Sub("h.cuh"))}};
  memo.absent = {dir.Sub("missing.cuh"), dir.Sub("no/such/dir.cuh"),
                 dir.Sub("h.cuh/under_a_file.cuh"), dir.Sub("a_dir")};
  std::filesystem::create_directory(dir.Sub("a_dir"));
  EXPECT_TRUE(StampsHold(memo));
  // Something unrelated, and a directory where a header was absent.
  std::ofstream(dir.Sub("unrelated.cubin")) << "x";
  std::filesystem::create_directories(dir.Sub("no/such"));
  EXPECT_TRUE(StampsHold(memo));

  std::ofstream(dir.Sub("no/such/dir.cuh")) << "";
  EXPECT_FALSE(StampsHold(memo));
  std::filesystem::remove(dir.Sub("no/such/dir.cuh"));
  EXPECT_TRUE(StampsHold(memo));

  // The same size, rewritten: the times move.
  std::ofstream(dir.Sub("h.cuh")) << "#define A 2\n";
  EXPECT_FALSE(StampsHold(memo));
  memo.files[0].second = StampAt(dir.Sub("h.cuh"));
  EXPECT_TRUE(StampsHold(memo));
  std::filesystem::remove(dir.Sub("h.cuh"));
  EXPECT_FALSE(StampsHold(memo));
}

}  // namespace
}  // namespace jitcache::cli
