// FramedChannel (libjitcache's side) against FramedSocket (the daemon's side),
// in one process over a real Unix socket: kept connections, their limits
// and what happens when either side lets go.
#include "client/wire/framed_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/length_frame.h"
#include "gtest/gtest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/net/framed_socket.h"
#include "tests/testing/temp_dir.h"

namespace jitcache {
namespace {

// The promises made to "later N" requests, in order.
absl::Mutex promises_mu;
std::vector<AnswerLater>& Promises() {
  static auto* promises = new std::vector<AnswerLater>;
  return *promises;
}
std::string Framed(const std::string& payload) {
  char header[frame::kHeaderBytes];
  frame::PutHeader(header, static_cast<uint32_t>(payload.size()));
  return std::string(header, sizeof(header)) + payload;
}

size_t PromiseCount() {
  absl::MutexLock lock(&promises_mu);
  return Promises().size();
}

// A refusal as the daemon writes it: protobuf's own encoding of
// FramedRefusal (the channel decodes it by hand).
std::shared_ptr<const std::string> RefusalBytes(int code,
                                                const std::string& message) {
  v1::FramedRefusal refusal;
  refusal.set_code(code);
  refusal.set_message(message);
  return std::make_shared<const std::string>(refusal.SerializeAsString());
}

// Answers "hit N" with "answer N", promises an answer to "later N",
// refuses "refuse N" (FAILED_PRECONDITION, "refused N") and "garbled" (with
// bytes that are no FramedRefusal); anything else is not a hit.
KeptConnection::Reply Answer(absl::string_view request,
                             const PeerCredentials&) {
  if (request.substr(0, 7) == "refuse ") {
    return {RefusalBytes(9, absl::StrCat("refused ", request.substr(7))),
            nullptr, /*refused=*/true};
  }
  if (request == "garbled") {
    return {std::make_shared<const std::string>("\xff\xff\xff"), nullptr,
            /*refused=*/true};
  }
  if (request.substr(0, 6) == "later ") {
    return {nullptr, [](AnswerLater later) {
              absl::MutexLock lock(&promises_mu);
              Promises().push_back(std::move(later));
            }};
  }
  if (request.substr(0, 4) != "hit ") return {};
  return {std::make_shared<const std::string>(
      absl::StrCat("answer ", request.substr(4)))};
}

class FramedChannelTest : public ::testing::Test {
 protected:
  void TearDown() override {
    absl::MutexLock lock(&promises_mu);
    Promises().clear();
  }
  void StartSocket(FramedSocket::Options options = {}) {
    absl::StatusOr<std::unique_ptr<FramedSocket>> started =
        FramedSocket::Start(socket_ + ".hit", {}, Answer, options);
    ASSERT_TRUE(started.ok()) << started.status();
    socket = *std::move(started);
  }
  int RawConnection() {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = socket_ + ".hit";
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(
        connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }
  std::optional<std::string> Ask(FramedChannel& channel,
                                 const std::string& what) {
    std::string buffer;
    std::optional<std::string_view> got = channel.Ask(what, buffer);
    if (!got.has_value()) return std::nullopt;
    return std::string(*got);
  }

  testing::TempDir dir_;
  const std::string socket_ = dir_.Sub("s.sock");
  std::unique_ptr<FramedSocket> socket;
};

TEST_F(FramedChannelTest, ManyAsksShareOneKeptConnection) {
  StartSocket();
  FramedChannel channel(socket_);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(Ask(channel, absl::StrCat("hit ", i)),
              absl::StrCat("answer ", i));
    // Not a hit: the connection stays good for the next ask.
    EXPECT_EQ(Ask(channel, "miss"), std::nullopt);
  }
  EXPECT_EQ(socket->accepted(), 1u);
}

TEST_F(FramedChannelTest, ARefusalComesWithItsCodeAndMessage) {
  StartSocket();
  FramedChannel channel(socket_);
  std::string buffer;
  FramedChannel::Refusal refused;
  EXPECT_EQ(channel.Ask("refuse 7", buffer, std::chrono::milliseconds(2000),
                        &refused),
            std::nullopt);
  EXPECT_EQ(refused.code, 9);
  EXPECT_EQ(refused.message, "refused 7");
  // The connection stays good, and an answer clears what was refused.
  const std::optional<std::string_view> hit =
      channel.Ask("hit 3", buffer, std::chrono::milliseconds(2000), &refused);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, "answer 3");
  EXPECT_EQ(refused.code, 0);
  EXPECT_EQ(Ask(channel, "miss"), std::nullopt);
  EXPECT_EQ(socket->accepted(), 1u);
}

TEST_F(FramedChannelTest, AnUnreadableRefusalIsStillARefusal) {
  StartSocket();
  FramedChannel channel(socket_);
  std::string buffer;
  FramedChannel::Refusal refused;
  EXPECT_EQ(
      channel.Ask("garbled", buffer, std::chrono::milliseconds(2000), &refused),
      std::nullopt);
  EXPECT_EQ(refused.code, 2);  // UNKNOWN
  EXPECT_NE(refused.message, "");
}

TEST_F(FramedChannelTest, ThreadsNeverShareAConnectionMidAsk) {
  StartSocket();
  FramedChannel channel(socket_);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const std::string n = absl::StrCat(t, ".", i);
        if (Ask(channel, "hit " + n) != "answer " + n) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(socket->accepted(), 8u);
}

TEST_F(FramedChannelTest, AConnectionTheDaemonClosedWhileIdleIsReplacedUnseen) {
  FramedSocket::Options options;
  options.idle_timeout = absl::Milliseconds(50);
  StartSocket(options);
  FramedChannel channel(socket_);
  EXPECT_EQ(Ask(channel, "hit 1"), "answer 1");
  absl::SleepFor(absl::Milliseconds(800));  // idle: the daemon closes it
  EXPECT_EQ(Ask(channel, "hit 2"), "answer 2");
  EXPECT_EQ(socket->accepted(), 2u);
}

TEST_F(FramedChannelTest, AForkedChildAsksOnItsOwnConnection) {
  StartSocket();
  FramedChannel channel(socket_);
  EXPECT_EQ(Ask(channel, "hit parent"), "answer parent");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool right = true;
    for (int i = 0; i < 200; ++i) {
      const std::string n = absl::StrCat("child ", i);
      right = right && Ask(channel, "hit " + n) == "answer " + n;
    }
    _exit(right ? 0 : 1);
  }
  bool right = true;
  for (int i = 0; i < 200; ++i) {
    const std::string n = absl::StrCat("parent ", i);
    right = right && Ask(channel, "hit " + n) == "answer " + n;
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(right);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(socket->accepted(), 2u);
}

TEST_F(FramedChannelTest, OneUsersConnectionsPastItsShareAreRefused) {
  StartSocket();
  std::vector<int> held;
  for (int i = 0; i < FramedSocket::kMaxPerUser; ++i)
    held.push_back(RawConnection());
  // Let the daemon take them all before the next one comes.
  while (socket->accepted() <
         static_cast<uint64_t>(FramedSocket::kMaxPerUser)) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  {
    FramedChannel channel(socket_);
    EXPECT_EQ(Ask(channel, "hit 1"), std::nullopt);  // refused: ask gRPC
  }
  for (int fd : held) close(fd);
  absl::SleepFor(absl::Milliseconds(300));
  FramedChannel channel(socket_);
  EXPECT_EQ(Ask(channel, "hit 2"), "answer 2");
}

TEST_F(FramedChannelTest, OneUsersHalfSentRequestsPastAFewAreClosed) {
  StartSocket();
  std::vector<int> held;
  for (int i = 0; i < FramedSocket::kMaxPartialPerUser + 4; ++i) {
    const int fd = RawConnection();
    ASSERT_EQ(send(fd, "\x40\x00", 2, MSG_NOSIGNAL), 2);  // half a header
    held.push_back(fd);
  }
  // Well within the held ones' time, all at once.
  absl::SleepFor(absl::Milliseconds(500));
  int closed = 0;
  for (int fd : held) {
    pollfd p{fd, POLLIN, 0};
    char c;
    if (poll(&p, 1, 0) == 1 && read(fd, &c, 1) <= 0) ++closed;
  }
  // The few are held until their time is up (2 s); the rest closed at once.
  EXPECT_EQ(closed, 4);
  FramedChannel channel(socket_);
  EXPECT_EQ(Ask(channel, "hit 3"), "answer 3");  // others' hits go on
  for (int fd : held) close(fd);
}

TEST_F(FramedChannelTest, NoSocketIsNotAHit) {
  FramedChannel channel(socket_);
  EXPECT_EQ(Ask(channel, "hit 1"), std::nullopt);
  StartSocket();  // appears later: used from then on
  EXPECT_EQ(Ask(channel, "hit 1"), "answer 1");
}

TEST_F(FramedChannelTest, APromisedAnswerComesWhenGivenWhileOthersAreServed) {
  // One loop: the waiting connection and the hits share it.
  FramedSocket::Options options;
  options.loops = 1;
  StartSocket(options);
  std::future<std::optional<std::string>> waiting =
      std::async(std::launch::async, [this] {
        FramedChannel channel(socket_);
        return Ask(channel, "later 1");
      });
  while (PromiseCount() == 0) absl::SleepFor(absl::Milliseconds(1));
  FramedChannel other(socket_);
  EXPECT_EQ(Ask(other, "hit 2"), "answer 2");
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(50)),
            std::future_status::timeout);
  // Given from a thread of its own, as a compile worker's completion is.
  std::thread([] {
    absl::MutexLock lock(&promises_mu);
    Promises()[0](std::make_shared<const std::string>("the run"));
  }).join();
  EXPECT_EQ(waiting.get(), "the run");
}

