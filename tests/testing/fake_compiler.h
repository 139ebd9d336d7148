#ifndef JITCACHE_TESTS_TESTING_FAKE_COMPILER_H_
#define JITCACHE_TESTS_TESTING_FAKE_COMPILER_H_

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/compile_place.h"
#include "server/build/compiler.h"

namespace jitcache::testing {

// A Compiler that counts its calls and can be held at a gate. Its object is
// a function of the job, so equal jobs give equal bytes: the working
// directory and the files' paths are in it (an answer that depends on the
// place), unless the source says "#placeless"; a source that says "#named"
// shows the program's base name (as NVRTC's internal symbols do), wherever
// the program is; one that says "#lognamed" writes a warning that names the
// program, as spelled, into its log; one that says "#stamped" shows each
// file's time (as line information does). A source containing
// "#error" gives a compile error, "#missing" one for a file not found, and
// "#infra" an INTERNAL error ("#infra-elsewhere": only in a compile run
// elsewhere, a place proof's).
class FakeCompiler final : public Compiler {
 public:
  FakeCompiler() {
    toolchain_.fingerprint = std::string(32, 'f');
    toolchain_.description = "fake 1.0";
    toolchain_.supported_archs = {75, 80, 90};
    toolchain_.include_dirs = {"/fake/cuda/include"};
  }

  // While held, Compile blocks until Release(). May be repeated.
  void Hold() {
    absl::MutexLock lock(&mu_);
    held_ = true;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    held_ = false;
  }
  // While held, only compiles run elsewhere (place proofs) block.
  void HoldElsewhere() {
    absl::MutexLock lock(&mu_);
    held_elsewhere_ = true;
  }
  void ReleaseElsewhere() {
    absl::MutexLock lock(&mu_);
    held_elsewhere_ = false;
  }

  absl::StatusOr<ActionResult> Compile(const CompileJob& job) override {
    // The service's proof that an answer does not depend on the place runs
    // the compile once more elsewhere (place_proof.h): counted apart.
    const bool elsewhere =
        job.working_directory.starts_with(CompilePlace::kElsewhereRoot) ||
        job.program_name.starts_with(CompilePlace::kElsewhereRoot);
    (elsewhere ? elsewhere_calls_ : calls_).fetch_add(1);
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](bool* held) { return !*held; }, &held_));
      if (elsewhere) {
        mu_.Await(absl::Condition(
            +[](bool* held) { return !*held; }, &held_elsewhere_));
      }
    }
    if (absl::StrContains(job.source, "#infra") &&
        (!absl::StrContains(job.source, "#infra-elsewhere") || elsewhere)) {
      return absl::InternalError("fake infrastructure failure");
    }
    ActionResult result;
    result.elapsed = absl::Milliseconds(5);
    if (absl::StrContains(job.source, "#error")) {
      result.ok = false;
      result.log = "fake.cu(1): error: #error directive";
      return result;
    }
    if (absl::StrContains(job.source, "#missing")) {
      result.ok = false;
      result.log =
          "fake.cu(1): catastrophic error: cannot open source file \"m.h\"";
      return result;
    }
    result.ok = true;
    result.object =
        absl::StrCat("object[", ObjectKindName(job.target), "]:", job.source);
    for (const auto& option : job.options) {
      absl::StrAppend(&result.object, " ", option);
    }
    // What the compile would see besides the toolkit: its working
    // directory and each file the request carried, where they are; or,
    // for a "#placeless" source, the files where they are relative to the
    // place, as a compiler whose output does not depend on the place.
    const bool placeless = absl::StrContains(job.source, "#placeless");
    if (!job.working_directory.empty() && !placeless) {
      absl::StrAppend(&result.object, " cwd=", job.working_directory);
    }
    if (absl::StrContains(job.source, "#lognamed")) {
      result.log = absl::StrCat(job.program_name, "(1): warning: fake, in ",
                                job.program_name);
    }
    if (absl::StrContains(job.source, "#named")) {
      absl::StrAppend(
          &result.object, " name=",
          std::filesystem::path(job.program_name).filename().string());
    }
    if (job.files != nullptr) {
      const CompilePlace place(job.working_directory, job.program_name);
      const bool stamped = absl::StrContains(job.source, "#stamped");
      for (size_t i = 0; i < job.files->size(); ++i) {
        const auto& [anchored, bytes] = (*job.files)[i];
        absl::StrAppend(
            &result.object, " [",
            placeless ? anchored : place.Absolute(anchored).value_or("?"), "]",
            bytes);
        if (stamped && i < job.file_mtimes_ns.size()) {
          absl::StrAppend(&result.object, "@", job.file_mtimes_ns[i]);
        }
      }
    }
    for (const auto& expr : job.name_expressions) {
      result.lowered_names.emplace_back(expr, absl::StrCat("_Z_", expr.size()));
    }
    return result;
  }

  // Links by concatenation; an input containing "#undefined" fails to link.
  absl::StatusOr<ActionResult> Link(const LinkJob& job) override {
    calls_.fetch_add(1);
    ActionResult result;
    result.elapsed = absl::Milliseconds(5);
    for (const auto& input : job.inputs) {
      if (absl::StrContains(input.bytes, "#undefined")) {
        result.ok = false;
        result.log = absl::StrCat("error: undefined symbol in ", input.name);
        return result;
      }
      absl::StrAppend(&result.object, "[", input.bytes, "]");
    }
    result.ok = true;
    return result;
  }

  const ToolchainInfo& toolchain() const override { return toolchain_; }

  // Compiles in the caller's place, and those run elsewhere.
  int calls() const { return calls_.load(); }
  int elsewhere_calls() const { return elsewhere_calls_.load(); }

 private:
  ToolchainInfo toolchain_;
  absl::Mutex mu_;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  bool held_elsewhere_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int> calls_{0};
  std::atomic<int> elsewhere_calls_{0};
};

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_FAKE_COMPILER_H_
