#include "client/cli/command_line.h"

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "client/cli/cli_args.h"

namespace jitcache::cli {
namespace {

// A command with `--help` of its own: CLI11's help is off everywhere, as
// jitcache prints its own text (the same that its man page is made from).
CLI::App* Command(CLI::App& app, const std::string& name, CommandLine& out) {
  CLI::App* command = app.add_subcommand(name);
  command->set_help_flag();
  command->add_flag("-h,--help", out.help);
  // What each command's --help prints says what it takes; CLI11's own
  // messages name the argument.
  command->callback([&out, name] { out.command = name; });
  return command;
}

void AddJson(CLI::App* command, CommandLine& out) {
  command->add_flag("--json", out.json);
}

void AddCommands(CLI::App& app, CommandLine& out) {
  AddJson(Command(app, "ping", out), out);
  Command(app, "health", out);
  Command(app, "preload", out);
  CLI::App* stats = Command(app, "stats", out);
  stats->add_flag("--zero", out.zero);
  AddJson(stats, out);
  // compile and link: their arguments are taken apart below, not here.
  Command(app, "compile", out);
  Command(app, "link", out);
  CLI::App* precompile = Command(app, "precompile", out);
  precompile->add_option("MANIFEST", out.file);
  precompile->add_option("--export", out.export_path);
  CLI::App* ls = Command(app, "ls", out);
  ls->add_option("--arch", out.arch);
  ls->add_option("--kind", out.kind);
  ls->add_option("--sort", out.sort);
  ls->add_option("--limit", out.limit);
  AddJson(ls, out);
  CLI::App* show = Command(app, "show", out);
  show->add_option("KEY_PREFIX", out.key_prefix);
  show->add_flag("--ptx", out.ptx);
  show->add_option("-o", out.output);
  AddJson(show, out);
  CLI::App* exporting = Command(app, "export", out);
  exporting->add_option("--arch", out.archs)->delimiter(',');
  exporting->add_option("--key", out.keys);
  exporting->add_option("-o", out.output);
  CLI::App* import = Command(app, "import", out);
  import->add_option("FILE", out.file);
  CLI::App* evict = Command(app, "evict", out);
  evict->add_option("--to-size", out.to_size);
  evict->add_option("--older-than", out.older_than);
  Command(app, "clear", out);
  AddJson(Command(app, "config", out), out);
}

// Where the command word is: past the global flags (`--socket PATH`,
// `--socket=PATH`, `-h`, `--help`, `--version`); argc when there is none.
int CommandAt(int argc, char** argv) {
  int at = 1;
  while (at < argc) {
    const std::string_view arg = argv[at];
    if (arg == "--socket") {
      at += 2;
    } else if (arg.starts_with("--socket=") || arg == "-h" || arg == "--help" ||
               arg == "--version") {
      ++at;
    } else {
      break;
    }
  }
  return std::min(at, argc);
}

}  // namespace

std::variant<CommandLine, int> ParseCommandLine(int argc, char** argv) {
  CommandLine out;
  CLI::App app{"jitcache: the command-line client of jitcached", "jitcache"};
  // A flag given twice takes its last value (subcommands copy this).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_help_flag();
  app.add_flag("-h,--help", out.help);
  app.add_flag("--version", out.version);
  app.add_option("--socket", out.socket);
  app.require_subcommand(0, 1);
  AddCommands(app, out);
  // Unknown words before the command are reported below, by name. (After
  // the commands are made: a command inherits this.)
  app.allow_extras();
  const int at = CommandAt(argc, argv);
  const std::string word = at < argc ? argv[at] : "";
  // "jitcache help" and "jitcache version", as before the flags had these;
  // compile's and link's arguments are theirs, `--` and all.
  const bool own_arguments = word == "compile" || word == "link";
  const bool as_flag = word == "help" || word == "version";
  try {
    app.parse(own_arguments || as_flag ? at + own_arguments : argc, argv);
  } catch (const CLI::ParseError& e) {
    const CLI::App* failed =
        app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    return UsageError(failed == nullptr
                          ? e.what()
                          : absl::StrCat(failed->get_name(), ": ", e.what()));
  }
  if (as_flag) {
    (word == "help" ? out.help : out.version) = true;
    return out;
  }
  if (own_arguments) {
    for (int i = at + 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "-h" || arg == "--help") {
        out.help = true;
      } else {
        out.passthrough.emplace_back(arg);
      }
    }
  }
  // What no command or global flag took: CLI11 keeps it as an extra of
  // the top level.
  if (const std::vector<std::string> rest = app.remaining(); !rest.empty()) {
    const std::string& first = rest.front();
    return UsageError(first.starts_with("-")
                          ? absl::StrCat("unknown flag '", first, "'")
                          : absl::StrCat("unknown command '", first, "'"));
  }
  return out;
}

}  // namespace jitcache::cli
