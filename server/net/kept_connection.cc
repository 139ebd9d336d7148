#include "server/net/kept_connection.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/framed_protocol.h"
#include "common/length_frame.h"

namespace jitcache {

namespace {
using framed_protocol::kAnswered;
using framed_protocol::kNotAnswered;
using framed_protocol::kRefused;
using framed_protocol::kSharedFile;
}  // namespace

void LaterAnswers::Give(Given given) {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  given_.push_back(std::move(given));
  // Under the lock: once Close returns, nothing wakes a loop that is gone.
  if (given_.size() == 1) wake_();
}

std::vector<LaterAnswers::Given> LaterAnswers::Take() {
  absl::MutexLock lock(&mu_);
  return std::exchange(given_, {});
}

void LaterAnswers::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  given_.clear();
}

KeptConnection::KeptConnection(int fd, const PeerCredentials& peer,
                               const Serving& serving, absl::Time now,
                               std::shared_ptr<LaterAnswers> later)
    : fd_(fd),
      peer_(peer),
      serving_(serving),
      later_(std::move(later)),
      last_active_(now) {}

KeptConnection::~KeptConnection() { close(fd_); }

void KeptConnection::StartAnswer(std::shared_ptr<const std::string> response,
                                 absl::Time now, bool refused) {
  if (response == nullptr || response->size() > frame::kMaxPayloadBytes) {
    head_[0] = kNotAnswered;
    head_bytes_ = 1;
    out_ = nullptr;
  } else {
    head_[0] = refused ? kRefused : kAnswered;
    frame::PutHeader(head_ + 1, static_cast<uint32_t>(response->size()));
    head_bytes_ = sizeof(head_);
    out_ = std::move(response);
  }
  sent_ = 0;
  deadline_ = now + serving_.io_timeout;
}

void KeptConnection::StartFileAnswer(int file_fd,
                                     std::shared_ptr<const void> file,
                                     std::shared_ptr<const std::string> bytes,
                                     absl::Time now) {
  head_[0] = kSharedFile;
  frame::PutHeader(head_ + 1, 0);
  head_bytes_ = sizeof(head_);
  out_ = nullptr;
  out_fd_ = file_fd;
  out_file_ = std::move(file);
  out_bytes_ = std::move(bytes);
  sent_ = 0;
  deadline_ = now + serving_.io_timeout;
}

bool KeptConnection::Unread() const {
  int queued = 0;
  return ioctl(fd_, SIOCOUTQ, &queued) != 0 || queued > 0;
}

bool KeptConnection::Flush() {
  while (Sending()) {
    const size_t body = out_ == nullptr ? 0 : out_->size();
    iovec parts[2];
    int count = 0;
    if (sent_ < head_bytes_) {
      parts[count++] = {head_ + sent_, head_bytes_ - sent_};
    }
    if (body > 0) {
      const size_t from = sent_ > head_bytes_ ? sent_ - head_bytes_ : 0;
      parts[count++] = {const_cast<char*>(out_->data()) + from, body - from};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = count;
    // The descriptor rides on the head's first byte: the caller's read of
    // that byte receives it.
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (out_fd_ >= 0 && sent_ == 0) {
      message.msg_control = control;
      message.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&message);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &out_fd_, sizeof(int));
    }
    const ssize_t n = sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == ETOOMANYREFS && out_fd_ >= 0 && out_bytes_) {
      // Too many descriptors in flight for this user: the bytes instead.
      out_fd_ = -1;
      out_file_ = nullptr;
      StartAnswer(std::move(out_bytes_), absl::Now());
      continue;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    sent_ += static_cast<size_t>(n);
    if (n > 0 && out_fd_ >= 0) {
      // Sent: the kernel holds the file for the caller now.
      out_fd_ = -1;
      out_file_ = nullptr;
      out_bytes_ = nullptr;
    }
    if (sent_ == head_bytes_ + body) {
      head_bytes_ = 0;
      out_ = nullptr;
    }
  }
  return true;
}

