#include "client/cli/direct_memo.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/digest.h"
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

TEST(MovableDirectMemo, EncodesEverythingAndRefusesEveryDamagedCopy) {
  MovableDirectMemo memo;
  memo.asked = std::string("asked\0bytes", 11);
  memo.program_name = "k.cu";
  memo.toolkit_fingerprint = "abc";
  memo.request_without_place = "request";
  memo.files = {{"C:inc/a.h", std::string(64, 'a'), {1, 2, 3, 4, 5}},
                {"/abs/b.h", std::string(64, 'b'), {6, 7, 8, 9, 10}}};
  memo.opened = {"C:first/../inc/a.h"};
  memo.absent = {"C:first/a.h", "/abs/none.h"};
  const std::string bytes = EncodeMovableDirectMemo(memo);
  std::optional<MovableDirectMemo> back = DecodeMovableDirectMemo(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->asked, memo.asked);
  EXPECT_EQ(back->program_name, memo.program_name);
  EXPECT_EQ(back->request_without_place, memo.request_without_place);
  ASSERT_EQ(back->files.size(), 2u);
  EXPECT_EQ(back->files[1].anchored, "/abs/b.h");
  EXPECT_EQ(back->files[1].sha256_hex, memo.files[1].sha256_hex);
  EXPECT_EQ(back->files[1].stamp, memo.files[1].stamp);
  EXPECT_EQ(back->opened, memo.opened);
  EXPECT_EQ(back->absent, memo.absent);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeMovableDirectMemo(bytes.substr(0, n)).has_value()) << n;
  }
  EXPECT_FALSE(DecodeMovableDirectMemo(bytes + "x").has_value());
  // Neither kind is read as the other.
  EXPECT_FALSE(DecodeDirectMemo(bytes).has_value());
  EXPECT_FALSE(DecodeMovableDirectMemo(EncodeDirectMemo(Sample())));
  EXPECT_NE(MovableDirectMemoName("s", "asked"),
            DirectMemoName("s", "/w", "asked"));
}