TEST_F(FramedChannelTest, APromiseCanBeKeptWithARefusal) {
  StartSocket();
  std::future<FramedChannel::Refusal> waiting =
      std::async(std::launch::async, [this] {
        FramedChannel channel(socket_);
        std::string buffer;
        FramedChannel::Refusal refused;
        EXPECT_EQ(channel.Ask("later 1", buffer,
                              std::chrono::milliseconds(10000), &refused),
                  std::nullopt);
        return refused;
      });
  while (PromiseCount() == 0) absl::SleepFor(absl::Milliseconds(1));
  {
    absl::MutexLock lock(&promises_mu);
    Promises()[0](RefusalBytes(4, "the run took too long"), /*refused=*/true);
  }
  const FramedChannel::Refusal refused = waiting.get();
  EXPECT_EQ(refused.code, 4);
  EXPECT_EQ(refused.message, "the run took too long");
}

TEST_F(FramedChannelTest,
       APeerThatHangsUpWhileItWaitsLeavesNoConnectionBehind) {
  StartSocket();
  // As many waiting connections as one user may hold, all hung up: were
  // they kept, the user's next connection would be refused.
  const std::string request = Framed("later x");
  std::vector<int> held;
  for (int i = 0; i < FramedSocket::kMaxPerUser; ++i) {
    const int fd = RawConnection();
    ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    held.push_back(fd);
  }
  while (PromiseCount() < held.size()) absl::SleepFor(absl::Milliseconds(1));
  for (int fd : held) close(fd);
  bool answered = false;
  for (int i = 0; i < 500 && !answered; ++i) {
    FramedChannel channel(socket_);
    answered = Ask(channel, "hit 1") == "answer 1";
    if (!answered) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(answered);
  // Promises to peers that have gone are dropped unseen.
  absl::MutexLock lock(&promises_mu);
  for (const AnswerLater& later : Promises()) {
    later(std::make_shared<const std::string>("nobody reads this"));
  }
}

TEST_F(FramedChannelTest, StopClosesTheConnectionsThatWaitAndReturns) {
  StartSocket();
  const int fd = RawConnection();
  const std::string request = Framed("later y");
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  while (PromiseCount() == 0) absl::SleepFor(absl::Milliseconds(1));
  // The promise is never kept: Stop must not wait for it.
  std::future<void> stopped =
      std::async(std::launch::async, [this] { socket->Stop(); });
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)),
            std::future_status::ready);
  char c;
  EXPECT_EQ(read(fd, &c, 1), 0);  // closed, unanswered: the peer works alone
  close(fd);
  // Kept after the loop ended: dropped.
  absl::MutexLock lock(&promises_mu);
  Promises()[0](std::make_shared<const std::string>("too late"));
}

}  // namespace
}  // namespace jitcache
