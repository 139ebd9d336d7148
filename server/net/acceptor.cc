#include "server/net/acceptor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace jitcache {

absl::StatusOr<std::unique_ptr<Acceptor>> Acceptor::Create(int listen_fd) {
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) {
    close(listen_fd);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<Acceptor>(new Acceptor(listen_fd, wake[0], wake[1]));
}

Acceptor::~Acceptor() {
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

int Acceptor::Accept(int flags) {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      JITCACHE_LOG(Error) << "accept: poll: " << std::strerror(errno);
      return -1;
    }
    if (fds[1].revents != 0) return -1;
    const int fd = accept4(listen_fd_, nullptr, nullptr, flags);
    if (fd >= 0) return fd;
    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
    // Out of descriptors, say: back off rather than spin.
    JITCACHE_LOG(Warning) << "accept: " << std::strerror(errno);
    poll(nullptr, 0, 100);
  }
}

void Acceptor::Stop() {
  const char byte = 0;
  // The pipe stays readable: every Accept, now and later, returns -1.
  (void)!write(wake_write_, &byte, 1);
}

}  // namespace jitcache
