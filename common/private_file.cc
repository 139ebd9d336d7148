#include "common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fd_io.h"

namespace jitcache {

bool KeepPrivateFile(const std::string& dir, const std::string& name,
                     std::string_view bytes) {
  // The parents too: ~/.cache may not exist yet on a new account.
  for (size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    ::mkdir(dir.substr(0, slash).c_str(), 0700);
  }
  ::mkdir(dir.c_str(), 0700);
  const std::string path = dir + "/" + name;
  const std::string temp = path + "." + std::to_string(getpid()) + ".tmp";
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool written = WriteFully(fd, bytes.data(), bytes.size());
  if (::close(fd) != 0 || !written ||
      ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace jitcache
