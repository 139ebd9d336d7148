#include "common/nvrtc_program.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/compile_options.h"

namespace jitcache {
namespace {

// Owns an nvrtcProgram.
class ProgramHandle {
 public:
  explicit ProgramHandle(const NvrtcApi& api) : api_(api) {}
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  ~ProgramHandle() {
    if (prog_ != nullptr) api_.DestroyProgram(&prog_);
  }
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram prog_ = nullptr;
};

// NUL-terminated text (PTX, logs) without its terminators.
void TrimNuls(std::string& text) {
  while (!text.empty() && text.back() == '\0') text.pop_back();
}

absl::StatusOr<std::string> ReadObject(const NvrtcApi& api, nvrtcProgram prog,
                                       ObjectKind target) {
  size_t size = 0;
  std::string out;
  nvrtcResult r = NVRTC_SUCCESS;
  switch (target) {
    case ObjectKind::kPtx:
      r = api.GetPTXSize(prog, &size);
      out.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetPTX(prog, out.data());
      TrimNuls(out);
      break;
    case ObjectKind::kCubin:
      r = api.GetCUBINSize(prog, &size);
      out.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetCUBIN(prog, out.data());
      break;
    case ObjectKind::kLtoir:
      r = api.GetLTOIRSize(prog, &size);
      out.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetLTOIR(prog, out.data());
      break;
    case ObjectKind::kOptixIr:
      r = api.GetOptiXIRSize(prog, &size);
      out.resize(size);
      if (r == NVRTC_SUCCESS) r = api.GetOptiXIR(prog, out.data());
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("NVRTC does not produce ", ObjectKindName(target)));
  }
  if (absl::Status s = FromNvrtc(api, r, "reading NVRTC output"); !s.ok()) {
    return s;
  }
  if (out.empty()) {
    // Its own code: the front end answers "size 0" for this kind, as the
    // caller's NVRTC does (wire::Code::kOutOfRange).
    return absl::OutOfRangeError(absl::StrCat(
        "NVRTC produced no ", ObjectKindName(target),
        " for these options (e.g. -fdevice-syntax-only, or a virtual "
        "architecture with target cubin)"));
  }
  return out;
}

}  // namespace

absl::Status FromNvrtc(const NvrtcApi& api, nvrtcResult r,
                       absl::string_view what) {
  if (r == NVRTC_SUCCESS) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", api.GetErrorString(r));
  switch (r) {
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
      return absl::InvalidArgumentError(message);
    case NVRTC_ERROR_CANCELLED:
      return absl::DeadlineExceededError(message);
    default:
      return absl::InternalError(message);
  }
}

namespace {

// The program made and readied: created with its headers, its flow
// callback set, its name expressions added.
absl::Status SetUpProgram(const NvrtcApi& api, const NvrtcInput& input,
                          ProgramHandle& prog) {
  std::vector<const char*> header_names, header_bodies;
  if (input.headers != nullptr) {
    for (const auto& [name, body] : *input.headers) {
      header_names.push_back(name.c_str());
      header_bodies.push_back(body.c_str());
    }
  }
  if (absl::Status s = FromNvrtc(
          api,
          api.CreateProgram(prog.out(), input.source->c_str(),
                            input.program_name.c_str(),
                            static_cast<int>(header_names.size()),
                            header_bodies.data(), header_names.data()),
          "nvrtcCreateProgram");
      !s.ok()) {
    return s;
  }
  if (input.flow_callback != nullptr && api.SetFlowCallback != nullptr) {
    if (absl::Status s =
            FromNvrtc(api,
                      api.SetFlowCallback(prog.get(), input.flow_callback,
                                          input.flow_payload),
                      "nvrtcSetFlowCallback");
        !s.ok()) {
      return s;
    }
  }
  for (const std::string& expr : input.name_expressions) {
    if (absl::Status s =
            FromNvrtc(api, api.AddNameExpression(prog.get(), expr.c_str()),
                      absl::StrCat("name expression '", expr, "'"));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// The compile's log, without its terminator (empty when there is none).
std::string LogOf(const NvrtcApi& api, nvrtcProgram prog) {
  std::string log;
  size_t log_size = 0;
  if (api.GetProgramLogSize(prog, &log_size) != NVRTC_SUCCESS ||
      log_size <= 1) {
    return log;
  }
  log.resize(log_size);
  // Only the terminator goes: with -Xptxas -v the text itself ends in a
  // NUL, which a caller of NVRTC sees in the log's size and bytes.
  if (api.GetProgramLog(prog, log.data()) == NVRTC_SUCCESS) {
    log.pop_back();
  } else {
    log.clear();
  }
  return log;
}

// The compiled program's object and each name expression's lowered name.
absl::Status ReadResults(const NvrtcApi& api, nvrtcProgram prog,
                         const NvrtcInput& input, NvrtcOutput& out) {
  absl::StatusOr<std::string> object = ReadObject(api, prog, input.target);
  if (!object.ok()) return object.status();
  out.object = *std::move(object);
  for (const std::string& expr : input.name_expressions) {
    const char* lowered = nullptr;
    if (absl::Status s =
            FromNvrtc(api, api.GetLoweredName(prog, expr.c_str(), &lowered),
                      absl::StrCat("name expression '", expr,
                                   "' names nothing in the program"));
        !s.ok()) {
      return s;
    }
    out.lowered_names.emplace_back(expr, lowered);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NvrtcOutput> RunNvrtc(const NvrtcApi& api,
                                     const NvrtcInput& input) {
  ProgramHandle prog(api);
  if (absl::Status s = SetUpProgram(api, input, prog); !s.ok()) return s;
  std::vector<std::string> args = input.options;
  for (const std::string& dir : input.include_dirs) {
    args.push_back(std::string(kIncludePathOption) + dir);
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());

  NvrtcOutput out;
  out.compiled = api.CompileProgram(prog.get(), static_cast<int>(argv.size()),
                                    argv.data());
  out.log = LogOf(api, prog.get());
  if (out.compiled == NVRTC_ERROR_COMPILATION ||
      out.compiled == NVRTC_ERROR_CANCELLED) {
    return out;
  }
  if (absl::Status s = FromNvrtc(api, out.compiled, "nvrtcCompileProgram");
      !s.ok()) {
    if (out.log.empty()) return s;
    return absl::Status(s.code(), absl::StrCat(s.message(), "\n", out.log));
  }
  if (absl::Status s = ReadResults(api, prog.get(), input, out); !s.ok()) {
    return s;
  }
  return out;
}

}  // namespace jitcache
