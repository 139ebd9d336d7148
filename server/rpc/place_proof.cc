#include "server/rpc/place_proof.h"

#include "absl/strings/ascii.h"
#include "common/compile_place.h"

namespace jitcache {

std::optional<CompileJob> ElsewhereJob(const CompileJob& job) {
  std::vector<std::string> anchored_paths;
  if (job.files != nullptr) {
    for (const auto& [path, bytes] : *job.files) anchored_paths.push_back(path);
  }
  const CompilePlace here(job.working_directory, job.program_name);
  std::optional<CompilePlace> there = here.Elsewhere(anchored_paths);
  if (!there.has_value()) return std::nullopt;
  CompileJob moved = job;
  moved.working_directory = there->cwd();
  moved.program_name = there->program_name();
  for (int64_t& mtime : moved.file_mtimes_ns) mtime += kElsewhereTimeShiftNs;
  return moved;
}

std::string WithoutProcessNoise(absl::string_view text) {
  static constexpr char kInternal[] = "_INTERNAL_";
  constexpr size_t kInternalSize = sizeof(kInternal) - 1;
  constexpr size_t kDigits = 8;
  std::string out(text);
  size_t at = 0;
  while ((at = out.find(kInternal, at)) != std::string::npos) {
    at += kInternalSize;
    if (at + kDigits > out.size()) break;
    bool hex = true;
    for (size_t i = 0; i < kDigits; ++i) {
      const char c = out[at + i];
      hex = hex && absl::ascii_isxdigit(c) && !absl::ascii_isupper(c);
    }
    if (hex) out.replace(at, kDigits, kDigits, 'x');
  }
  return out;
}

bool SameAnswer(const CompileResult& here, const CompileResult& there) {
  if (here.ok != there.ok ||
      here.lowered_names.size() != there.lowered_names.size()) {
    return false;
  }
  for (size_t i = 0; i < here.lowered_names.size(); ++i) {
    if (here.lowered_names[i].first != there.lowered_names[i].first ||
        WithoutProcessNoise(here.lowered_names[i].second) !=
            WithoutProcessNoise(there.lowered_names[i].second)) {
      return false;
    }
  }
  return here.object.size() == there.object.size() &&
         WithoutProcessNoise(here.object) ==
             WithoutProcessNoise(there.object) &&
         WithoutProcessNoise(here.log) == WithoutProcessNoise(there.log);
}

}  // namespace jitcache
