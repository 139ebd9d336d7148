#include "client/wire/framed_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "client/wire/proto_wire.h"
#include "common/fd_io.h"
#include "common/framed_protocol.h"
#include "common/length_frame.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache {
namespace {

int ConnectTo(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return -1;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  // A daemon too busy to take the connection within this is asked over
  // gRPC instead.
  const timeval timeout{0, 500 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) !=
      0) {
    close(fd);
    return -1;
  }
  return fd;
}

using Clock = std::chrono::steady_clock;

// One read of what has arrived: a descriptor sent with it goes to `*fd`
// (one at most: any other is closed, and makes `*fd` -2, a stream out of
// step).
ssize_t Receive(int socket, char* p, size_t n, int* fd) {
  iovec part{p, n};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  const ssize_t got =
      recvmsg(socket, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (got < 0) return got;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr;
       c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*fd == -1) {
        *fd = received;
      } else {
        close(received);
        if (*fd >= 0) close(*fd);
        *fd = -2;
      }
    }
  }
  if ((message.msg_flags & MSG_CTRUNC) != 0) {
    if (*fd >= 0) close(*fd);
    *fd = -2;
  }
  return got;
}

// Reads what has arrived into [p, p + n), at least one byte: without
// blocking while `spin_until` lies ahead (on a quiet machine, waking a
// sleeping thread can cost more than the daemon takes to answer), then
// waiting in poll until `deadline`. The bytes read; 0 at the end of the
// stream; -1 on an error or at the deadline.
ssize_t ReadSome(int fd, char* p, size_t n, Clock::time_point spin_until,
                 Clock::time_point deadline, int* passed) {
  for (;;) {
    const ssize_t got = Receive(fd, p, n, passed);
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    const Clock::time_point now = Clock::now();
    if (now < spin_until) {
      // Gives the core away when something else wants it (the daemon
      // itself, on a machine with fewer cores than waiting callers).
      sched_yield();
      continue;
    }
    if (now >= deadline) return -1;
    pollfd ready{fd, POLLIN, 0};
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    if (poll(&ready, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      return -1;
    }
  }
}

enum class Exchanged {
  kHit,       // the answer is in the buffer
  kShared,    // the answer is the content of the file passed
  kRefused,   // why it was refused (a FramedRefusal) is in the buffer
  kNotAHit,   // "ask gRPC"; the connection is still good
  kNoAnswer,  // the daemon had closed the connection before answering
  kBroken,    // anything else: timed out, cut short, more than one answer
};

// The status bytes of framed_socket.h's answers.
using framed_protocol::kAnswered;
using framed_protocol::kNotAnswered;
using framed_protocol::kSharedFile;
constexpr char kRefusedHere = framed_protocol::kRefused;

// Most answers arrive whole in the first read into this much.
constexpr size_t kFirstRead = size_t{64} << 10;

// `*passed`: a descriptor that came with the answer (-1: none); closed
// here unless the answer is kShared.
Exchanged Exchange(int fd, std::string_view payload, std::string& buffer,
                   Clock::duration timeout, Clock::duration spin,
                   std::string_view* answer, int* passed) {
  if (!frame::Write(fd, payload)) return Exchanged::kNoAnswer;
  const Clock::time_point now = Clock::now();
  const Clock::time_point spin_until = now + spin;
  const Clock::time_point deadline = now + timeout;
  if (buffer.size() < kFirstRead) buffer.resize(kFirstRead);
  ssize_t n =
      ReadSome(fd, buffer.data(), buffer.size(), spin_until, deadline, passed);
  if (n == 0) return Exchanged::kNoAnswer;
  if (n < 0) return Exchanged::kBroken;
  size_t have = static_cast<size_t>(n);
  // "Ask gRPC" is the status byte alone.
  if (buffer[0] == kNotAnswered) {
    return have == 1 ? Exchanged::kNotAHit : Exchanged::kBroken;
  }
  if (buffer[0] != kAnswered && buffer[0] != kRefusedHere &&
      buffer[0] != kSharedFile) {
    return Exchanged::kBroken;
  }
  constexpr size_t kHead = 1 + frame::kHeaderBytes;
  size_t total = kHead;
  for (bool sized = false;;) {
    if (!sized && have >= kHead) {
      sized = true;
      total = kHead + frame::LengthOf(buffer.data() + 1);
      if (buffer.size() < total) buffer.resize(total);
    }
    if (sized && have >= total) break;
    n = ReadSome(fd, buffer.data() + have, buffer.size() - have, spin_until,
                 deadline, passed);
    if (n <= 0) return Exchanged::kBroken;
    have += static_cast<size_t>(n);
  }
  // One answer per request: anything more is a stream out of step.
  if (have != total) return Exchanged::kBroken;
  *answer = std::string_view(buffer.data() + kHead, total - kHead);
  if (buffer[0] == kSharedFile) {
    // An empty frame, the file on its first byte.
    return total == kHead && *passed >= 0 ? Exchanged::kShared
                                          : Exchanged::kBroken;
  }
  return buffer[0] == kAnswered ? Exchanged::kHit : Exchanged::kRefused;
}

// A FramedRefusal's code and message; a malformed one is refused with
// code 2 (UNKNOWN), saying so.
FramedChannel::Refusal RefusalFrom(std::string_view bytes) {
  using F = wire::FramedRefusal;
  FramedChannel::Refusal refusal;
  const bool ok = proto_wire::ForEachField(
      bytes,
      [&](int field, int type, proto_wire::Reader& in) -> std::optional<bool> {
        if (type == proto_wire::kVarint && field == F::kCode) {
          return proto_wire::Int32Into(in, &refusal.code);
        }
        if (type == proto_wire::kBytes && field == F::kMessage) {
          return in.Bytes(&refusal.message);
        }
        return std::nullopt;
      });
  if (!ok || refusal.code == wire::Code::kOk) {
    refusal.code = wire::Code::kUnknown;
    refusal.message = "the daemon refused, saying nothing readable";
  }
  return refusal;
}

// Measured side by side on a quiet 16-core host (bench/RESULTS.md, hits at
// the floor): 50 µs of polling took a small kernel's hit from 29-34 to
// 21-26 µs p50 and the CUB kernel's from 71-77 to 56-61 µs; the answer
// mostly comes within it, so the CPU it costs the caller is short.
constexpr Clock::duration kDefaultSpin = std::chrono::microseconds(50);

// JITCACHE_HIT_SPIN_US: how long an ask on a kept connection waits for
// its answer without sleeping (0: it sleeps at once).
Clock::duration SpinFromEnvironment() {
  const char* set = std::getenv("JITCACHE_HIT_SPIN_US");
  if (set == nullptr || *set == '\0') return kDefaultSpin;
  return std::chrono::microseconds(std::strtoul(set, nullptr, 10));
}

}  // namespace

