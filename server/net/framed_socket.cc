#include "server/net/framed_socket.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace jitcache {

// One event loop: its own epoll set and the connections in it.
struct FramedSocket::Loop {
  int epoll_fd = -1;
  int wake_fd = -1;  // an eventfd: new connections, or stop
  std::thread thread;
  std::atomic<int> load{0};  // connections it serves
  absl::Mutex mu;
  std::vector<std::unique_ptr<KeptConnection>> arriving ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
  // Answers promised for later by its connections' requests.
  std::shared_ptr<LaterAnswers> later;

  ~Loop() {
    // Nothing may wake the descriptor once it is closed.
    if (later != nullptr) later->Close();
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
  }
  void Wake() const {
    const uint64_t one = 1;
    while (write(wake_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
  }
};

FramedSocket::FramedSocket(std::string path, std::unique_ptr<Acceptor> acceptor,
                           Answer answer, const Options& options)
    : path_(std::move(path)),
      acceptor_(std::move(acceptor)),
      options_(options),
      serving_{std::move(answer), options.max_request_bytes,
               options.io_timeout} {}

absl::StatusOr<std::unique_ptr<FramedSocket>> FramedSocket::Start(
    const std::string& path, const SocketAccess& access, Answer answer,
    const Options& options) {
  // The caller owns the path (its lock was taken with the gRPC socket's):
  // whatever is there was left by a daemon that died, and is replaced.
  absl::StatusOr<int> fd = ListenUnix(path, access);
  if (!fd.ok()) return fd.status();
  return Serve(path, *fd, std::move(answer), options);
}

absl::StatusOr<std::unique_ptr<FramedSocket>> FramedSocket::Adopt(
    int listen_fd, Answer answer, const Options& options) {
  return Serve("", listen_fd, std::move(answer), options);
}

absl::StatusOr<std::unique_ptr<FramedSocket>> FramedSocket::Serve(
    std::string path, int listen_fd, Answer answer, const Options& options) {
  absl::StatusOr<std::unique_ptr<Acceptor>> acceptor =
      Acceptor::Create(listen_fd);
  if (!acceptor.ok()) return acceptor.status();
  auto socket = std::unique_ptr<FramedSocket>(new FramedSocket(
      std::move(path), *std::move(acceptor), std::move(answer), options));
  const int loops =
      options.loops > 0
          ? std::min(options.loops, kMaxLoops)
          : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1,
                       kMaxLoops);
  for (int i = 0; i < loops; ++i) {
    auto loop = std::make_unique<Loop>();
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    loop->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.fd = loop->wake_fd;
    if (loop->epoll_fd < 0 || loop->wake_fd < 0 ||
        epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->wake_fd, &wake) != 0) {
      socket->Stop();
      return absl::InternalError(
          absl::StrCat("framed socket event loop: ", std::strerror(errno)));
    }
    loop->later =
        std::make_shared<LaterAnswers>([raw = loop.get()] { raw->Wake(); });
    socket->loops_.push_back(std::move(loop));
  }
  for (const std::unique_ptr<Loop>& loop : socket->loops_) {
    loop->thread = std::thread(
        [raw = socket.get(), serving = loop.get()] { raw->RunLoop(*serving); });
  }
  socket->acceptor_thread_ =
      std::thread([raw = socket.get()] { raw->AcceptLoop(); });
  return socket;
}

