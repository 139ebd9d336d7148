#ifndef JITCACHE_CLIENT_API_ASKED_COMPILE_H_
#define JITCACHE_CLIENT_API_ASKED_COMPILE_H_

// What a blocking Client::Compile asked the daemon, for jitcache-full: it
// keeps it as a direct-mode memo (client/cli/direct_memo.h) so that the
// `jitcache` front end can ask the same request again without scanning.
#include <memory>
#include <string>

#include "client/include_scan/include_scan.h"
#include "jitcache/client.h"

namespace jitcache::internal {

struct AskedCompile {
  std::string request;  // the serialized CompileRequest, files by digest
  std::string toolkit_fingerprint;  // the daemon's, that the scan used
  // Null when no request was asked, or its includes were not scanned.
  std::shared_ptr<const ScanDependencies> depends_on;
  std::shared_ptr<const ScanResult> included;  // the scan's answer
};

// A blocking Client::Compile that also fills `asked` with what it asked
// the daemon (declared, as a friend, in jitcache/client.h).
absl::StatusOr<ObjectCode> CompileAndRecord(const Client& client,
                                            const Program& program,
                                            const ProgramOptions& options,
                                            CodeType target,
                                            AskedCompile* asked);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_API_ASKED_COMPILE_H_
