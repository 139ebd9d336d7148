#ifndef JITCACHE_COMMON_COMPILE_PLACE_H_
#define JITCACHE_COMMON_COMPILE_PLACE_H_

// Where a compile runs, "the place": the caller's working directory, the
// program's directory (where NVRTC looks first for quoted includes) and the
// times of the files it reads. Two requests that differ only in their place
// share an answer when the real NVRTC gives both the same bytes, so a key
// holds paths relative to the place ("anchored"), and the place itself only
// where the answer depends on it (cache_key.h, ComputePlacedCompileKey).
//
// An anchored path is "F:" (the file the program's name names, wherever
// the name puts it), "P:rel" (under the program's directory), "C:rel"
// (under the working directory, outside the program's) or an absolute path
// that lies under neither. A program named by an absolute path is keyed by
// its base name (its directory is the place); one named relative to the
// working directory, as spelled; with either, how the two directories lie.
// The name-free key holds neither name: only the name's extension and, for
// a relative name, the directories it spells (ProgramWithoutNameForKey).
//
// Pure, no file system access; any thread.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

class CompilePlace {
 public:
  // `cwd`: absolute and lexically normal, or "" (the compile runs in "/").
  // `program_name`: as the caller named the program (relative names are
  // relative to `cwd`).
  CompilePlace(std::string_view cwd, std::string_view program_name);

  // How the working directory (C) and the program's directory (P) lie:
  // what a proof compile elsewhere keeps.
  enum class Layout {
    kProgramInCwd,  // P is C or lies inside it
    kCwdInProgram,  // C lies inside P
    kApart,         // neither holds the other
  };
  Layout layout() const { return layout_; }

  // `path` (absolute, lexically normal) in anchored form.
  std::string Anchored(std::string_view path) const;
  // The absolute path of an anchored one here; nullopt for a malformed one
  // or an anchor this place does not have.
  std::optional<std::string> Absolute(std::string_view anchored) const;

  // The program, place-free: what the place-free key holds instead of the
  // program's name and the working directory ("P:" and the base name of an
  // absolute name, "rel:" and a relative name as spelled), and how the
  // program's directory and the working directory lie.
  std::string ProgramForKey() const;
  // ProgramForKey without the program's base name (its extension stays):
  // what the name-free key holds, shared by every name of the same
  // program where the real compiler's answer does not show the name.
  std::string ProgramWithoutNameForKey() const;

  // Whether the proof compile elsewhere keeps the program's base name or
  // gives it another one (RenamedProgram).
  enum class Name { kKept, kRenamed };

  // The same layout somewhere else, at directories no caller's place
  // would use (other names, lengths and depths), a relative program name
  // as spelled, an absolute one in the program's directory there: where
  // the proof compile runs. nullopt when
  // `anchored_files` cannot be laid out there (each must come back
  // anchored the same way, and none may lie where the other place is
  // made).
  std::optional<CompilePlace> Elsewhere(
      const std::vector<std::string>& anchored_files,
      Name name = Name::kKept) const;

  // Elsewhere, but for the working directory, which stays: only for a
  // program named by an absolute path outside the working directory (a
  // CuPy-style temporary file), whose directory can move alone. Where the
  // proof compile runs that tells an answer depending on the working
  // directory alone.
  std::optional<CompilePlace> ElsewhereButTheWorkingDirectory(
      const std::vector<std::string>& anchored_files) const;

  // The working directory as given ("" stays "") and the program's name.
  const std::string& cwd() const { return given_cwd_; }
  const std::string& program_name() const { return program_name_; }
  const std::string& program_dir() const { return program_dir_; }

  // Another base name for a program, with the same extension: other
  // length, other first character, never `base` itself.
  static std::string RenamedProgram(std::string_view base);

  // The root under which Elsewhere() makes its directories.
  static constexpr std::string_view kElsewhereRoot = "/.jitcache-elsewhere";

 private:
  // `there` when every anchored file comes back anchored the same way and
  // lies where it should: moved (under kElsewhereRoot) when its anchor
  // moved, not otherwise.
  std::optional<CompilePlace> Checked(
      CompilePlace there, const std::vector<std::string>& anchored_files,
      bool cwd_moved, Name name) const;

  std::string given_cwd_;
  std::string cwd_;  // "/" when none was given
  std::string program_name_;
  std::string program_dir_;   // absolute, lexically normal
  std::string program_file_;  // absolute, lexically normal, or ""
  Layout layout_ = Layout::kProgramInCwd;
};

// `dir`/`name` with "." and ".." resolved by text ("/.." is "/").
std::string JoinLexically(std::string_view dir, std::string_view name);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_COMPILE_PLACE_H_