void FramedSocket::AcceptLoop() {
  int fd;
  while ((fd = acceptor_->Accept(SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
    ++accepted_;
    std::optional<PeerCredentials> peer = PeerOf(fd);
    if (!peer.has_value()) {
      close(fd);
      continue;
    }
    {
      absl::MutexLock lock(&users_mu_);
      UserCounts& user = users_[peer->uid];
      if (user.connections >= kMaxPerUser || connections_ >= kMaxConnections) {
        // Closed at once: that client asks gRPC, which has limits of its
        // own.
        if (user.connections == 0) users_.erase(peer->uid);
        close(fd);
        continue;
      }
      ++user.connections;
      ++connections_;
    }
    Loop* least = loops_.front().get();
    for (const std::unique_ptr<Loop>& loop : loops_) {
      if (loop->load.load() < least->load.load()) least = loop.get();
    }
    ++least->load;
    {
      absl::MutexLock lock(&least->mu);
      least->arriving.push_back(std::make_unique<KeptConnection>(
          fd, *peer, serving_, absl::Now(), least->later));
    }
    least->Wake();
  }
}

bool FramedSocket::CountPartial(const KeptConnection& connection, int delta) {
  absl::MutexLock lock(&users_mu_);
  UserCounts& user = users_[connection.peer().uid];
  if (delta > 0 && user.partial >= kMaxPartialPerUser) return false;
  user.partial += delta;
  return true;
}

void FramedSocket::Forget(const KeptConnection& connection) {
  absl::MutexLock lock(&users_mu_);
  --connections_;
  auto it = users_.find(connection.peer().uid);
  if (it != users_.end() && --it->second.connections == 0) users_.erase(it);
}

// One event loop's connections and what it does with them: each step of
// RunLoop by name.
class FramedSocket::LoopRun {
 public:
  LoopRun(FramedSocket& socket, Loop& loop) : socket_(socket), loop_(loop) {}

  // Until Stop, and then until every connection that must be answered is.
  void Run() {
    absl::Time next_sweep = absl::Now();
    epoll_event events[64];
    while (true) {
      const int n = epoll_wait(loop_.epoll_fd, events, 64, 250);
      const absl::Time now = absl::Now();
      for (int i = 0; i < n; ++i) {
        if (events[i].data.fd == loop_.wake_fd) {
          OnWake(now);
        } else {
          OnEvent(events[i], now);
        }
      }
      if (now >= next_sweep || stopping_) {
        next_sweep = now + absl::Milliseconds(250);
        Sweep(now);
        if (stopping_ && held_.empty()) return;
      }
    }
  }

 private:
  struct Held {
    std::unique_ptr<KeptConnection> connection;
    uint32_t events = 0;
    bool partial = false;  // counted in its user's half-sent requests
  };
  using Iterator = std::unordered_map<int, Held>::iterator;

  Iterator Drop(Iterator it) {
    if (it->second.partial) socket_.CountPartial(*it->second.connection, -1);
    socket_.Forget(*it->second.connection);
    epoll_ctl(loop_.epoll_fd, EPOLL_CTL_DEL, it->first, nullptr);
    --loop_.load;
    return held_.erase(it);
  }

  // What Stop does not wait for: nothing under way, or a promise (a
  // stopping daemon keeps none: the peer sees its connection close and does
  // the work itself, as a gRPC caller whose compile is cancelled does).
  static bool EndsAtStop(const KeptConnection& c) {
    return c.Idle() || c.Waiting();
  }

  // Applies what the connection waits for next.
  void Settle(Iterator it, KeptConnection::Wait wait) {
    Held& h = it->second;
    const bool partial = h.connection->HasPartialRequest();
    if (wait != KeptConnection::Wait::kClose && partial != h.partial) {
      if (socket_.CountPartial(*h.connection, partial ? 1 : -1)) {
        h.partial = partial;
      } else {
        wait = KeptConnection::Wait::kClose;  // one user's too many
      }
    }
    if (wait == KeptConnection::Wait::kClose ||
        (stopping_ && EndsAtStop(*h.connection))) {
      Drop(it);
      return;
    }
    // While an answer is promised, only the peer's hanging up is news.
    const uint32_t events = wait == KeptConnection::Wait::kWritable ? EPOLLOUT
                            : wait == KeptConnection::Wait::kLater  ? EPOLLRDHUP
                                                                    : EPOLLIN;
    if (events != h.events) {
      epoll_event e{};
      e.events = events;
      e.data.fd = it->first;
      epoll_ctl(loop_.epoll_fd, EPOLL_CTL_MOD, it->first, &e);
      h.events = events;
    }
  }

  // Woken: new connections, answers given later, or Stop.
  void OnWake(absl::Time now) {
    uint64_t count;
    while (read(loop_.wake_fd, &count, sizeof(count)) > 0) {
    }
    std::vector<std::unique_ptr<KeptConnection>> arriving;
    {
      absl::MutexLock lock(&loop_.mu);
      arriving.swap(loop_.arriving);
      stopping_ = loop_.stopping;
    }
    for (std::unique_ptr<KeptConnection>& c : arriving) {
      const int cfd = c->fd();
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = cfd;
      auto [it, added] = held_.emplace(cfd, Held{std::move(c), EPOLLIN});
      if (epoll_ctl(loop_.epoll_fd, EPOLL_CTL_ADD, cfd, &e) != 0) Drop(it);
    }
    for (LaterAnswers::Given& given : loop_.later->Take()) {
      auto it = held_.find(given.fd);
      if (it == held_.end()) continue;  // that peer has gone
      Settle(it,
             it->second.connection->OnLaterAnswer(
                 given.ticket, std::move(given.answer), now, given.refused));
    }
  }

  // A connection is readable or writable (or hung up).
  void OnEvent(const epoll_event& event, absl::Time now) {
    auto it = held_.find(event.data.fd);
    if (it == held_.end()) return;
    KeptConnection& c = *it->second.connection;
    if (c.Waiting()) {
      // Hung up (or failed) while it waited: its answer has no reader.
      Drop(it);
      return;
    }
    Settle(it, (event.events & EPOLLOUT) != 0 ? c.OnWritable(now)
                                              : c.OnReadable(now, scratch_));
  }

  // Closes connections idle too long, past their deadline, or (stopping)
  // owed nothing.
  void Sweep(absl::Time now) {
    for (auto it = held_.begin(); it != held_.end();) {
      const KeptConnection& c = *it->second.connection;
      const bool idle = c.Idle();
      if ((stopping_ && EndsAtStop(c)) ||
          (idle && now - c.last_active() >= socket_.options_.idle_timeout) ||
          (!idle && now >= c.deadline())) {
        it = Drop(it);
      } else {
        ++it;
      }
    }
  }

  FramedSocket& socket_;
  Loop& loop_;
  std::unordered_map<int, Held> held_;
  std::string scratch_ = std::string(64 << 10, '\0');
  bool stopping_ = false;
};

void FramedSocket::RunLoop(Loop& loop) { LoopRun(*this, loop).Run(); }

void FramedSocket::Stop() {
  if (stopping_.exchange(true)) return;
  acceptor_->Stop();
  if (acceptor_thread_.joinable()) acceptor_thread_.join();
  // Requests under way are answered (each within its own deadline) before
  // the loops end: a hit under way is answered, not cut off. Connections
  // not accepted yet wait in the backlog for the next daemon under socket
  // activation, or fail over to gRPC.
  for (const std::unique_ptr<Loop>& loop : loops_) {
    {
      absl::MutexLock lock(&loop->mu);
      loop->stopping = true;
    }
    if (loop->wake_fd >= 0) loop->Wake();
  }
  for (const std::unique_ptr<Loop>& loop : loops_) {
    if (loop->thread.joinable()) loop->thread.join();
  }
  if (!path_.empty()) unlink(path_.c_str());
}

FramedSocket::~FramedSocket() { Stop(); }

}  // namespace jitcache
