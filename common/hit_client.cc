#include "common/hit_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "common/fd_io.h"
#include "common/length_frame.h"

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

void SetReadTimeout(int fd, std::chrono::milliseconds timeout) {
  const timeval t{static_cast<time_t>(timeout.count() / 1000),
                  static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t));
}

enum class Exchanged {
  kHit,       // the answer is in the buffer
  kNotAHit,   // "ask gRPC"; the connection is still good
  kNoAnswer,  // the daemon had closed the connection before answering
  kBroken,    // anything else: timed out, cut short
};

Exchanged Exchange(int fd, std::string_view payload, std::string& buffer,
                   size_t* size) {
  if (!frame::Write(fd, payload)) return Exchanged::kNoAnswer;
  char head[1 + frame::kHeaderBytes];
  // The status byte alone first: "ask gRPC" is one byte.
  const ssize_t n = read(fd, head, 1);
  if (n == 0) return Exchanged::kNoAnswer;
  if (n != 1) return Exchanged::kBroken;
  if (head[0] != 0) return Exchanged::kNotAHit;
  if (!ReadFully(fd, head + 1, frame::kHeaderBytes)) return Exchanged::kBroken;
  *size = frame::LengthOf(head + 1);
  if (buffer.size() < *size) buffer.resize(*size);
  return ReadFully(fd, buffer.data(), *size) ? Exchanged::kHit
                                             : Exchanged::kBroken;
}

}  // namespace

HitChannel::HitChannel(std::string socket)
    : path_(std::move(socket) + ".hit"), pid_(getpid()) {}

HitChannel::~HitChannel() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : idle_) close(fd);
}

int HitChannel::Take() {
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

void HitChannel::Keep(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (getpid() != pid_) {
    close(fd);
    return;
  }
  idle_.push_back(fd);
}

std::optional<std::string_view> HitChannel::Ask(
    std::string_view payload, std::string& buffer,
    std::chrono::milliseconds timeout) {
  int fd = Take();
  const bool kept = fd >= 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fd < 0) fd = ConnectTo(path_);
    if (fd < 0) return std::nullopt;
    SetReadTimeout(fd, timeout);
    size_t size = 0;
    switch (Exchange(fd, payload, buffer, &size)) {
      case Exchanged::kHit:
        Keep(fd);
        return std::string_view(buffer.data(), size);
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

std::optional<std::string> AskHitSocket(const std::string& socket,
                                        const std::string& request) {
  HitChannel channel(socket);
  std::string buffer;
  std::optional<std::string_view> answer = channel.Ask(request, buffer);
  if (!answer.has_value()) return std::nullopt;
  buffer.resize(answer->size());
  return buffer;
}

}  // namespace jitcache
