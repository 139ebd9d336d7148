#ifndef JITCACHE_COMMON_FD_IO_H_
#define JITCACHE_COMMON_FD_IO_H_

#include <sys/uio.h>

#include <cstddef>

namespace jitcache {

// Reads exactly `size` bytes, retrying short reads and EINTR. False on EOF,
// error or timeout. Plain POSIX: the `jitcache` front end uses it too.
bool ReadFully(int fd, char* data, size_t size);

// Writes exactly `size` bytes with send(MSG_NOSIGNAL) on a socket, or
// write() otherwise; retries short writes and EINTR. False on error.
bool WriteFully(int fd, const char* data, size_t size);
// The same for the `count` pieces of `parts` in one call where the kernel
// takes them all, so the reader wakes once (`parts` is used up).
bool WriteFully(int fd, iovec* parts, int count);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_FD_IO_H_
