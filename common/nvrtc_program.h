#ifndef JITCACHE_COMMON_NVRTC_PROGRAM_H_
#define JITCACHE_COMMON_NVRTC_PROGRAM_H_

#include <nvrtc.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/object_kind.h"

namespace jitcache {

// NVRTC's entry points as a table. The daemon's workers fill it with the
// functions they link; the client library, which must not link NVRTC,
// with dlsym. Either way one call sequence (RunNvrtc) drives it, so that a
// local compile gives the daemon's bytes.
struct NvrtcApi {
  decltype(&nvrtcGetErrorString) GetErrorString = nullptr;
  decltype(&nvrtcCreateProgram) CreateProgram = nullptr;
  decltype(&nvrtcDestroyProgram) DestroyProgram = nullptr;
  decltype(&nvrtcCompileProgram) CompileProgram = nullptr;
  decltype(&nvrtcGetPTXSize) GetPTXSize = nullptr;
  decltype(&nvrtcGetPTX) GetPTX = nullptr;
  decltype(&nvrtcGetCUBINSize) GetCUBINSize = nullptr;
  decltype(&nvrtcGetCUBIN) GetCUBIN = nullptr;
  decltype(&nvrtcGetLTOIRSize) GetLTOIRSize = nullptr;
  decltype(&nvrtcGetLTOIR) GetLTOIR = nullptr;
  decltype(&nvrtcGetOptiXIRSize) GetOptiXIRSize = nullptr;
  decltype(&nvrtcGetOptiXIR) GetOptiXIR = nullptr;
  decltype(&nvrtcGetProgramLogSize) GetProgramLogSize = nullptr;
  decltype(&nvrtcGetProgramLog) GetProgramLog = nullptr;
  decltype(&nvrtcAddNameExpression) AddNameExpression = nullptr;
  decltype(&nvrtcGetLoweredName) GetLoweredName = nullptr;
  // Optional: without it a compile cannot be stopped early.
  decltype(&nvrtcSetFlowCallback) SetFlowCallback = nullptr;
};

struct NvrtcInput {
  std::string program_name;
  const std::string* source = nullptr;
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
  // Canonical options, then the toolkit's include directories (the daemon
  // and the client put them in this order, for the same bytes).
  std::vector<std::string> options;
  std::vector<std::string> include_dirs;
  std::vector<std::string> name_expressions;  // sorted, unique
  ObjectKind target = ObjectKind::kPtx;
  // NVRTC's flow callback (see nvrtcSetFlowCallback); null: none.
  int (*flow_callback)(void* payload, void* reserved) = nullptr;
  void* flow_payload = nullptr;
};

struct NvrtcOutput {
  // What nvrtcCompileProgram returned: NVRTC_SUCCESS (object and lowered
  // names filled), NVRTC_ERROR_COMPILATION (a program that does not compile:
  // a result, with its log) or NVRTC_ERROR_CANCELLED (the flow callback).
  nvrtcResult compiled = NVRTC_SUCCESS;
  std::string object;
  std::string log;
  std::vector<std::pair<std::string, std::string>> lowered_names;
};

// Whether a failed compile's log says NVRTC could not open a file the
// program includes. Inline: libnvrtc.so.13, which loads no Abseil, asks
// it too.
inline bool LogSaysAFileWasMissing(std::string_view log) {
  return log.find("cannot open source file") != std::string_view::npos;
}

// nvrtcResult -> absl::Status: OUT_OF_MEMORY is RESOURCE_EXHAUSTED, a bad
// option, input or name expression INVALID_ARGUMENT, others INTERNAL.
absl::Status FromNvrtc(const NvrtcApi& api, nvrtcResult result,
                       absl::string_view what);

// Create, add the name expressions, compile, read the log, the object and
// the lowered names. An error for failures of NVRTC itself (other than
// COMPILATION and CANCELLED), and for a compile that produced no object of
// the target kind.
absl::StatusOr<NvrtcOutput> RunNvrtc(const NvrtcApi& api,
                                     const NvrtcInput& input);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_NVRTC_PROGRAM_H_
