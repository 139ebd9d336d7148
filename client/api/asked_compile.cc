#include "client/api/asked_compile.h"

namespace jitcache::internal {

absl::StatusOr<ObjectCode> CompileAndRecord(const Client& client,
                                            const Program& program,
                                            const ProgramOptions& options,
                                            CodeType target,
                                            AskedCompile* asked) {
  return client.CompileRecorded(program, options, target, asked);
}

}  // namespace jitcache::internal