// A memo kept in one checkout, moved to another with the same files: the
// request is the same but for the place (its working directory and its
// files' times, appended), and nothing moves that does not move with the
// place.
TEST(MovableDirectMemo, MovesToTheSameFilesElsewhereOnly) {
  testing::TempDir dir;
  for (const char* place : {"a", "b"}) {
    std::filesystem::create_directories(dir.Sub(place) + "/inc");
    std::ofstream(dir.Sub(place) + "/inc/h.cuh") << "#define A 1\n";
  }
  const std::string a = dir.Sub("a"), b = dir.Sub("b");
  DirectMemo memo;
  memo.asked = "asked";
  memo.cwd = a;
  memo.toolkit_fingerprint = "abc";
  memo.files = {{a + "/inc/h.cuh", StampAt(a + "/inc/h.cuh")}};
  memo.absent = {a + "/h.cuh"};
  const std::string digest = Digest::Of("#define A 1\n").Hex();
  std::optional<MovableDirectMemo> movable =
      TakeOutPlace(memo, "k.cu", {{a + "/inc/h.cuh", digest}},
                   {a + "/inc/h.cuh"}, {{"inc"}, {}}, "req");
  ASSERT_TRUE(movable.has_value());
  EXPECT_EQ(movable->files[0].anchored, "P:inc/h.cuh");
  EXPECT_EQ(movable->absent, std::vector<std::string>{"P:h.cuh"});

  bool settled = true;
  std::optional<DirectMemo> here = MoveHere(*movable, b, &settled);
  ASSERT_TRUE(here.has_value());
  EXPECT_FALSE(settled);  // just written
  EXPECT_EQ(here->cwd, b);
  EXPECT_EQ(here->files[0].first, b + "/inc/h.cuh");
  EXPECT_EQ(here->files[0].second, StampAt(b + "/inc/h.cuh"));
  EXPECT_EQ(here->absent, std::vector<std::string>{b + "/h.cuh"});
  // "req", then working_directory (field 11) and the packed times (12).
  EXPECT_EQ(here->request.substr(0, 5),
            std::string("req\x5a") + static_cast<char>(b.size()));
  EXPECT_NE(here->request.find(b), std::string::npos);
  EXPECT_EQ(here->request[5 + b.size()], '\x62');

  // Other bytes, a header where one was absent: no memo there.
  std::ofstream(b + "/h.cuh") << "";
  EXPECT_FALSE(MoveHere(*movable, b, &settled).has_value());
  std::filesystem::remove(b + "/h.cuh");
  std::ofstream(b + "/inc/h.cuh") << "#define A 2\n";
  EXPECT_FALSE(MoveHere(*movable, b, &settled).has_value());

  // What does not move with the place is not taken out of it.
  DirectMemo outside = memo;
  outside.absent = {a + "/../elsewhere.h"};
  const std::vector<std::pair<std::string, std::string>> digests = {
      {a + "/inc/h.cuh", digest}};
  EXPECT_FALSE(
      TakeOutPlace(outside, "k.cu", digests, {}, {}, "req").has_value());
  EXPECT_FALSE(
      TakeOutPlace(memo, "/tmp/t/k.cu", digests, {}, {}, "req").has_value());
  // Options that name the place as typed, or leave it: the same command
  // means other files elsewhere.
  for (const OptionPaths& options :
       {OptionPaths{{a + "/inc"}, {}}, OptionPaths{{"../a/inc"}, {}},
        OptionPaths{{dir.path()}, {}}, OptionPaths{{}, {a + "/inc/h.cuh"}}}) {
    EXPECT_FALSE(
        TakeOutPlace(memo, "k.cu", digests, {}, options, "req").has_value());
  }
  // A relative directory through a symbolic link (into the toolkit, say).
  std::filesystem::create_directory_symlink(a + "/inc", a + "/linked");
  EXPECT_FALSE(TakeOutPlace(memo, "k.cu", digests, {},
                            OptionPaths{{"linked"}, {}}, "req")
                   .has_value());
  // Outside the place, or relative and in it: the same wherever it runs.
  EXPECT_TRUE(TakeOutPlace(memo, "k.cu", digests, {},
                           OptionPaths{{"/usr/include", "inc", "./inc/"}, {}},
                           "req")
                  .has_value());
}

// A stamp taken while it could still move (a code generator's program,
// compiled at once) is kept as kUntrustedStamp: even once the file is old,
// its bytes decide, as on a file system with coarse times the same stamp
// can hold other bytes. Shown with a digest of other bytes: a settled stamp
// that matches is trusted, the untrusted one is not.
TEST(MovableDirectMemo, AnUntrustedStampIsCheckedByItsBytesEvenWhenOld) {
  testing::TempDir dir;
  const std::string a = dir.Sub("a");
  std::filesystem::create_directories(a + "/inc");
  const std::string header = a + "/inc/h.cuh";
  std::ofstream(header) << "#define A 1\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // settled
  DirectMemo memo;
  memo.asked = "asked";
  memo.cwd = a;
  memo.toolkit_fingerprint = "abc";
  memo.files = {{header, StampAt(header)}};
  const std::string other = Digest::Of("#define A 2\n").Hex();
  const std::string same = Digest::Of("#define A 1\n").Hex();
  auto moved = [&](const std::string& digest) {
    std::optional<MovableDirectMemo> movable = TakeOutPlace(
        memo, "k.cu", {{header, digest}}, {header}, {{"inc"}, {}}, "req");
    EXPECT_TRUE(movable.has_value());
    bool settled = false;
    return movable.has_value() && MoveHere(*movable, a, &settled).has_value();
  };
  EXPECT_TRUE(moved(other));  // a settled stamp that holds is trusted
  memo.files[0].second = kUntrustedStamp;
  EXPECT_FALSE(moved(other));
  EXPECT_TRUE(moved(same));
}

}  // namespace
}  // namespace jitcache::cli
