#ifndef JITCACHE_COMMON_LOG_H_
#define JITCACHE_COMMON_LOG_H_

#include <optional>
#include <sstream>
#include <string_view>

namespace jitcache {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Lines below this level are not written (default: info).
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
// "debug", "info", "warning", "error"; nullopt for anything else.
std::optional<LogLevel> ParseLogLevel(std::string_view name);

// One log line to stderr, written whole when the message is destroyed, so
// that lines from concurrent threads do not interleave. When stderr is the
// journal (systemd's JOURNAL_STREAM names it), each line starts with its
// syslog priority ("<6>"), so that journalctl -p filters and colours it, and
// leaves the time to the journal.
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

// A disabled level costs one comparison: the message is not formatted.
#define JITCACHE_LOG(level)                                                  \
  for (bool jitcache_log_once =                                              \
           ::jitcache::LogEnabled(::jitcache::LogLevel::k##level);           \
       jitcache_log_once; jitcache_log_once = false)                         \
  ::jitcache::LogMessage(::jitcache::LogLevel::k##level, __FILE__, __LINE__) \
      .stream()

#endif  // JITCACHE_COMMON_LOG_H_
