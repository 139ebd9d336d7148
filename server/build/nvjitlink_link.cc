// CudaCompiler::Link: nvJitLink, the one place nvJitLinkResult is converted.
#include <nvJitLink.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/build/cuda_compiler.h"

namespace jitcache {
namespace {

absl::string_view ResultName(nvJitLinkResult r) {
  switch (r) {
    case NVJITLINK_SUCCESS:
      return "NVJITLINK_SUCCESS";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
      return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case NVJITLINK_ERROR_MISSING_ARCH:
      return "NVJITLINK_ERROR_MISSING_ARCH";
    case NVJITLINK_ERROR_INVALID_INPUT:
      return "NVJITLINK_ERROR_INVALID_INPUT";
    case NVJITLINK_ERROR_PTX_COMPILE:
      return "NVJITLINK_ERROR_PTX_COMPILE";
    case NVJITLINK_ERROR_NVVM_COMPILE:
      return "NVJITLINK_ERROR_NVVM_COMPILE";
    case NVJITLINK_ERROR_INTERNAL:
      return "NVJITLINK_ERROR_INTERNAL";
    default:
      return "NVJITLINK_ERROR";
  }
}

// Owns an nvJitLinkHandle.
class LinkHandle {
 public:
  LinkHandle() = default;
  LinkHandle(const LinkHandle&) = delete;
  LinkHandle& operator=(const LinkHandle&) = delete;
  ~LinkHandle() {
    if (handle_ != nullptr) nvJitLinkDestroy(&handle_);
  }
  nvJitLinkHandle* out() { return &handle_; }
  nvJitLinkHandle get() const { return handle_; }

