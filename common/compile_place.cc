#include "common/compile_place.h"

#include <string_view>

#include "common/paths.h"
#include "common/text.h"

namespace jitcache {
namespace {

constexpr std::string_view kCwdAnchor = "C:";

// paths.h speaks std::string_view; Abseil's is its own type here.
bool Under(std::string_view path, std::string_view dir, bool or_equal) {
  return IsUnder(path, dir, or_equal);
}
constexpr std::string_view kProgramAnchor = "P:";

std::string_view DirPart(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string_view BasePart(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `path` below `dir` (both normal, `path` under or equal to `dir`).
std::string_view Below(std::string_view path, std::string_view dir) {
  if (path == dir) return "";
  return path.substr(dir == "/" ? 1 : dir.size() + 1);
}

}  // namespace

std::string JoinLexically(std::string_view dir, std::string_view name) {
  std::vector<std::string_view> parts;
  auto add = [&](std::string_view path) {
    for (std::string_view part : text::Split(path, '/')) {
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
        continue;
      }
      parts.push_back(part);
    }
  };
  if (!text::StartsWith(name, "/")) add(dir);
  add(name);
  std::string out;
  for (std::string_view part : parts) text::Append(&out, "/", part);
  return out.empty() ? "/" : out;
}

CompilePlace::CompilePlace(std::string_view cwd, std::string_view program_name)
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

std::string CompilePlace::Anchored(std::string_view path) const {
  // The program's directory first: what NVRTC finds beside the program is
  // where it is relative to the program, however the program was named.
  if (Under(path, program_dir_, /*or_equal=*/true)) {
    return text::Cat(kProgramAnchor, Below(path, program_dir_));
  }
  if (Under(path, cwd_, /*or_equal=*/true)) {
    return text::Cat(kCwdAnchor, Below(path, cwd_));
  }
  return std::string(path);
}

std::optional<std::string> CompilePlace::Absolute(
    std::string_view anchored) const {
  std::string_view below = anchored;
  if (text::ConsumePrefix(&below, kCwdAnchor)) {
    if (text::StartsWith(below, "/")) return std::nullopt;
    return below.empty() ? cwd_ : JoinLexically(cwd_, below);
  }
  if (text::ConsumePrefix(&below, kProgramAnchor)) {
    if (text::StartsWith(below, "/")) return std::nullopt;
    return below.empty() ? program_dir_ : JoinLexically(program_dir_, below);
  }
  if (!IsNormalAbsolutePath(anchored)) return std::nullopt;
  return std::string(anchored);
}

std::string CompilePlace::ProgramForKey() const {
  // How the two directories lie, which the proof compile keeps: where a
  // header is found (beside the program or through a relative -I), and so
  // how NVRTC spells it, can depend on it.
  std::string layout;
  switch (layout_) {
    case Layout::kProgramInCwd:
      layout = text::Cat("program in cwd at ", Below(program_dir_, cwd_));
      break;
    case Layout::kCwdInProgram:
      layout = text::Cat("cwd in program at ", Below(cwd_, program_dir_));
      break;
    case Layout::kApart:
      layout = "apart";
      break;
  }
  // NVRTC names the program as spelled (in logs, __FILE__, line
  // information): a relative name is keyed as spelled (it is relative to
  // the working directory, which is the place); an absolute one by its base
  // name, its directory being the place.
  if (!text::StartsWith(program_name_, "/")) {
    return text::Cat("rel:", program_name_, "\n", layout);
  }
  return text::Cat(kProgramAnchor, BasePart(program_name_), "\n", layout);
}

std::optional<CompilePlace> CompilePlace::Elsewhere(
    const std::vector<std::string>& anchored_files) const {
  // The two directories keep how they lie to each other (a relative -I
  // from the working directory still reaches what it reached); a relative
  // name stays as spelled, an absolute one moves with its directory.
  const std::string cwd_there =
      text::Cat(kElsewhereRoot, "/w0rk/d1r/s0me/d3pth");
  const std::string program_there = text::Cat(kElsewhereRoot, "/pr0g");
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
      text::StartsWith(program_name_, "/")
          ? text::Cat(program_dir, "/", BasePart(program_name_))
          : program_name_;
  return Checked(CompilePlace(cwd, name), anchored_files,
                 /*cwd_moved=*/true);
}

std::optional<CompilePlace> CompilePlace::ElsewhereButTheWorkingDirectory(
    const std::vector<std::string>& anchored_files) const {
  if (layout_ != Layout::kApart || !text::StartsWith(program_name_, "/")) {
    return std::nullopt;
  }
  return Checked(CompilePlace(given_cwd_, text::Cat(kElsewhereRoot, "/pr0g/",
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
    const bool moved = text::StartsWith(anchored, "P:") ||
                       (cwd_moved && text::StartsWith(anchored, "C:"));
    if (!path.has_value() || there.Anchored(*path) != anchored ||
        Under(*path, kElsewhereRoot, /*or_equal=*/true) != moved) {
      return std::nullopt;
    }
  }
  return there;
}

}  // namespace jitcache
