#ifndef JITCACHE_COMMON_FD_IO_H_
#define JITCACHE_COMMON_FD_IO_H_

#include <sys/uio.h>

#include <cstddef>
#include <optional>
#include <string>

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

// A whole file, read with POSIX I/O (iostreams cost a short-lived process
// milliseconds to set up); nullopt when it cannot be opened or read, or,
// with `regular_only`, is no regular file.
std::optional<std::string> ReadWholeFile(const char* path,
                                         bool regular_only = false);

// Writes an output file (`-o PATH`) whole. A regular file of one link is
// unlinked first rather than truncated: ext4 flushes a file truncated and
// rewritten when it is closed, which costs a hit milliseconds. Anything
// else is written in place, as compilers write it: a device (`-o
// /dev/null`, which root would otherwise replace with a file), a FIFO, a
// symbolic link's target, a file of several links. A new file is 0666
// less the umask. False when it cannot be written.
bool WriteOutputFile(const char* path, const char* data, size_t size);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_FD_IO_H_
