#include "common/compile_place.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/paths.h"

namespace jitcache {
namespace {

constexpr absl::string_view kCwdAnchor = "C:";

// paths.h speaks std::string_view; Abseil's is its own type here.
std::string_view Std(absl::string_view s) { return {s.data(), s.size()}; }
bool Under(absl::string_view path, absl::string_view dir, bool or_equal) {
  return IsUnder(Std(path), Std(dir), or_equal);
}
constexpr absl::string_view kProgramAnchor = "P:";

absl::string_view DirPart(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::string_view BasePart(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// `path` below `dir` (both normal, `path` under or equal to `dir`).
absl::string_view Below(absl::string_view path, absl::string_view dir) {
  if (path == dir) return "";
  return path.substr(dir == "/" ? 1 : dir.size() + 1);
}

}  // namespace

std::string JoinLexically(absl::string_view dir, absl::string_view name) {
  std::vector<absl::string_view> parts;
  auto add = [&](absl::string_view path) {
    for (absl::string_view part : absl::StrSplit(path, '/')) {
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
        continue;
      }
      parts.push_back(part);
    }
  };
  if (!absl::StartsWith(name, "/")) add(dir);
  add(name);
  std::string out;
  for (absl::string_view part : parts) absl::StrAppend(&out, "/", part);
  return out.empty() ? "/" : out;
}

CompilePlace::CompilePlace(absl::string_view cwd,
                           absl::string_view program_name)
    : given_cwd_(cwd),
      cwd_(cwd.empty() ? "/" : std::string(cwd)),
      program_name_(program_name),
      program_dir_(JoinLexically(cwd_, DirPart(program_name))) {
  if (IsUnder(program_dir_, cwd_, /*or_equal=*/true)) {
    layout_ = Layout::kProgramInCwd;
  } else if (IsUnder(cwd_, program_dir_, /*or_equal=*/false)) {
    layout_ = Layout::kCwdInProgram;
  } else {
    layout_ = Layout::kApart;
  }
}

std::string CompilePlace::Anchored(absl::string_view path) const {
  // The program's directory first: what NVRTC finds beside the program is
  // where it is relative to the program, however the program was named.
  if (Under(path, program_dir_, /*or_equal=*/true)) {
    return absl::StrCat(kProgramAnchor, Below(path, program_dir_));
  }
  if (Under(path, cwd_, /*or_equal=*/true)) {
    return absl::StrCat(kCwdAnchor, Below(path, cwd_));
  }
  return std::string(path);
}

std::optional<std::string> CompilePlace::Absolute(
    absl::string_view anchored) const {
  absl::string_view below = anchored;
  if (absl::ConsumePrefix(&below, kCwdAnchor)) {
    if (absl::StartsWith(below, "/")) return std::nullopt;
    return below.empty() ? cwd_ : JoinLexically(cwd_, below);
  }
  if (absl::ConsumePrefix(&below, kProgramAnchor)) {
    if (absl::StartsWith(below, "/")) return std::nullopt;
    return below.empty() ? program_dir_ : JoinLexically(program_dir_, below);
  }
  if (!IsNormalAbsolutePath(Std(anchored))) return std::nullopt;
  return std::string(anchored);
}

std::string CompilePlace::ProgramForKey() const {
  // How the two directories lie, which the proof compile keeps: where a
  // header is found (beside the program or through a relative -I), and so
  // how NVRTC spells it, can depend on it.
  std::string layout;
  switch (layout_) {
    case Layout::kProgramInCwd:
      layout = absl::StrCat("program in cwd at ", Below(program_dir_, cwd_));
      break;
    case Layout::kCwdInProgram:
      layout = absl::StrCat("cwd in program at ", Below(cwd_, program_dir_));
      break;
    case Layout::kApart:
      layout = "apart";
      break;
  }
  // NVRTC names the program as spelled (in logs, __FILE__, line
  // information): a relative name is keyed as spelled (it is relative to
  // the working directory, which is the place); an absolute one by its base
  // name, its directory being the place.
  if (!absl::StartsWith(program_name_, "/")) {
    return absl::StrCat("rel:", program_name_, "\n", layout);
  }
  return absl::StrCat(kProgramAnchor, BasePart(program_name_), "\n", layout);
}

std::optional<CompilePlace> CompilePlace::Elsewhere(
    const std::vector<std::string>& anchored_files) const {
  // The two directories keep how they lie to each other (a relative -I
  // from the working directory still reaches what it reached); a relative
  // name stays as spelled, an absolute one moves with its directory.
  const std::string cwd_there =
      absl::StrCat(kElsewhereRoot, "/w0rk/d1r/s0me/d3pth");
  const std::string program_there = absl::StrCat(kElsewhereRoot, "/pr0g");
  std::string cwd, program_dir;
  switch (layout_) {
    case Layout::kProgramInCwd:
      cwd = cwd_there;
      program_dir = JoinLexically(cwd, Below(program_dir_, cwd_));
      break;
    case Layout::kCwdInProgram:
      program_dir = program_there;
      cwd = JoinLexically(program_dir, Below(cwd_, program_dir_));
      break;
    case Layout::kApart:
      cwd = cwd_there;
      program_dir = program_there;
      break;
  }
  // A relative name leads from the working directory to the program's as
  // it did here (checked below).
  const std::string name =
      absl::StartsWith(program_name_, "/")
          ? absl::StrCat(program_dir, "/", BasePart(program_name_))
          : program_name_;
  return Checked(CompilePlace(cwd, name), anchored_files,
                 /*cwd_moved=*/true);
}

std::optional<CompilePlace> CompilePlace::ElsewhereButTheWorkingDirectory(
    const std::vector<std::string>& anchored_files) const {
  if (layout_ != Layout::kApart || !absl::StartsWith(program_name_, "/")) {
    return std::nullopt;
  }
  return Checked(
      CompilePlace(given_cwd_, absl::StrCat(kElsewhereRoot, "/pr0g/",
                                            BasePart(program_name_))),
      anchored_files, /*cwd_moved=*/false);
}

std::optional<CompilePlace> CompilePlace::Checked(
    CompilePlace there, const std::vector<std::string>& anchored_files,
    bool cwd_moved) const {
  // A caller's place where the other place is made would be compared with
  // itself: no proof then.
  if (Under(cwd_, kElsewhereRoot, /*or_equal=*/true) ||
      Under(program_dir_, kElsewhereRoot, /*or_equal=*/true) ||
      there.program_dir_ == program_dir_ || (cwd_moved && there.cwd_ == cwd_)) {
    return std::nullopt;
  }
  if (there.layout_ != layout_ || there.ProgramForKey() != ProgramForKey() ||
      !Under(there.program_dir_, kElsewhereRoot, /*or_equal=*/false) ||
      Under(there.cwd_, kElsewhereRoot, /*or_equal=*/true) != cwd_moved) {
    return std::nullopt;
  }
  for (const std::string& anchored : anchored_files) {
    std::optional<std::string> path = there.Absolute(anchored);
    const bool moved = absl::StartsWith(anchored, "P:") ||
                       (cwd_moved && absl::StartsWith(anchored, "C:"));
    if (!path.has_value() || there.Anchored(*path) != anchored ||
        Under(*path, kElsewhereRoot, /*or_equal=*/true) != moved) {
      return std::nullopt;
    }
  }
  return there;
}

}  // namespace jitcache