MappedAnswer::~MappedAnswer() {
  if (data_ != nullptr) munmap(data_, size_);
}

MappedAnswer::MappedAnswer(MappedAnswer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      populate_(other.populate_) {}

MappedAnswer& MappedAnswer::operator=(MappedAnswer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    populate_ = other.populate_;
  }
  return *this;
}

MappedAnswer MappedAnswer::Of(int fd, bool populate) {
  MappedAnswer mapped(populate);
  // Only a file nobody can write, shrink or grow is taken: its bytes can
  // then change under no one.
  constexpr int kNeeded = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
  const int seals = fcntl(fd, F_GET_SEALS);
  struct stat st;
  if (seals >= 0 && (seals & kNeeded) == kNeeded && fstat(fd, &st) == 0 &&
      st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    void* data = mmap(nullptr, size, PROT_READ,
                      MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
    if (data != MAP_FAILED) {
      mapped.data_ = data;
      mapped.size_ = size;
    }
  }
  close(fd);
  return mapped;
}

FramedChannel::FramedChannel(std::string socket)
    : path_(std::move(socket) + ".hit"),
      spin_(SpinFromEnvironment()),
      pid_(getpid()) {}

FramedChannel::~FramedChannel() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : idle_) close(fd);
}

int FramedChannel::Take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const pid_t self = getpid(); self != pid_) {
      // A forked child: these are its parent's connections (closing the
      // child's copies leaves the parent's open).
      for (int fd : idle_) close(fd);
      idle_.clear();
      pid_ = self;
    }
    if (!idle_.empty()) {
      const int fd = idle_.back();
      idle_.pop_back();
      return fd;
    }
  }
  return -1;
}

void FramedChannel::Keep(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (getpid() != pid_) {
    close(fd);
    return;
  }
  idle_.push_back(fd);
}

std::optional<std::string_view> FramedChannel::Ask(
    std::string_view payload, std::string& buffer,
    std::chrono::milliseconds timeout, Refusal* refused, MappedAnswer* mapped) {
  if (refused != nullptr) *refused = Refusal{};
  int fd = Take();
  const bool kept = fd >= 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fd < 0) fd = ConnectTo(path_);
    if (fd < 0) return std::nullopt;
    std::string_view answer;
    // Only a warm connection spins: a new one's first answer waits on the
    // daemon's accept, and a process asking once gains nothing from it.
    const Clock::duration spin =
        kept && attempt == 0 ? spin_ : Clock::duration::zero();
    int passed = -1;
    const Exchanged exchanged =
        Exchange(fd, payload, buffer, timeout, spin, &answer, &passed);
    if (exchanged != Exchanged::kShared && passed >= 0) close(passed);
    switch (exchanged) {
      case Exchanged::kHit:
        Keep(fd);
        return answer;
      case Exchanged::kShared: {
        Keep(fd);
        MappedAnswer file =
            MappedAnswer::Of(passed, mapped == nullptr || mapped->populate());
        if (mapped == nullptr || file.empty()) return std::nullopt;
        *mapped = std::move(file);
        return mapped->bytes();
      }
      case Exchanged::kRefused:
        Keep(fd);
        if (refused != nullptr) *refused = RefusalFrom(answer);
        return std::nullopt;
      case Exchanged::kNotAHit:
        Keep(fd);
        return std::nullopt;
      case Exchanged::kNoAnswer:
        close(fd);
        fd = -1;
        // A kept connection the daemon closed while it was idle: once more
        // on a new one.
        if (kept && attempt == 0) continue;
        return std::nullopt;
      case Exchanged::kBroken:
        close(fd);
        return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace jitcache
