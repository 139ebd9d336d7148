#include "common/length_frame.h"

#include "common/fd_io.h"

namespace jitcache::frame {

bool Write(int fd, std::string_view payload) {
  if (payload.size() > kMaxPayloadBytes) return false;
  char header[kHeaderBytes];
  PutHeader(header, static_cast<uint32_t>(payload.size()));
  iovec parts[2] = {{header, kHeaderBytes},
                    {const_cast<char*>(payload.data()), payload.size()}};
  return WriteFully(fd, parts, 2);
}

std::optional<uint32_t> ReadLength(int fd) {
  char header[kHeaderBytes];
  if (!ReadFully(fd, header, kHeaderBytes)) return std::nullopt;
  return LengthOf(header);
}

std::optional<std::string> ReadPayload(int fd, uint32_t length) {
  std::string payload(length, '\0');
  if (!ReadFully(fd, payload.data(), length)) return std::nullopt;
  return payload;
}

std::optional<std::string> Read(int fd, size_t max_bytes) {
  std::optional<uint32_t> length = ReadLength(fd);
  if (!length.has_value() || *length > max_bytes) return std::nullopt;
  return ReadPayload(fd, *length);
}

}  // namespace jitcache::frame