KeptConnection::Wait KeptConnection::Next() const {
  if (Sending()) return Wait::kWritable;
  if (Waiting()) return Wait::kLater;
  return close_after_ ? Wait::kClose : Wait::kReadable;
}

size_t KeptConnection::AnswerWhole(absl::string_view bytes, absl::Time now,
                                   bool* close) {
  size_t used = 0;
  while (!Sending() && !Waiting() && !close_after_) {
    const absl::string_view rest = bytes.substr(used);
    if (rest.size() < frame::kHeaderBytes) break;
    const uint32_t length = frame::LengthOf(rest.data());
    if (length > serving_.max_request_bytes) {
      // The gRPC path names the limit. What follows is not worth reading.
      StartAnswer(nullptr, now);
      close_after_ = true;
      used = bytes.size();
    } else {
      if (rest.size() - frame::kHeaderBytes < length) break;
      Reply reply =
          serving_.answer(rest.substr(frame::kHeaderBytes, length), peer_);
      used += frame::kHeaderBytes + length;
      if (reply.later && later_ != nullptr) {
        awaited_ = later_->NextTicket();
        deadline_ = absl::InfiniteFuture();
        reply.later(AnswerLater(later_, fd_, *awaited_));
        break;
      }
      if (reply.file_fd >= 0 && !Unread()) {
        StartFileAnswer(reply.file_fd, std::move(reply.file),
                        std::move(reply.now), now);
      } else {
        StartAnswer(std::move(reply.now), now, reply.refused);
      }
    }
    if (!Flush()) {
      *close = true;
      break;
    }
  }
  return used;
}

KeptConnection::Wait KeptConnection::OnReadable(absl::Time now,
                                                std::string& scratch) {
  if (Sending() || Waiting() || close_after_) return Next();
  while (true) {
    const ssize_t n = read(fd_, scratch.data(), scratch.size());
    if (n == 0) return Wait::kClose;  // a request cut short has no answer
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return Wait::kClose;
    }
    last_active_ = now;
    const bool had_partial = !in_.empty();
    absl::string_view arrived(scratch.data(), static_cast<size_t>(n));
    bool close = false;
    size_t used;
    if (!had_partial) {
      // The usual case: whole requests in one read, answered from the
      // scratch buffer without a copy.
      used = AnswerWhole(arrived, now, &close);
      arrived.remove_prefix(used);
      in_.assign(arrived.data(), arrived.size());
    } else {
      in_.append(arrived.data(), arrived.size());
      used = AnswerWhole(in_, now, &close);
      in_.erase(0, used);
    }
    if (close) return Wait::kClose;
    // A request's time runs from its first byte.
    if (!in_.empty() && !Sending() && !Waiting() &&
        (!had_partial || used > 0)) {
      deadline_ = now + serving_.io_timeout;
    }
    if (Sending() || Waiting() || close_after_) return Next();
    if (static_cast<size_t>(n) < scratch.size()) break;  // drained
  }
  return Wait::kReadable;
}

KeptConnection::Wait KeptConnection::OnWritable(absl::Time now) {
  if (!Flush()) return Wait::kClose;
  if (Sending() || close_after_) return Next();
  return AnswerWaiting(now);
}

KeptConnection::Wait KeptConnection::OnLaterAnswer(
    uint64_t ticket, std::shared_ptr<const std::string> answer, absl::Time now,
    bool refused) {
  if (awaited_ != ticket) return Next();
  awaited_.reset();
  StartAnswer(std::move(answer), now, refused);
  if (!Flush()) return Wait::kClose;
  if (Sending() || close_after_) return Next();
  return AnswerWaiting(now);
}

KeptConnection::Wait KeptConnection::AnswerWaiting(absl::Time now) {
  last_active_ = now;
  bool close = false;
  in_.erase(0, AnswerWhole(in_, now, &close));
  if (close) return Wait::kClose;
  if (!in_.empty() && !Sending() && !Waiting()) {
    deadline_ = now + serving_.io_timeout;
  }
  return Next();
}

}  // namespace jitcache
