#ifndef JITCACHE_CLIENT_CLI_STORE_COMMANDS_H_
#define JITCACHE_CLIENT_CLI_STORE_COMMANDS_H_

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "client/cli/command_line.h"
#include "jitcache/client.h"
#include "jitcache/store_admin.h"

namespace jitcache::cli {

// The store's commands: evict, clear, config, ls, show, export, import.
// Returns the exit status, or nullopt when `command` is not one of them.
std::optional<int> RunStoreCommand(const Client& client,
                                   const CommandLine& line);

// `ls`'s arguments, or the exit status of a usage error (reported).
std::variant<ListOptions, int> ListOptionsOf(const CommandLine& line);

// Writes the entries with these keys to a bundle (precompile --export).
int ExportKeys(const Client& client, const std::vector<std::string>& keys,
               const std::string& path);

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_STORE_COMMANDS_H_
