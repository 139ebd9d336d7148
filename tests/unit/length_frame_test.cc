#include "common/length_frame.h"

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "common/fd_io.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

// Both ends of a stream socket, closed when the test ends.
class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  ~SocketPair() {
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int a() const { return fds_[0]; }
  int b() const { return fds_[1]; }
  void CloseA() {
    close(fds_[0]);
    fds_[0] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(LengthFrame, AFrameIsItsLittleEndianLengthThenItsBytes) {
  SocketPair pair;
  ASSERT_TRUE(frame::Write(pair.a(), std::string("abc\0d", 5)));
  char wire[9];
  ASSERT_TRUE(ReadFully(pair.b(), wire, sizeof(wire)));
  EXPECT_EQ(std::string(wire, sizeof(wire)), std::string("\x05\x00\x00\x00"
                                                         "abc\0d",
                                                         9));
}

TEST(LengthFrame, FramesComeBackWholeAndInOrder) {
  SocketPair pair;
  const std::string big(300000, 'x');  // past one socket buffer
  std::thread writer([&] {
    EXPECT_TRUE(frame::Write(pair.a(), "first"));
    EXPECT_TRUE(frame::Write(pair.a(), ""));
    EXPECT_TRUE(frame::Write(pair.a(), big));
  });
  EXPECT_EQ(frame::Read(pair.b(), 1 << 20), "first");
  EXPECT_EQ(frame::Read(pair.b(), 1 << 20), "");
  EXPECT_EQ(frame::Read(pair.b(), 1 << 20), big);
  writer.join();
}

TEST(LengthFrame, AFrameDeclaringTooMuchIsRefusedUnread) {
  SocketPair pair;
  ASSERT_TRUE(frame::Write(pair.a(), "twelve bytes"));
  EXPECT_EQ(frame::Read(pair.b(), 11), std::nullopt);
  // Only the header was taken: nothing was read (or allocated) for the
  // payload the reader refused.
  char rest[12];
  ASSERT_TRUE(ReadFully(pair.b(), rest, sizeof(rest)));
  EXPECT_EQ(std::string(rest, sizeof(rest)), "twelve bytes");
}

TEST(LengthFrame, APeerThatStopsShortOrSendsNothingGivesNoFrame) {
  {
    SocketPair pair;
    char header[frame::kHeaderBytes];
    frame::PutHeader(header, 10);
    ASSERT_TRUE(WriteFully(pair.a(), header, sizeof(header)));
    ASSERT_TRUE(WriteFully(pair.a(), "short", 5));
    pair.CloseA();
    EXPECT_EQ(frame::Read(pair.b(), 1 << 20), std::nullopt);
  }
  {
    SocketPair pair;
    ASSERT_TRUE(WriteFully(pair.a(), "\x01\x00", 2));  // half a header
    pair.CloseA();
    EXPECT_EQ(frame::ReadLength(pair.b()), std::nullopt);
  }
}

}  // namespace
}  // namespace jitcache
