#include "server/engine/place_proof.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/compile_place.h"

namespace jitcache {

namespace {

std::vector<std::string> AnchoredPaths(const CompileJob& job) {
  std::vector<std::string> out;
  if (job.files != nullptr) {
    for (const auto& [path, bytes] : *job.files) out.push_back(path);
  }
  return out;
}

std::optional<CompileJob> MovedTo(const CompileJob& job,
                                  const std::optional<CompilePlace>& there) {
  if (!there.has_value()) return std::nullopt;
  CompileJob moved = job;
  moved.working_directory = there->cwd();
  moved.program_name = there->program_name();
  for (int64_t& mtime : moved.file_mtimes_ns) {
    // Wrapping, not overflowing, for any time a caller sends.
    mtime = static_cast<int64_t>(static_cast<uint64_t>(mtime) +
                                 static_cast<uint64_t>(kElsewhereTimeShiftNs));
  }
  return moved;
}

}  // namespace

std::optional<CompileJob> ElsewhereJob(const CompileJob& job) {
  return MovedTo(job, CompilePlace(job.working_directory, job.program_name)
                          .Elsewhere(AnchoredPaths(job)));
}

std::optional<CompileJob> ElsewhereRenamedJob(const CompileJob& job) {
  return MovedTo(
      job, CompilePlace(job.working_directory, job.program_name)
               .Elsewhere(AnchoredPaths(job), CompilePlace::Name::kRenamed));
}

std::optional<CompileJob> OtherTimesJob(const CompileJob& job) {
  if (job.file_mtimes_ns.empty()) return std::nullopt;
  return MovedTo(job, CompilePlace(job.working_directory, job.program_name));
}

std::optional<CompileJob> ElsewhereButTheWorkingDirectoryJob(
    const CompileJob& job) {
  return MovedTo(job, CompilePlace(job.working_directory, job.program_name)
                          .ElsewhereButTheWorkingDirectory(AnchoredPaths(job)));
}

namespace {

bool TakeHex(std::string& s, size_t& at, size_t digits, bool mask) {
  if (at + digits > s.size()) return false;
  for (size_t i = 0; i < digits; ++i) {
    const char c = s[at + i];
    if (!absl::ascii_isxdigit(c) || absl::ascii_isupper(c)) return false;
  }
  if (mask) s.replace(at, digits, digits, 'x');
  at += digits;
  return true;
}

// Decimal digits at `at` (masked in place when `mask`); their value, or
// -1 where there are none.
int64_t TakeNumber(std::string& s, size_t& at, bool mask) {
  const size_t start = at;
  int64_t value = 0;
  while (at < s.size() && absl::ascii_isdigit(s[at]) && at - start < 12) {
    value = value * 10 + (s[at] - '0');
    if (mask) s[at] = 'x';
    ++at;
  }
  return at == start ? -1 : value;
}

bool TakeChar(const std::string& s, size_t& at, char c) {
  if (at >= s.size() || s[at] != c) return false;
  ++at;
  return true;
}

// After a "_INTERNAL_" or "_GLOBAL__N__" at `at`: NVRTC's per-process
// digits, "<8 hex>_<length>_<file name>_<8 hex>_<number>", masked in place
// (the hex digits and the number; the length and name stay).
void MaskInternalName(std::string& s, size_t at) {
  if (!TakeHex(s, at, 8, /*mask=*/true)) return;
  if (!TakeChar(s, at, '_')) return;
  const int64_t length = TakeNumber(s, at, /*mask=*/false);
  if (length <= 0 || !TakeChar(s, at, '_') ||
      at + static_cast<size_t>(length) > s.size()) {
    return;
  }
  at += static_cast<size_t>(length);
  if (!TakeChar(s, at, '_')) return;
  size_t hex = at;
  if (!TakeHex(s, hex, 8, /*mask=*/false) || !TakeChar(s, hex, '_')) return;
  size_t number = hex;
  if (TakeNumber(s, number, /*mask=*/false) < 0) return;
  TakeHex(s, at, 8, /*mask=*/true);
  ++at;
  TakeNumber(s, at, /*mask=*/true);
}

// The times a log reports (-time, -Xptxas -v): "= 1.23 ms", ", 1.23, ms".
void MaskTimes(std::string& s) {
  for (const std::string lead : {"time = ", ", "}) {
    size_t at = 0;
    while ((at = s.find(lead, at)) != std::string::npos) {
      at += lead.size();
      size_t end = at;
      while (end < s.size() && (absl::ascii_isdigit(s[end]) || s[end] == '.')) {
        ++end;
      }
      const absl::string_view after = absl::string_view(s).substr(end);
      if (end > at &&
          (absl::StartsWith(after, " ms") || absl::StartsWith(after, ", ms"))) {
        s.replace(at, end - at, "x");
      }
    }
  }
}

}  // namespace

std::string WithoutProcessNoise(absl::string_view text) {
  std::string out(text);
  for (const std::string lead : {"_INTERNAL_", "_GLOBAL__N__"}) {
    size_t at = 0;
    while ((at = out.find(lead, at)) != std::string::npos) {
      at += lead.size();
      MaskInternalName(out, at);
    }
  }
  return out;
}

std::string LogWithoutRunNoise(absl::string_view log) {
  std::string out = WithoutProcessNoise(log);
  MaskTimes(out);
  return out;
}

bool SameAnswer(const ActionResult& here, const ActionResult& there) {
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
         LogWithoutRunNoise(here.log) == LogWithoutRunNoise(there.log);
}

bool SameLinkAnswer(const ActionResult& here, const ActionResult& there) {
  if (here.ok != there.ok || here.object != there.object ||
      here.log != there.log ||
      here.link_trace.has_value() != there.link_trace.has_value()) {
    return false;
  }
  return !here.link_trace.has_value() ||
         here.link_trace->SerializeAsString() ==
             there.link_trace->SerializeAsString();
}

std::optional<std::string> LogTemplate(absl::string_view log,
                                       absl::string_view program_name) {
  if (program_name.empty() || absl::StrContains(log, kProgramNameInLog) ||
      !absl::StrContains(log, program_name)) {
    return std::nullopt;
  }
  return absl::StrReplaceAll(log, {{program_name, kProgramNameInLog}});
}

std::string LogFor(absl::string_view log_template,
                   absl::string_view program_name) {
  return absl::StrReplaceAll(log_template, {{kProgramNameInLog, program_name}});
}

bool SameAnswerButTheName(const ActionResult& here, absl::string_view here_name,
                          const ActionResult& there,
                          absl::string_view there_name) {
  const std::optional<std::string> mine = LogTemplate(here.log, here_name);
  const std::optional<std::string> theirs = LogTemplate(there.log, there_name);
  if (!mine.has_value() || !theirs.has_value()) return false;
  ActionResult a = here;
  ActionResult b = there;
  a.log = *mine;
  b.log = *theirs;
  return SameAnswer(a, b);
}

std::string FirstDifference(const ActionResult& here,
                            const ActionResult& there) {
  if (SameAnswer(here, there)) return "";
  if (here.ok != there.ok) return "one compiled, the other did not";
  auto at = [](absl::string_view what, const std::string& a,
               const std::string& b) -> std::string {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    if (i == a.size() && i == b.size()) return "";
    const size_t from = i < 40 ? 0 : i - 40;
    return absl::StrCat(what, " differs at byte ", i, ": \"",
                        absl::CEscape(a.substr(from, 80)), "\" against \"",
                        absl::CEscape(b.substr(from, 80)), "\"");
  };
  std::string d = at("the object", WithoutProcessNoise(here.object),
                     WithoutProcessNoise(there.object));
  if (d.empty()) {
    d = at("the log", LogWithoutRunNoise(here.log),
           LogWithoutRunNoise(there.log));
  }
  return d.empty() ? "the lowered names differ" : d;
}

}  // namespace jitcache
