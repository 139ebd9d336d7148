#ifndef JITCACHE_CLIENT_PROGRAM_H_
#define JITCACHE_CLIENT_PROGRAM_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jitcache {

// What to compile: CUDA C++ source plus headers served from memory.
// A value type; not synchronised.
class Program {
 public:
  explicit Program(std::string source, std::string name = "program.cu")
      : source_(std::move(source)), name_(std::move(name)) {}

  Program& AddHeader(std::string name, std::string contents) {
    headers_.emplace_back(std::move(name), std::move(contents));
    return *this;
  }

  const std::string& source() const { return source_; }
  const std::string& name() const { return name_; }
  const std::vector<std::pair<std::string, std::string>>& headers() const {
    return headers_;
  }

 private:
  std::string source_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

// How to compile, after cuda.core's ProgramOptions. Unset fields leave
// NVRTC's default; extra_options are passed through as written.
struct ProgramOptions {
  std::string arch;  // "sm_90", "compute_90"; empty: NVRTC's default
  std::optional<std::string> language_standard;  // "c++17"
  std::optional<bool> relocatable_device_code;
  std::optional<bool> ftz;
  std::optional<bool> prec_div;
  std::optional<bool> prec_sqrt;
  std::optional<bool> fma;
  std::optional<int> max_register_count;
  bool use_fast_math = false;
  bool debug = false;
  bool lineinfo = false;
  std::vector<std::string> define_macro;  // "NAME" or "NAME=VALUE"
  // -I directories, searched in order. Those outside the toolkit are
  // scanned here: the headers the program may include from them go to the
  // daemon by content, and are part of the key.
  std::vector<std::string> include_path;
  // The daemon adds the toolkit's include/ and include/cccl after the
  // include directories named, as nvcc would (so that <cub/...> needs no
  // -I). False: exactly the directories named, as NVRTC itself searches.
  bool toolkit_include_dirs = true;
  // Target LTO-IR adds -dlto unless the options hold it. False: the
  // options exactly as NVRTC takes them (LTO-IR without -dlto is then no
  // object: NVRTC makes none).
  bool dlto_for_ltoir = true;
  // Not a compile option: a miss is answered only once its cache key is
  // final. The daemon proves, beside each miss, whether the answer depends
  // on the caller's place; by default it answers when the caller's own
  // compile ends, under this place's key if the proof still runs
  // (ObjectCode::proof_pending). For callers that hand the key on.
  bool wait_for_proof = false;
  std::vector<std::string> pre_include;
  std::vector<std::string> name_expressions;
  std::vector<std::string> extra_options;

  // The NVRTC option list these settings mean.
  std::vector<std::string> AsNvrtcOptions() const;
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_PROGRAM_H_
