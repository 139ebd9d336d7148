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
  CLI::App* stats = Command(app, "stats", out);
  stats->add_flag("--zero", out.zero);
  AddJson(stats, out);
  for (const char* name : {"compile", "link"}) {
    CLI::App* command = Command(app, name, out);
    command->allow_extras();
    command->positionals_at_end(false);
    // (Replaces Command's callback: one per command.)
    command->final_callback([&out, command, name] {
      out.command = name;
      out.passthrough = command->remaining();
    });
  }
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

}  // namespace

std::variant<CommandLine, int> ParseCommandLine(int argc, char** argv) {
  CommandLine out;
  CLI::App app{"jitcache: the command-line client of jitcached", "jitcache"};
  app.set_help_flag();
  app.add_flag("-h,--help", out.help);
  app.add_flag("--version", out.version);
  app.add_option("--socket", out.socket);
  app.require_subcommand(0, 1);
  AddCommands(app, out);
  // Unknown words before the command are reported below, by name. (After
  // the commands are made: a command inherits this, and only compile and
  // link take what they do not know.)
  app.allow_extras();
  // "jitcache help" and "jitcache version", as before the flags had these.
  if (argc >= 2 &&
      (std::string(argv[1]) == "help" || std::string(argv[1]) == "version")) {
    out.help = std::string(argv[1]) == "help";
    out.version = !out.help;
    return out;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const CLI::App* failed =
        app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    return UsageError(failed == nullptr
                          ? e.what()
                          : absl::StrCat(failed->get_name(), ": ", e.what()));
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