 private:
  nvJitLinkHandle handle_ = nullptr;
};

// One of nvJitLink's two logs: its size, then its text (NUL-terminated).
std::string ReadLog(nvJitLinkHandle h,
                    nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
                    nvJitLinkResult (*get)(nvJitLinkHandle, char*)) {
  size_t size = 0;
  if (get_size(h, &size) != NVJITLINK_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (get(h, log.data()) != NVJITLINK_SUCCESS) return {};
  log.resize(std::min(log.size(), log.find('\0')));
  return log;
}

// The error log, then the info log.
std::string Logs(nvJitLinkHandle h) {
  std::string out =
      ReadLog(h, &nvJitLinkGetErrorLogSize, &nvJitLinkGetErrorLog);
  const std::string info =
      ReadLog(h, &nvJitLinkGetInfoLogSize, &nvJitLinkGetInfoLog);
  if (!out.empty() && !info.empty() && out.back() != '\n') out.push_back('\n');
  return out + info;
}

nvJitLinkInputType InputType(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kPtx:
      return NVJITLINK_INPUT_PTX;
    case ObjectKind::kCubin:
      return NVJITLINK_INPUT_CUBIN;
    case ObjectKind::kLtoir:
      return NVJITLINK_INPUT_LTOIR;
    case ObjectKind::kFatbin:
      return NVJITLINK_INPUT_FATBIN;
    case ObjectKind::kObject:
      return NVJITLINK_INPUT_OBJECT;
    case ObjectKind::kLibrary:
      return NVJITLINK_INPUT_LIBRARY;
  }
  return NVJITLINK_INPUT_NONE;
}

// What a caller reading both logs right after a call would get.
void RecordLogs(nvJitLinkHandle h, v1::NvJitLinkLogs* logs) {
  auto read = [h](nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
                  nvJitLinkResult (*get)(nvJitLinkHandle, char*),
                  std::string* text) {
    size_t size = 0;
    const nvJitLinkResult r = get_size(h, &size);
    if (r == NVJITLINK_SUCCESS && size > 0) {
      text->assign(size, '\0');
      if (get(h, text->data()) != NVJITLINK_SUCCESS) text->clear();
    }
    return static_cast<int>(r);
  };
  logs->set_error_size_result(read(&nvJitLinkGetErrorLogSize,
                                   &nvJitLinkGetErrorLog,
                                   logs->mutable_error_log()));
  logs->set_info_size_result(read(&nvJitLinkGetInfoLogSize,
                                  &nvJitLinkGetInfoLog,
                                  logs->mutable_info_log()));
}

// One of the two outputs after nvJitLinkComplete: the size call's result,
// then the read's.
void RecordOutput(nvJitLinkHandle h,
                  nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
                  const std::function<nvJitLinkResult(char*)>& get,
                  int* size_result, int* result, std::string* bytes) {
  size_t size = 0;
  const nvJitLinkResult r = get_size(h, &size);
  *size_result = r;
  *result = r;
  if (r == NVJITLINK_SUCCESS) {
    bytes->assign(size, '\0');
    *result = get(bytes->data());
    if (*result != NVJITLINK_SUCCESS) bytes->clear();
  }
}

// The link as the caller drove it through libnvJitLink.so.13: the options
// as spelled, every call made whatever the one before answered (nvJitLink
// goes on after a failed add), and every observable recorded, so that the
// library can answer each call as the real one did.
absl::StatusOr<CompileResult> LinkAsCalled(const LinkJob& job) {
  const absl::Time start = absl::Now();
  std::vector<const char*> argv;
  for (const std::string& o : job.options) argv.push_back(o.c_str());
  LinkHandle link;
  v1::NvJitLinkTrace trace;
  nvJitLinkResult r = nvJitLinkCreate(
      link.out(), static_cast<uint32_t>(argv.size()), argv.data());
  trace.set_handle_created(link.get() != nullptr);
  auto step = [&] {
    v1::NvJitLinkStep* s = trace.add_steps();
    s->set_result(r);
    RecordLogs(link.get(), s->mutable_logs());
  };
  CompileResult result;
  if (link.get() != nullptr) {
    step();
  }
  // After a refused nvJitLinkCreate the real nvJitLink crashes in later
  // calls (13.0: nvJitLinkComplete): those are left to the caller's own.
  if (link.get() != nullptr && r == NVJITLINK_SUCCESS) {
    for (const LinkInputData& input : job.inputs) {
      r = nvJitLinkAddData(link.get(), InputType(input.kind),
                           input.bytes.data(), input.bytes.size(),
                           input.name.c_str());
      step();
    }
    r = nvJitLinkComplete(link.get());
    step();
    trace.set_complete(true);
    if (absl::Now() > job.deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("link took ", absl::FormatDuration(absl::Now() - start),
                       ": it ran past the daemon's compile-time limit"));
    }
    int size_result = 0, read_result = 0;
    RecordOutput(
        link.get(), &nvJitLinkGetLinkedCubinSize,
        [&](char* out) { return nvJitLinkGetLinkedCubin(link.get(), out); },
        &size_result, &read_result, &result.object);
    trace.set_cubin_size_result(size_result);
    trace.set_cubin_result(read_result);
    RecordOutput(
        link.get(), &nvJitLinkGetLinkedPtxSize,
        [&](char* out) { return nvJitLinkGetLinkedPtx(link.get(), out); },
        &size_result, &read_result, trace.mutable_ptx());
    trace.set_ptx_size_result(size_result);
    trace.set_ptx_result(read_result);
  } else if (link.get() == nullptr) {
    trace.add_steps()->set_result(r);
  }
  result.ok = true;
  result.link_trace = std::move(trace);
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace

absl::StatusOr<CompileResult> CudaCompiler::Link(const LinkJob& job) {
  if (job.as_called) return LinkAsCalled(job);
  const absl::Time start = absl::Now();
  std::vector<const char*> argv;
  for (const std::string& o : job.options) argv.push_back(o.c_str());
  LinkHandle link;
  nvJitLinkResult r = nvJitLinkCreate(
      link.out(), static_cast<uint32_t>(argv.size()), argv.data());
  if (r != NVJITLINK_SUCCESS) {
    // Options passed our own checks; nvJitLink still refused them.
    return absl::InvalidArgumentError(
        absl::StrCat("nvJitLink refused the options: ", ResultName(r)));
  }
  CompileResult result;
  auto link_error = [&](absl::string_view step) {
    result.ok = false;
    result.log =
        absl::StrCat(step, ": ", ResultName(r), "\n", Logs(link.get()));
    result.elapsed = absl::Now() - start;
    return result;
  };
  for (const LinkInputData& input : job.inputs) {
    r = nvJitLinkAddData(link.get(), InputType(input.kind), input.bytes.data(),
                         input.bytes.size(), input.name.c_str());
    if (r != NVJITLINK_SUCCESS) {
      return link_error(absl::StrCat("adding input '", input.name, "' (",
                                     ObjectKindName(input.kind), ")"));
    }
  }
  r = nvJitLinkComplete(link.get());
  if (r != NVJITLINK_SUCCESS) return link_error("link");
  // nvJitLink has no cancellation hook: a link past its deadline is refused
  // after the fact, like a compile NVRTC would not stop.
  if (absl::Now() > job.deadline) {
    return absl::DeadlineExceededError(
        absl::StrCat("link took ", absl::FormatDuration(absl::Now() - start),
                     ": it ran past the daemon's compile-time limit"));
  }
  size_t size = 0;
  if (job.target == ObjectKind::kPtx) {
    r = nvJitLinkGetLinkedPtxSize(link.get(), &size);
    if (r == NVJITLINK_SUCCESS) {
      result.object.resize(size);
      r = nvJitLinkGetLinkedPtx(link.get(), result.object.data());
      while (!result.object.empty() && result.object.back() == '\0') {
        result.object.pop_back();
      }
    }
  } else {
    r = nvJitLinkGetLinkedCubinSize(link.get(), &size);
    if (r == NVJITLINK_SUCCESS) {
      result.object.resize(size);
      r = nvJitLinkGetLinkedCubin(link.get(), result.object.data());
    }
  }
  if (r != NVJITLINK_SUCCESS) return link_error("reading the linked output");
  result.ok = true;
  result.log = Logs(link.get());
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace jitcache
