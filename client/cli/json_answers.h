#ifndef JITCACHE_CLIENT_CLI_JSON_ANSWERS_H_
#define JITCACHE_CLIENT_CLI_JSON_ANSWERS_H_

#include <optional>
#include <string>
#include <vector>

#include "client/cli/command_line.h"

namespace jitcache::cli {

// `jitcache ping|config|ls|show ... --json`: the daemon's answer as the
// protobuf JSON mapping of its message (PingResponse, ConfigResponse,
// ListEntriesResponse, ShowEntryResponse; field names as in the .proto,
// every field printed, 64-bit numbers as strings), on one line. The exit
// status, or nullopt when the command has no JSON form.
std::optional<int> PrintJsonAnswer(const CommandLine& line);

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_JSON_ANSWERS_H_
