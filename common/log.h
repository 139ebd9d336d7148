#ifndef JITCACHE_COMMON_LOG_H_
#define JITCACHE_COMMON_LOG_H_

#include <sstream>

namespace jitcache {

enum class LogLevel { kInfo = 0, kWarning = 1, kError = 2 };

// One log line to stderr, written whole when the message is destroyed, so
// that lines from concurrent threads do not interleave.
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace jitcache

#define JITCACHE_LOG(level)                                                  \
  ::jitcache::LogMessage(::jitcache::LogLevel::k##level, __FILE__, __LINE__) \
      .stream()

#endif  // JITCACHE_COMMON_LOG_H_
