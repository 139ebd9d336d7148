// KeptConnection: one connection's requests and answers, over a real
// socket pair, without an event loop.
#include "server/net/kept_connection.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/length_frame.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

using Wait = KeptConnection::Wait;

std::string Frame(const std::string& payload) {
  char header[frame::kHeaderBytes];
  frame::PutHeader(header, static_cast<uint32_t>(payload.size()));
  return std::string(header, sizeof(header)) + payload;
}

std::string Hit(const std::string& answer) {
  return std::string(1, '\0') + Frame(answer);
}

class KeptConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    client_ = fds[1];
    connection_ = std::make_unique<KeptConnection>(fds[0], PeerCredentials{},
                                                   serving_, absl::Now());
  }
  void TearDown() override { close(client_); }

  void Send(const std::string& bytes) {
    ASSERT_EQ(write(client_, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  // Everything the connection has written so far.
  std::string Received() {
    std::string out;
    char chunk[65536];
    fcntl(client_, F_SETFL, O_NONBLOCK);
    ssize_t n;
    while ((n = read(client_, chunk, sizeof(chunk))) > 0) out.append(chunk, n);
    fcntl(client_, F_SETFL, 0);
    return out;
  }
  Wait Readable() { return connection_->OnReadable(absl::Now(), scratch_); }
  Wait Writable() { return connection_->OnWritable(absl::Now()); }

  int client_ = -1;
  std::unique_ptr<KeptConnection> connection_;
  std::string scratch_ = std::string(4096, '\0');
  std::vector<std::string> asked_;
  std::shared_ptr<const std::string> big_;  // answered to "big"
  std::vector<AnswerLater> promised_;  // to "later" requests
  KeptConnection::Serving serving_{
      [this](absl::string_view request,
             const PeerCredentials&) -> KeptConnection::Reply {
        asked_.emplace_back(request);
        if (request == "big") return {big_};
        if (request == "later") {
          return {nullptr, [this](AnswerLater later) {
                    promised_.push_back(std::move(later));
                  }};
        }
        if (request.substr(0, 3) != "hit") return {};
        return {std::make_shared<const std::string>("answer to " +
                                                    std::string(request))};
      },
      1000, absl::Seconds(2)};
};

TEST_F(KeptConnectionTest, RequestsOneAfterAnotherAreAnsweredInOrder) {
  Send(Frame("hit 1"));
  EXPECT_EQ(Readable(), Wait::kReadable);
  EXPECT_EQ(Received(), Hit("answer to hit 1"));
  // Two at once, then a miss: answered in order, each framed.
  Send(Frame("hit 2") + Frame("hit 3") + Frame("miss"));
  EXPECT_EQ(Readable(), Wait::kReadable);
  EXPECT_EQ(Received(), Hit("answer to hit 2") + Hit("answer to hit 3") +
                            std::string(1, '\1'));
  EXPECT_TRUE(connection_->Idle());
  EXPECT_EQ(asked_,
            (std::vector<std::string>{"hit 1", "hit 2", "hit 3", "miss"}));
}

TEST_F(KeptConnectionTest, ARequestInPiecesIsAnsweredOnceWhole) {
  const std::string request = Frame("hit split");
  Send(request.substr(0, 2));  // half a header
  EXPECT_EQ(Readable(), Wait::kReadable);
  EXPECT_TRUE(connection_->HasPartialRequest());
  const absl::Time deadline = connection_->deadline();
  Send(request.substr(2, 5));
  EXPECT_EQ(Readable(), Wait::kReadable);
  // Its time runs from its first byte, not from each piece.
  EXPECT_EQ(connection_->deadline(), deadline);
  EXPECT_TRUE(asked_.empty());
  Send(request.substr(7));
  EXPECT_EQ(Readable(), Wait::kReadable);
  EXPECT_FALSE(connection_->HasPartialRequest());
  EXPECT_EQ(Received(), Hit("answer to hit split"));
}

TEST_F(KeptConnectionTest, ATooLongRequestIsSentToGrpcAndTheConnectionEnds) {
  Send(Frame(std::string(1001, 'x')).substr(0, 100));
  EXPECT_EQ(Readable(), Wait::kClose);
  EXPECT_EQ(Received(), std::string(1, '\1'));
  EXPECT_TRUE(asked_.empty());
}

TEST_F(KeptConnectionTest, APeerThatLeavesMidRequestIsClosed) {
  Send(Frame("hit gone").substr(0, 6));
  EXPECT_EQ(Readable(), Wait::kReadable);
  shutdown(client_, SHUT_WR);
  EXPECT_EQ(Readable(), Wait::kClose);
}

TEST_F(KeptConnectionTest, NothingMoreIsReadWhileAnAnswerIsUnsent) {
  // Larger than the socket pair's buffers: it cannot go out in one write.
  big_ = std::make_shared<const std::string>(8 << 20, 'b');
  Send(Frame("big") + Frame("hit after"));
  EXPECT_EQ(Readable(), Wait::kWritable);
  EXPECT_FALSE(connection_->Idle());
  // The request behind it waits, unread by the answer callback.
  EXPECT_EQ(asked_, std::vector<std::string>{"big"});
  std::string got;
  while (true) {
    got += Received();
    const Wait next = Writable();
    if (next != Wait::kWritable) {
      EXPECT_EQ(next, Wait::kReadable);
      break;
    }
  }
  got += Received();
  EXPECT_EQ(got, Hit(*big_) + Hit("answer to hit after"));
  EXPECT_EQ(asked_, (std::vector<std::string>{"big", "hit after"}));
  EXPECT_TRUE(connection_->Idle());
}

}  // namespace
}  // namespace jitcache
