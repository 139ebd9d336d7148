#ifndef JITCACHE_CLIENT_API_ASKED_COMPILE_H_
#define JITCACHE_CLIENT_API_ASKED_COMPILE_H_

// What a blocking Client::Compile asked the daemon, for jitcache-full: it
// keeps it as a direct-mode memo (client/cli/direct_memo.h) so that the
// `jitcache` front end can ask the same request again without scanning.
#include <memory>
#include <string>

#include "client/include_scan/include_scan.h"

namespace jitcache::internal {

struct AskedCompile {
  std::string request;  // the serialized CompileRequest, files by digest
  std::string toolkit_fingerprint;  // the daemon's, that the scan used
  // Null when no request was asked, or its includes were not scanned.
  std::shared_ptr<const ScanDependencies> depends_on;
  std::shared_ptr<const ScanResult> included;  // the scan's answer
};

// While one is alive, a blocking Client::Compile on the same thread fills
// `into` (the last such compile's). Thread-safety: per thread.
class RecordAskedCompile {
 public:
  explicit RecordAskedCompile(AskedCompile* into);
  ~RecordAskedCompile();
  RecordAskedCompile(const RecordAskedCompile&) = delete;
  RecordAskedCompile& operator=(const RecordAskedCompile&) = delete;

  // The thread's recording, or null.
  static AskedCompile* Current();

 private:
  AskedCompile* const previous_;
};

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_API_ASKED_COMPILE_H_
