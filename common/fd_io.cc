#include "common/fd_io.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace jitcache {

bool ReadFully(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteFully(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteFully(int fd, iovec* parts, int count) {
  while (true) {
    while (count > 0 && parts->iov_len == 0) {
      ++parts;
      --count;
    }
    if (count == 0) return true;
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = writev(fd, parts, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (size_t done = static_cast<size_t>(n); done > 0;) {
      const size_t step = std::min(done, parts->iov_len);
      parts->iov_base = static_cast<char*>(parts->iov_base) + step;
      parts->iov_len -= step;
      done -= step;
      if (parts->iov_len == 0) {
        ++parts;
        --count;
      }
    }
  }
}

std::optional<std::string> ReadWholeFile(const char* path, bool regular_only) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  if (regular_only && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    return std::nullopt;
  }
  std::string data;
  char buffer[1 << 16];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
    data.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (n < 0) return std::nullopt;
  return data;
}

bool WriteOutputFile(const char* path, const char* data, size_t size) {
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
    unlink(path);
  }
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  const bool written = WriteFully(fd, data, size);
  return close(fd) == 0 && written;
}

}  // namespace jitcache
