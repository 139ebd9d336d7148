#ifndef JITCACHE_SERVER_ENGINE_PLACE_PROOF_H_
#define JITCACHE_SERVER_ENGINE_PLACE_PROOF_H_

// Whether a compile's answer depends on its place (compile_place.h) or its
// program's name, decided by the real compiler: the compile runs once more
// at the same layout somewhere else, under another program name, with
// other file times, at the same time as the caller's own, and the two
// answers are compared. Equal answers are shared by every place and name
// (the place-free key). Where they differ, the compile runs elsewhere once
// more under the caller's name: equal answers then depend on the name
// alone (shared by every place under that name); any other difference, or
// a place whose layout cannot be reproduced elsewhere, keeps the answer to
// its own place.
//
// Pure; any thread.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/build/compiler.h"

namespace jitcache {

// The same compile elsewhere: the working directory and the program's
// directory moved (CompilePlace::Elsewhere), the files (anchored) with
// them, every file's time moved too. nullopt when the layout cannot be
// reproduced elsewhere.
std::optional<CompileJob> ElsewhereJob(const CompileJob& job);

// ElsewhereJob, with the program under another base name too (CompilePlace::
// RenamedProgram): equal answers hold for any name and place. nullopt where
// the program cannot be renamed so.
std::optional<CompileJob> ElsewhereRenamedJob(const CompileJob& job);

// The same compile with the program's directory moved and the times too,
// the working directory where it is (CompilePlace::
// ElsewhereButTheWorkingDirectory): equal answers depend on the working
// directory alone. nullopt where the program's directory cannot move alone.
std::optional<CompileJob> ElsewhereButTheWorkingDirectoryJob(
    const CompileJob& job);

// The same compile in the same place, every file's time moved (as
// ElsewhereJob moves them): equal answers depend on the place, not on the
// times. nullopt for a compile of no files.
std::optional<CompileJob> OtherTimesJob(const CompileJob& job);

// How far ElsewhereJob moves every file's modification time: a day and
// a fraction of a second, so that seconds and nanoseconds both differ.
inline constexpr int64_t kElsewhereTimeShiftNs = 86'400'123'456'789;

// `text` with what the real NVRTC varies from one process to the next
// masked in place (same length): in the names of internal-linkage symbols,
// "_INTERNAL_<8 hex>_<n>_<file>_<8 hex>_<number>" (and "_GLOBAL__N__"),
// the hex digits and the number.
std::string WithoutProcessNoise(absl::string_view text);

// A log without process noise nor the times it reports (-time,
// -Xptxas -v: each number of milliseconds becomes "x").
std::string LogWithoutRunNoise(absl::string_view log);

// Whether two compiles gave the same answer: result, object, log and
// lowered names, apart from WithoutProcessNoise (and the log's times).
bool SameAnswer(const ActionResult& here, const ActionResult& there);

// Whether two as-called links of the same inputs under other names gave the
// same answer: every call's result and log, and the outputs, byte for byte
// (nvJitLink varies nothing from one run to the next).
bool SameLinkAnswer(const ActionResult& here, const ActionResult& there);

// What a kept log holds where the real compiler's log named the program
// (LogTemplate): bytes no NVRTC log holds (the template is never made from
// a log that has them).
inline constexpr absl::string_view kProgramNameInLog =
    "\x01\x02jitcache-program-name\x02\x01";

// `log` with every `program_name` in it as kProgramNameInLog; nullopt when
// the log names it nowhere, already holds kProgramNameInLog, or the name is
// empty.
std::optional<std::string> LogTemplate(absl::string_view log,
                                       absl::string_view program_name);
// A template's log for a program named `program_name`.
std::string LogFor(absl::string_view log_template,
                   absl::string_view program_name);

// Whether two compiles gave the same answer but for the program's name in
// their logs (`here_name` in one, `there_name` in the other): the same
// result, object and lowered names, and logs that are the same once each
// program's name is taken out (SameAnswer otherwise).
bool SameAnswerButTheName(const ActionResult& here, absl::string_view here_name,
                          const ActionResult& there,
                          absl::string_view there_name);

// Where two answers first differ, for the log ("" when SameAnswer).
std::string FirstDifference(const ActionResult& here,
                            const ActionResult& there);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_PLACE_PROOF_H_
