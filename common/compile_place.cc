#include "common/compile_place.h"

#include <string_view>

#include "common/paths.h"
#include "common/place_anchor.h"
#include "common/text.h"

namespace jitcache {
namespace {

// paths.h speaks std::string_view; Abseil's is its own type here.
bool Under(std::string_view path, std::string_view dir, bool or_equal) {
  return IsUnder(path, dir, or_equal);
}
// ".cu" of "kern.cu", "" of "default_program" (a leading dot is no
// extension).
std::string_view Extension(std::string_view base) {
  const size_t dot = base.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? "" : base.substr(dot);
}

// Whether a base name names a file (not a directory by its spelling).
bool NamesAFile(std::string_view base) {
  return !base.empty() && base != "." && base != "..";
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
  if (NamesAFile(BasePart(program_name))) {
    program_file_ = JoinLexically(cwd_, program_name);
  }
  if (IsUnder(program_dir_, cwd_, /*or_equal=*/true)) {
    layout_ = Layout::kProgramInCwd;
  } else if (IsUnder(cwd_, program_dir_, /*or_equal=*/false)) {
    layout_ = Layout::kCwdInProgram;
  } else {
    layout_ = Layout::kApart;
  }
}

std::string CompilePlace::Anchored(std::string_view path) const {
  // The program's own file by what it is, not by its name: NVRTC reads it
  // (for line information) wherever the name puts it, and the name-free
  // key must not hold the name through it.
  if (!program_file_.empty() && path == program_file_) {
    return std::string(kProgramFileAnchor);
  }
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
  if (anchored == kProgramFileAnchor) {
    if (program_file_.empty()) return std::nullopt;
    return program_file_;
  }
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

namespace {

std::string LayoutForKey(CompilePlace::Layout layout, std::string_view cwd,
                         std::string_view program_dir) {
  switch (layout) {
    case CompilePlace::Layout::kProgramInCwd:
      return text::Cat("program in cwd at ", Below(program_dir, cwd));
    case CompilePlace::Layout::kCwdInProgram:
      return text::Cat("cwd in program at ", Below(cwd, program_dir));
    case CompilePlace::Layout::kApart:
      break;
  }
  return "apart";
}

}  // namespace

std::string CompilePlace::ProgramForKey() const {
  // How the two directories lie, which the proof compile keeps: where a
  // header is found (beside the program or through a relative -I), and so
  // how NVRTC spells it, can depend on it.
  const std::string layout = LayoutForKey(layout_, cwd_, program_dir_);
  // NVRTC names the program as spelled (in logs, __FILE__, line
  // information): a relative name is keyed as spelled (it is relative to
  // the working directory, which is the place); an absolute one by its base
  // name, its directory being the place.
  if (!text::StartsWith(program_name_, "/")) {
    return text::Cat("rel:", program_name_, "\n", layout);
  }
  return text::Cat(kProgramAnchor, BasePart(program_name_), "\n", layout);
}

std::string CompilePlace::ProgramWithoutNameForKey() const {
  // As ProgramForKey, with the base name's place held by its extension
  // (NVRTC could treat a name by its ending); a relative name's directories
  // stay, being how NVRTC spells where the program is.
  const std::string layout = LayoutForKey(layout_, cwd_, program_dir_);
  const std::string_view base = BasePart(program_name_);
  const std::string_view dir =
      program_name_.size() == base.size()
          ? std::string_view()
          : std::string_view(program_name_)
                .substr(0, program_name_.size() - base.size());
  // (ProgramForKey begins "rel:" or "P:": never the same text.)
  if (!text::StartsWith(program_name_, "/")) {
    return text::Cat("any name rel:", dir, "*", Extension(base), "\n", layout);
  }
  return text::Cat("any name P:*", Extension(base), "\n", layout);
}

std::string CompilePlace::RenamedProgram(std::string_view base) {
  const std::string_view ext = Extension(base);
  const std::string_view stem = base.substr(0, base.size() - ext.size());
  // Longer, and with another first character, so that a name's length and
  // its spelling both show where the answer holds either.
  const std::string_view lead =
      text::StartsWith(stem, "r") ? "q0th3r_n4m3_" : "r3n4m3d_";
  return text::Cat(lead, stem, "_x9", ext);
}

std::optional<CompilePlace> CompilePlace::Elsewhere(
    const std::vector<std::string>& anchored_files, Name name) const {
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
  const std::string_view base = BasePart(program_name_);
  const std::string base_there =
      name == Name::kRenamed ? RenamedProgram(base) : std::string(base);
  const std::string name_there =
      text::StartsWith(program_name_, "/")
          ? text::Cat(program_dir, "/", base_there)
          : text::Cat(
                program_name_.substr(0, program_name_.size() - base.size()),
                base_there);
  return Checked(CompilePlace(cwd, name_there), anchored_files,
                 /*cwd_moved=*/true, name);
}

std::optional<CompilePlace> CompilePlace::ElsewhereButTheWorkingDirectory(
    const std::vector<std::string>& anchored_files) const {
  if (layout_ != Layout::kApart || !text::StartsWith(program_name_, "/")) {
    return std::nullopt;
  }
  return Checked(CompilePlace(given_cwd_, text::Cat(kElsewhereRoot, "/pr0g/",
                                                    BasePart(program_name_))),
                 anchored_files, /*cwd_moved=*/false, Name::kKept);
}

std::optional<CompilePlace> CompilePlace::Checked(
    CompilePlace there, const std::vector<std::string>& anchored_files,
    bool cwd_moved, Name name) const {
  // A caller's place where the other place is made would be compared with
  // itself: no proof then.
  if (Under(cwd_, kElsewhereRoot, /*or_equal=*/true) ||
      Under(program_dir_, kElsewhereRoot, /*or_equal=*/true) ||
      there.program_dir_ == program_dir_ || (cwd_moved && there.cwd_ == cwd_)) {
    return std::nullopt;
  }
  // Renamed, the name-free part of the key holds (and the name is
  // another); kept, the whole of it.
  const bool same_key =
      name == Name::kRenamed
          ? there.ProgramWithoutNameForKey() == ProgramWithoutNameForKey() &&
                BasePart(there.program_name_) != BasePart(program_name_) &&
                NamesAFile(BasePart(program_name_))
          : there.ProgramForKey() == ProgramForKey();
  if (there.layout_ != layout_ || !same_key ||
      !Under(there.program_dir_, kElsewhereRoot, /*or_equal=*/false) ||
      Under(there.cwd_, kElsewhereRoot, /*or_equal=*/true) != cwd_moved) {
    return std::nullopt;
  }
  for (const std::string& anchored : anchored_files) {
    std::optional<std::string> path = there.Absolute(anchored);
    const bool moved = anchored == kProgramFileAnchor ||
                       text::StartsWith(anchored, "P:") ||
                       (cwd_moved && text::StartsWith(anchored, "C:"));
    if (!path.has_value() || there.Anchored(*path) != anchored ||
        Under(*path, kElsewhereRoot, /*or_equal=*/true) != moved) {
      return std::nullopt;
    }
  }
  return there;
}

}  // namespace jitcache
