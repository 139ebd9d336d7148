#include "client/cli/compile_flags.h"

#include <cstdio>

namespace jitcache::cli {

bool TakeValue(const std::vector<std::string>& args, size_t& i,
               const std::string& flag, std::string* value) {
  if (args[i] == flag) {
    if (i + 1 >= args.size()) return false;
    *value = args[++i];
    return true;
  }
  if (args[i].rfind(flag + "=", 0) == 0) {
    *value = args[i].substr(flag.size() + 1);
    return true;
  }
  return false;
}

bool ParseCompileFlags(const std::vector<std::string>& args,
                       CompileFlags* flags, std::string* error) {
  static const char* const kValued[] = {
      "--arch",   "--target",       "--name-expression",
      "--header", "--program-name", "-o"};
  std::string value;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (TakeValue(args, i, "--arch", &value)) {
      for (size_t start = 0; start <= value.size();) {
        const size_t comma = value.find(',', start);
        const size_t end = comma == std::string::npos ? value.size() : comma;
        if (end > start)
          flags->archs.push_back(value.substr(start, end - start));
        start = end + 1;
      }
    } else if (TakeValue(args, i, "--target", &value)) {
      if (value != "ptx" && value != "cubin" && value != "ltoir" &&
          value != "optixir") {
        *error =
            "unknown target '" + value + "' (ptx, cubin, ltoir or optixir)";
        return false;
      }
      flags->target = value;
    } else if (TakeValue(args, i, "--name-expression", &value)) {
      flags->name_expressions.push_back(value);
    } else if (TakeValue(args, i, "--header", &value)) {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) {
        *error = "--header takes NAME=FILE";
        return false;
      }
      flags->headers.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else if (TakeValue(args, i, "--program-name", &value)) {
      flags->program_name = value;
    } else if (TakeValue(args, i, "-o", &value)) {
      flags->output = value;
    } else if (arg == "--wait-for-proof") {
      flags->wait_for_proof = true;
    } else if (flags->file.empty() && arg.rfind("-", 0) != 0) {
      flags->file = arg;
    } else {
      for (const char* valued : kValued) {
        if (arg == valued) {
          *error = arg + " needs a value";
          return false;
        }
      }
      flags->nvrtc_options.push_back(arg);
    }
  }
  if (flags->file.empty()) {
    *error = "no FILE.cu given";
    return false;
  }
  return true;
}

std::string DefaultOutput(const std::string& file, const std::string& target) {
  const size_t slash = file.find_last_of('/');
  const size_t dot = file.find_last_of('.');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (has_extension ? file.substr(0, dot) : file) + "." + target;
}

std::string ResultLines(const std::string& served, bool compiled,
                        const std::string& failure, const std::string& key,
                        double compile_ms, double total_ms,
                        const std::string& output, size_t bytes,
                        const std::map<std::string, std::string>& lowered) {
  char line[512];
  if (!compiled) {
    std::snprintf(line, sizeof(line), " key %s compile %.1f ms total %.1f ms\n",
                  key.c_str(), compile_ms, total_ms);
    return served + " " + failure + line;
  }
  std::snprintf(line, sizeof(line), " key %s compile %.1f ms total %.1f ms",
                key.c_str(), compile_ms, total_ms);
  std::string out = served + line + " -> " + output + " (" +
                    std::to_string(bytes) + " bytes)\n";
  for (const auto& [expr, name] : lowered) {
    out += "  " + expr + " -> " + name + "\n";
  }
  return out;
}

}  // namespace jitcache::cli
