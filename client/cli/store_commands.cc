#include "client/cli/store_commands.h"

#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/cli/cli_args.h"
#include "client/cli/progress_bar.h"
#include "common/size_units.h"
#include "jitcache/store_admin.h"

namespace jitcache::cli {
namespace {

std::string When(absl::Time t) {
  if (t == absl::UnixEpoch()) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", t, absl::LocalTimeZone());
}

void PrintEvict(const EvictReport& r) {
  std::cout << absl::StrFormat(
      "removed %d records, %d uploads, %d objects (%s uncompressed); store "
      "%s -> %s\n",
      r.records, r.uploads, r.objects, FormatSize(r.live_bytes),
      FormatSize(r.bytes_before), FormatSize(r.bytes_after));
}

int Evict(const StoreAdmin& admin, const CommandLine& line) {
  std::optional<uint64_t> to_size;
  std::optional<absl::Duration> older_than;
  if (!line.to_size.empty()) {
    absl::StatusOr<uint64_t> size = ParseSize(line.to_size);
    if (!size.ok()) return UsageError(size.status().message());
    to_size = *size;
  }
  if (!line.older_than.empty()) {
    absl::StatusOr<absl::Duration> age = ParseAge(line.older_than);
    if (!age.ok()) return UsageError(age.status().message());
    older_than = *age;
  }
  if (!to_size && !older_than) {
    return UsageError(
        "evict needs --to-size SIZE and/or --older-than DURATION");
  }
  absl::StatusOr<EvictReport> r = admin.Evict(to_size, older_than);
  if (!r.ok()) return Failed(r.status());
  PrintEvict(*r);
  return 0;
}

}  // namespace

std::variant<ListOptions, int> ListOptionsOf(const CommandLine& line) {
  ListOptions options;
  options.arch = line.arch;
  if (line.kind.has_value()) {
    std::optional<CodeType> type = ParseCodeType(*line.kind);
    if (!type) {
      return UsageError(absl::StrCat("unknown kind '", *line.kind, "'"));
    }
    options.target = *type;
  }
  if (line.sort.has_value()) {
    if (*line.sort == "used") {
      options.sort = ListOptions::Sort::kUsed;
    } else if (*line.sort == "size") {
      options.sort = ListOptions::Sort::kSize;
    } else {
      return UsageError("--sort takes used or size");
    }
  }
  if (line.limit.has_value() &&
      !absl::SimpleAtoi(*line.limit, &options.limit)) {
    return UsageError("--limit takes a number");
  }
  return options;
}

namespace {

int List(const StoreAdmin& admin, const CommandLine& line) {
  std::variant<ListOptions, int> parsed = ListOptionsOf(line);
  if (const int* usage = std::get_if<int>(&parsed)) return *usage;
  const ListOptions& options = std::get<ListOptions>(parsed);
  auto listed = admin.List(options);
  if (!listed.ok()) return Failed(listed.status());
  std::cout << absl::StrFormat("%-16s %-13s %-6s %-8s %10s %-19s %10s  %s\n",
                               "key", "outcome", "kind", "arch", "bytes",
                               "last used", "compile ms", "program");
  for (const StoreEntry& e : listed->first) {
    std::cout << absl::StrFormat(
        "%-16s %-13s %-6s %-8s %10d %-19s %10.1f  %s\n", e.key.substr(0, 16),
        e.outcome, CodeTypeName(e.target), e.arch.empty() ? "-" : e.arch,
        e.object_size, When(e.last_used), e.compile_time_us / 1000.0,
        e.is_link ? absl::StrCat("(link of ", e.input_digests.size(), ")")
                  : e.program_name);
  }
  std::cout << listed->first.size() << " of " << listed->second << " entries\n";
  return 0;
}

int Show(const Client& client, const StoreAdmin& admin,
         const CommandLine& line) {
  const std::string& prefix = line.key_prefix;
  const std::string& output = line.output;
  const bool print_ptx = line.ptx;
  if (prefix.empty()) return UsageError("show needs a KEY_PREFIX");
  absl::StatusOr<StoreEntry> e = admin.Show(prefix);
  if (!e.ok()) return Failed(e.status());
  if (print_ptx || !output.empty()) {
    if (e->object_digest.empty()) {
      std::cerr << "jitcache: entry " << e->key << " has no object ("
                << e->outcome << ")\n";
      return kExitFailure;
    }
    absl::StatusOr<ObjectCode> object = client.FetchObject(e->object_digest);
    if (!object.ok()) return Failed(object.status());
    if (print_ptx) {
      if (e->target != CodeType::kPtx) {
        std::cerr << "jitcache: entry " << e->key << " holds "
                  << CodeTypeName(e->target) << ", not PTX; use -o FILE\n";
        return kExitFailure;
      }
      std::cout << object->bytes;
      return 0;
    }
    if (!WriteOutput(output, object->bytes)) return kExitFailure;
    std::cout << "wrote " << object->bytes.size() << " bytes to " << output
              << "\n";
    return 0;
  }
  std::cout << "key:          " << e->key << "\n"
            << "outcome:      " << e->outcome << "\n"
            << "target:       " << CodeTypeName(e->target) << "\n"
            << "arch:         " << e->arch << "\n"
            << "kind:         " << (e->is_link ? "link" : "compile") << "\n";
  if (!e->is_link) {
    std::cout << "program:      " << e->program_name << " (" << e->source_bytes
              << " bytes of source and headers)\n";
  }
  std::cout << "options:      " << absl::StrJoin(e->options, " ") << "\n"
            << "object:       " << e->object_size << " bytes"
            << (e->object_digest.empty()
                    ? ""
                    : absl::StrCat(", sha256 ", e->object_digest))
            << "\n"
            << "record:       " << e->record_size << " bytes\n"
            << "created:      " << When(e->created) << "\n"
            << "last used:    " << When(e->last_used) << "\n"
            << absl::StrFormat("compile time: %.1f ms\n",
                               e->compile_time_us / 1000.0);
  for (const std::string& input : e->input_digests) {
    std::cout << "input:        " << input << "\n";
  }
  for (const auto& [expr, lowered] : e->lowered_names) {
    std::cout << "lowered:      " << expr << " -> " << lowered << "\n";
  }
  std::cout << "log:          " << e->log_size << " bytes\n" << e->log;
  if (!e->log.empty() && e->log.back() != '\n') std::cout << "\n";
  return 0;
}

int Export(const StoreAdmin& admin, const CommandLine& line) {
  ExportFilter filter;
  for (const std::string& arch : line.archs) {
    if (!arch.empty()) filter.archs.push_back(arch);
  }
  filter.key_prefixes = line.keys;
  const std::string& output = line.output;
  if (output.empty()) return UsageError("export needs -o FILE.jcb");
  ProgressBar bar("exported");
  absl::StatusOr<BundleReport> r = admin.Export(
      output, filter,
      [&](uint64_t done, uint64_t total) { bar.Update(done, total); });
  if (!r.ok()) return Failed(r.status());
  std::cout << "exported " << r->entries << " entries to " << output << " ("
            << FormatSize(r->bytes) << ")\n";
  return 0;
}

int Import(const StoreAdmin& admin, const CommandLine& line) {
  if (line.file.empty()) return UsageError("import takes one FILE.jcb");
  ProgressBar bar("imported");
  absl::StatusOr<BundleReport> r = admin.Import(
      line.file,
      [&](uint64_t done, uint64_t total) { bar.Update(done, total); });
  if (!r.ok()) return Failed(r.status());
  std::cout << "imported " << r->imported << " of " << r->entries
            << " entries; refused: " << r->other_toolchain
            << " other toolchain, " << r->corrupt << " corrupt, "
            << r->already_present << " already present\n";
  for (const std::string& p : r->problems) std::cerr << "  " << p << "\n";
  return 0;
}

}  // namespace

std::optional<int> RunStoreCommand(const Client& client,
                                   const CommandLine& line) {
  const std::string& command = line.command;
  const StoreAdmin admin = StoreAdmin::Connect(client.socket_path());
  if (command == "evict") return Evict(admin, line);
  if (command == "clear") {
    absl::StatusOr<EvictReport> r = admin.Clear();
    if (!r.ok()) return Failed(r.status());
    PrintEvict(*r);
    return 0;
  }
  if (command == "config") {
    auto settings = admin.Config();
    if (!settings.ok()) return Failed(settings.status());
    for (const auto& [name, value] : *settings) {
      std::cout << absl::StrFormat("%-28s %s\n", name, value);
    }
    return 0;
  }
  if (command == "ls") return List(admin, line);
  if (command == "show") return Show(client, admin, line);
  if (command == "export") return Export(admin, line);
  if (command == "import") return Import(admin, line);
  return std::nullopt;
}

int ExportKeys(const Client& client, const std::vector<std::string>& keys,
               const std::string& path) {
  const StoreAdmin admin = StoreAdmin::Connect(client.socket_path());
  ExportFilter filter;
  filter.key_prefixes = keys;
  absl::StatusOr<BundleReport> r = admin.Export(path, filter);
  if (!r.ok()) return Failed(r.status());
  std::cout << "exported " << r->entries << " entries to " << path << " ("
            << FormatSize(r->bytes) << ")\n";
  return 0;
}

}  // namespace jitcache::cli
