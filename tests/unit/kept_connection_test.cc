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
    connection_ = std::make_unique<KeptConnection>(
        fds[0], PeerCredentials{}, serving_, absl::Now(), later_);
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
  std::vector<AnswerLater> promised_;       // to "later" requests
  int wakes_ = 0;
  std::shared_ptr<LaterAnswers> later_ =
      std::make_shared<LaterAnswers>([this] { ++wakes_; });
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

TEST_F(KeptConnectionTest, AnAnswerPromisedForLaterIsSentWhenGivenAndNoSooner) {
  Send(Frame("later") + Frame("hit behind"));
  EXPECT_EQ(Readable(), Wait::kLater);
  ASSERT_EQ(promised_.size(), 1u);
  EXPECT_EQ(Received(), "");
  EXPECT_TRUE(connection_->Waiting());
  EXPECT_FALSE(connection_->Idle());
  // No deadline of its own: the promise's maker bounds its work.
  EXPECT_EQ(connection_->deadline(), absl::InfiniteFuture());
  // Nothing more is read or answered meanwhile.
  Send(Frame("hit later still"));
  EXPECT_EQ(Readable(), Wait::kLater);
  EXPECT_EQ(asked_, std::vector<std::string>{"later"});

  promised_[0](std::make_shared<const std::string>("the run's answer"));
  EXPECT_EQ(wakes_, 1);
  std::vector<LaterAnswers::Given> given = later_->Take();
  ASSERT_EQ(given.size(), 1u);
  EXPECT_EQ(given[0].fd, connection_->fd());
  // An answer to another promise (one this connection made before, say)
  // is not this one's.
  EXPECT_EQ(connection_->OnLaterAnswer(given[0].ticket + 1, given[0].answer,
                                       absl::Now()),
            Wait::kLater);
  EXPECT_EQ(Received(), "");
  EXPECT_EQ(
      connection_->OnLaterAnswer(given[0].ticket, given[0].answer, absl::Now()),
      Wait::kReadable);
  // The answer, then that of the request read behind it; the one left
  // unread meanwhile is read now.
  EXPECT_EQ(Received(), Hit("the run's answer") + Hit("answer to hit behind"));
  EXPECT_EQ(Readable(), Wait::kReadable);
  EXPECT_EQ(Received(), Hit("answer to hit later still"));
  EXPECT_TRUE(connection_->Idle());
}

TEST_F(KeptConnectionTest, APromiseKeptEmptyIsAskGrpc) {
  Send(Frame("later"));
  EXPECT_EQ(Readable(), Wait::kLater);
  ASSERT_EQ(promised_.size(), 1u);
  promised_[0](nullptr);
  std::vector<LaterAnswers::Given> given = later_->Take();
  ASSERT_EQ(given.size(), 1u);
  EXPECT_EQ(
      connection_->OnLaterAnswer(given[0].ticket, given[0].answer, absl::Now()),
      Wait::kReadable);
  EXPECT_EQ(Received(), std::string(1, '\1'));
}

TEST_F(KeptConnectionTest, AnswersGivenAfterTheLoopClosedAreDropped) {
  Send(Frame("later"));
  EXPECT_EQ(Readable(), Wait::kLater);
  later_->Close();
  ASSERT_EQ(promised_.size(), 1u);
  promised_[0](std::make_shared<const std::string>("too late"));
  EXPECT_EQ(wakes_, 0);
  EXPECT_TRUE(later_->Take().empty());
}

TEST_F(KeptConnectionTest, WithNowhereForLaterAnswersAPromiseIsAskGrpc) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  KeptConnection alone(fds[0], PeerCredentials{}, serving_, absl::Now());
  const std::string request = Frame("later");
  ASSERT_EQ(write(fds[1], request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  EXPECT_EQ(alone.OnReadable(absl::Now(), scratch_), Wait::kReadable);
  char answer[8];
  EXPECT_EQ(read(fds[1], answer, sizeof(answer)), 1);
  EXPECT_EQ(answer[0], '\1');
  EXPECT_TRUE(promised_.empty());
  close(fds[1]);
}

}  // namespace
}  // namespace jitcache
