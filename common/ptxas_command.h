#ifndef JITCACHE_COMMON_PTXAS_COMMAND_H_
#define JITCACHE_COMMON_PTXAS_COMMAND_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

// A ptxas command line that jitcache can key: one PTX file in, one cubin
// out, and options that read and write nothing else. The daemon runs the
// very arguments (ptxas's messages and outputs are its own), so this only
// has to find the files; any spelling it does not know (`--version`,
// `--options-file`, `--input-as-string`, two inputs, a hidden option) makes
// the command one for the real ptxas, run where it was called.
struct PtxasCommand {
  std::vector<std::string> arguments;  // argv[1..], as spelled
  size_t input = 0;                    // the argument that is the PTX file
  // The argument holding the output path, and where in it the path starts
  // ("-o" "x.o": the next argument at 0; "--output-file=x.o": at 14).
  // None: ptxas writes elf.o.
  std::optional<size_t> output;
  size_t output_offset = 0;

  const std::string& input_path() const { return arguments[input]; }
  std::string output_path() const;
  // The arguments with both paths replaced by markers no path can spell:
  // what a key holds when the names do not matter.
  std::vector<std::string> WithoutNames() const;
};

// The command, or nullopt with `why` it is not one to key (the caller runs
// the real ptxas). Pure, and plain C++: jitcache-ptxas loads nothing else.
std::optional<PtxasCommand> ParsePtxasCommand(
    std::vector<std::string> arguments, std::string* why);

// ptxas's default output file.
inline constexpr std::string_view kPtxasDefaultOutput = "elf.o";

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PTXAS_COMMAND_H_
