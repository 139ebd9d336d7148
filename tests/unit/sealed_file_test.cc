#include "server/engine/sealed_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace jitcache {
namespace {

// The files a daemon holds stay within their bytes and their number, and
// LiveBytes reports them: past either bound Create says so (at_limit) and
// the caller sends bytes instead; a file let go makes room again.
TEST(SealedFile, LiveFilesStayWithinTheirBoundsAndAreReported) {
  ASSERT_EQ(SealedFile::LiveBytes(), 0u);
  const std::string kilobyte(1024, 'k');
  constexpr uint64_t kMax = 4 * 1024;
  std::vector<std::shared_ptr<const SealedFile>> held;
  bool at_limit = true;
  for (int i = 0; i < 4; ++i) {
    held.push_back(SealedFile::Create(kilobyte, kMax, &at_limit));
    ASSERT_NE(held.back(), nullptr) << i;
    EXPECT_FALSE(at_limit);
  }
  EXPECT_EQ(SealedFile::LiveBytes(), kMax);
  EXPECT_EQ(SealedFile::Create(kilobyte, kMax, &at_limit), nullptr);
  EXPECT_TRUE(at_limit);
  EXPECT_EQ(SealedFile::LiveBytes(), kMax) << "a refused file holds nothing";

  held.pop_back();
  EXPECT_EQ(SealedFile::LiveBytes(), kMax - 1024);
  auto again = SealedFile::Create(kilobyte, kMax, &at_limit);
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(at_limit);
  // The bytes are the file's, and sealed against change.
  std::string read(kilobyte.size(), '\0');
  ASSERT_EQ(pread(again->fd(), read.data(), read.size(), 0),
            static_cast<ssize_t>(read.size()));
  EXPECT_EQ(read, kilobyte);
  EXPECT_NE(pwrite(again->fd(), "x", 1, 0), 1);
  held.clear();
  again.reset();
  EXPECT_EQ(SealedFile::LiveBytes(), 0u);

  // The number of files is bounded too, whatever their size.
  for (uint64_t i = 0; i < SealedFile::kMaxLiveFiles; ++i) {
    held.push_back(SealedFile::Create("x", uint64_t{1} << 30, &at_limit));
    ASSERT_NE(held.back(), nullptr) << i;
  }
  EXPECT_EQ(SealedFile::Create("x", uint64_t{1} << 30, &at_limit), nullptr);
  EXPECT_TRUE(at_limit);
  held.clear();
  EXPECT_EQ(SealedFile::LiveBytes(), 0u);
}

}  // namespace
}  // namespace jitcache
