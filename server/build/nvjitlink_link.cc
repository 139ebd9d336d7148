// CudaCompiler::Link: nvJitLink, the one place nvJitLinkResult is converted.
#include <nvJitLink.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/sized_read.h"
#include "server/build/cuda_compiler.h"
#include "server/build/path_stats.h"

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

// What one nvJitLink call writes on standard error (13.0: "Multiple
// definition of ..." while adding an input), which a caller of the real
// library sees in its own: fd 2 goes to a memory file while it lives, and
// Take() gives the bytes and puts fd 2 back. A worker runs one job at a
// time, so no other thread writes meanwhile. Where fd 2 cannot be moved,
// nothing is captured (and the link says so in its step: see Take).
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = memfd_create("jitcache-nvjitlink-stderr", MFD_CLOEXEC);
    saved_ = file_ < 0 ? -1 : dup(STDERR_FILENO);
    if (saved_ < 0 || dup2(file_, STDERR_FILENO) < 0) Restore();
  }
  ~StderrCapture() { Restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string Take() {
    std::fflush(stderr);
    std::string out;
    if (file_ >= 0 && saved_ >= 0) {
      char buffer[4096];
      ssize_t n = 0;
      off_t at = 0;
      while ((n = pread(file_, buffer, sizeof(buffer), at)) > 0) {
        out.append(buffer, static_cast<size_t>(n));
        at += n;
      }
    }
    Restore();
    return out;
  }

 private:
  void Restore() {
    if (saved_ >= 0) {
      dup2(saved_, STDERR_FILENO);
      close(saved_);
      saved_ = -1;
    }
    if (file_ >= 0) {
      close(file_);
      file_ = -1;
    }
  }
  int file_ = -1;
  int saved_ = -1;
};

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

// One of nvJitLink's two logs as nvJitLink hands it out (its bytes, the
// NUL terminator included); returns the size call's result.
int RawLog(nvJitLinkHandle h,
           nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
           nvJitLinkResult (*get)(nvJitLinkHandle, char*), std::string* out) {
  return ReadSized([&](size_t* size) { return get_size(h, size); },
                   [&](char* into) { return get(h, into); }, NVJITLINK_SUCCESS,
                   out);
}

// One of the two logs as text.
std::string ReadLog(nvJitLinkHandle h,
                    nvJitLinkResult (*get_size)(nvJitLinkHandle, size_t*),
                    nvJitLinkResult (*get)(nvJitLinkHandle, char*)) {
  std::string log;
  RawLog(h, get_size, get, &log);
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
    case ObjectKind::kOptixIr:
      break;  // no link input (refused before a link is prepared)
  }
  return NVJITLINK_INPUT_NONE;
}

// What a caller reading both logs right after a call would get.
void RecordLogs(nvJitLinkHandle h, v1::NvJitLinkLogs* logs) {
  logs->set_error_size_result(RawLog(h, &nvJitLinkGetErrorLogSize,
                                     &nvJitLinkGetErrorLog,
                                     logs->mutable_error_log()));
  logs->set_info_size_result(RawLog(h, &nvJitLinkGetInfoLogSize,
                                    &nvJitLinkGetInfoLog,
                                    logs->mutable_info_log()));
}

// One of the two outputs after nvJitLinkComplete: returns the size call's
// result, `read` the read's.
nvJitLinkResult ReadOutput(nvJitLinkHandle h,
                           nvJitLinkResult (*get_size)(nvJitLinkHandle,
                                                       size_t*),
                           nvJitLinkResult (*get)(nvJitLinkHandle, void*),
                           std::string* bytes, nvJitLinkResult* read) {
  return ReadSized([&](size_t* size) { return get_size(h, size); },
                   [&](char* into) { return get(h, into); }, NVJITLINK_SUCCESS,
                   bytes, read);
}

// nvJitLinkGetLinkedPtx takes a char*: the same read as the cubin's.
nvJitLinkResult GetLinkedPtx(nvJitLinkHandle h, void* ptx) {
  return nvJitLinkGetLinkedPtx(h, static_cast<char*>(ptx));
}

// The link as the caller drove it through libnvJitLink.so.13: the options
// as spelled, every call made whatever the one before answered (nvJitLink
// goes on after a failed add), and every observable recorded, so that the
// library can answer each call as the real one did.
absl::StatusOr<ActionResult> LinkAsCalled(const LinkJob& job) {
  const absl::Time start = absl::Now();
  std::vector<const char*> argv;
  for (const std::string& o : job.options) argv.push_back(o.c_str());
  LinkHandle link;
  v1::NvJitLinkTrace trace;
  auto capture = std::make_unique<StderrCapture>();
  nvJitLinkResult r = nvJitLinkCreate(
      link.out(), static_cast<uint32_t>(argv.size()), argv.data());
  trace.set_handle_created(link.get() != nullptr);
  // Each call's result, logs and what it wrote on standard error; the
  // capture then starts again for the next call.
  auto step = [&] {
    v1::NvJitLinkStep* s = trace.add_steps();
    s->set_result(r);
    s->set_stderr_text(capture->Take());
    RecordLogs(link.get(), s->mutable_logs());
    capture = std::make_unique<StderrCapture>();
  };
  ActionResult result;
  if (link.get() != nullptr) {
    step();
  }
  // After a refused nvJitLinkCreate the real nvJitLink crashes in later
  // calls (13.0: nvJitLinkComplete): those are left to the caller's own.
  if (link.get() != nullptr && r == NVJITLINK_SUCCESS) {
    for (const LinkInputData& input : job.inputs) {
      r = nvJitLinkAddData(
          link.get(),
          input.typed_by_content ? NVJITLINK_INPUT_ANY : InputType(input.kind),
          input.bytes.data(), input.bytes.size(), input.name.c_str());
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
    nvJitLinkResult read = NVJITLINK_SUCCESS;
    trace.set_cubin_size_result(
        ReadOutput(link.get(), &nvJitLinkGetLinkedCubinSize,
                   &nvJitLinkGetLinkedCubin, &result.object, &read));
    trace.set_cubin_result(read);
    trace.set_ptx_size_result(ReadOutput(link.get(), &nvJitLinkGetLinkedPtxSize,
                                         &GetLinkedPtx, trace.mutable_ptx(),
                                         &read));
    trace.set_ptx_result(read);
  } else if (link.get() == nullptr) {
    v1::NvJitLinkStep* s = trace.add_steps();
    s->set_result(r);
    s->set_stderr_text(capture->Take());
  }
  capture.reset();
  result.ok = true;
  result.link_trace = std::move(trace);
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace

absl::StatusOr<ActionResult> CudaCompiler::Link(const LinkJob& job) {
  // Source files laid out nowhere: nvJitLink would stat this process's.
  if (!job.sources.empty() && !job.sources_in_view) {
    return ReadsCallersFilesError();
  }
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
  ActionResult result;
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
  nvJitLinkResult read = NVJITLINK_SUCCESS;
  const bool ptx = job.target == ObjectKind::kPtx;
  r = ptx ? ReadOutput(link.get(), &nvJitLinkGetLinkedPtxSize, &GetLinkedPtx,
                       &result.object, &read)
          : ReadOutput(link.get(), &nvJitLinkGetLinkedCubinSize,
                       &nvJitLinkGetLinkedCubin, &result.object, &read);
  if (r == NVJITLINK_SUCCESS) r = read;
  while (ptx && !result.object.empty() && result.object.back() == '\0') {
    result.object.pop_back();
  }
  if (r != NVJITLINK_SUCCESS) return link_error("reading the linked output");
  result.ok = true;
  result.log = Logs(link.get());
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace jitcache
