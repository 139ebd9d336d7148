#include "server/build/worker_protocol.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/fd_io.h"
#include "common/length_frame.h"
#include "common/little_endian.h"
#include "common/object_kind.h"
#include "common/paths.h"
#include "server/build/path_stats.h"
#include "server/build/toolkit_library.h"

namespace jitcache {

v1::WorkerRequest ToWorkerRequest(const CompileJob& job) {
  v1::WorkerRequest request;
  v1::WorkerCompile* c = request.mutable_compile();
  c->set_program_name(job.program_name);
  c->set_source(job.source);
  for (const auto& [name, contents] : job.headers) {
    v1::WorkerHeader* h = c->add_headers();
    h->set_name(name);
    h->set_contents(contents);
  }
  for (const std::string& o : job.options) c->add_options(o);
  for (const std::string& e : job.name_expressions) c->add_name_expressions(e);
  c->set_exact_include_path(!job.toolkit_include_dirs);
  c->set_target(static_cast<int>(job.target));
  c->set_working_directory(job.working_directory);
  if (job.files != nullptr) {
    for (const auto& [path, bytes] : *job.files) {
      v1::WorkerHeader* f = c->add_files();
      f->set_name(path);
      f->set_contents(bytes);
    }
  }
  for (int64_t mtime : job.file_mtimes_ns) c->add_file_mtimes_ns(mtime);
  request.set_deadline_unix_us(absl::ToUnixMicros(job.deadline));
  return request;
}

v1::WorkerRequest ToWorkerRequest(const LinkJob& job) {
  v1::WorkerRequest request;
  v1::WorkerLink* l = request.mutable_link();
  for (const LinkInputData& input : job.inputs) {
    v1::WorkerLinkInput* i = l->add_inputs();
    i->set_kind(static_cast<int>(input.kind));
    i->set_name(input.name);
    i->set_bytes(input.bytes);
    i->set_typed_by_content(input.typed_by_content);
  }
  for (const std::string& o : job.options) l->add_options(o);
  l->set_target(static_cast<int>(job.target));
  l->set_as_called(job.as_called);
  for (const SourceStat& source : job.sources) {
    v1::PtxasSource* s = l->add_sources();
    s->set_path(source.path);
    s->set_exists(source.exists);
    s->set_size(source.size);
    s->set_mtime_ns(source.mtime_ns);
  }
  request.set_deadline_unix_us(absl::ToUnixMicros(job.deadline));
  return request;
}

v1::WorkerRequest ToWorkerRequest(const PtxasJob& job) {
  v1::WorkerRequest request;
  v1::WorkerPtxas* p = request.mutable_ptxas();
  ToolkitLibraryOf(job.ptxas, p->mutable_ptxas());
  p->set_program(job.program);
  for (const std::string& a : job.arguments) p->add_arguments(a);
  p->set_ptx(job.ptx);
  p->set_working_directory(job.working_directory);
  p->set_input_path(job.input_path);
  p->set_output_path(job.output_path);
  for (const PtxasJob::Source& source : job.sources) {
    v1::PtxasSource* s = p->add_sources();
    s->set_path(source.path);
    s->set_exists(source.exists);
    s->set_size(source.size);
    s->set_mtime_ns(source.mtime_ns);
  }
  request.set_deadline_unix_us(absl::ToUnixMicros(job.deadline));
  return request;
}

v1::WorkerRequest ToWorkerRequest(const NvvmJob& job) {
  v1::WorkerRequest request;
  v1::WorkerNvvm* n = request.mutable_nvvm();
  for (const v1::NvvmCall& call : job.calls) *n->add_calls() = call;
  request.set_deadline_unix_us(absl::ToUnixMicros(job.deadline));
  return request;
}

namespace {

absl::StatusOr<ObjectKind> KindFrom(int number, absl::string_view what) {
  std::optional<ObjectKind> kind = ObjectKindFromNumber(number);
  if (!kind.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker request: ", what, " ", number, " is no kind"));
  }
  return *kind;
}

}  // namespace

absl::StatusOr<CompileJob> CompileJobFrom(const v1::WorkerCompile& c,
                                          absl::Time deadline) {
  absl::StatusOr<ObjectKind> target = KindFrom(c.target(), "target");
  if (!target.ok()) return target.status();
  CompileJob job;
  job.program_name = c.program_name();
  job.source = c.source();
  for (const v1::WorkerHeader& h : c.headers()) {
    job.headers.emplace_back(h.name(), h.contents());
  }
  job.options.assign(c.options().begin(), c.options().end());
  job.name_expressions.assign(c.name_expressions().begin(),
                              c.name_expressions().end());
  job.toolkit_include_dirs = !c.exact_include_path();
  job.target = *target;
  job.working_directory = c.working_directory();
  auto files =
      std::make_shared<std::vector<std::pair<std::string, std::string>>>();
  for (const v1::WorkerHeader& f : c.files()) {
    files->emplace_back(f.name(), f.contents());
  }
  job.files = std::move(files);
  job.file_mtimes_ns.assign(c.file_mtimes_ns().begin(),
                            c.file_mtimes_ns().end());
  job.deadline = deadline;
  return job;
}

absl::StatusOr<LinkJob> LinkJobFrom(const v1::WorkerLink& l,
                                    absl::Time deadline) {
  LinkJob job;
  for (const v1::WorkerLinkInput& i : l.inputs()) {
    absl::StatusOr<ObjectKind> kind = KindFrom(i.kind(), "input kind");
    if (!kind.ok()) return kind.status();
    job.inputs.push_back({*kind, i.name(), i.bytes(), i.typed_by_content()});
  }
  job.options.assign(l.options().begin(), l.options().end());
  absl::StatusOr<ObjectKind> target = KindFrom(l.target(), "target");
  if (!target.ok()) return target.status();
  job.target = *target;
  job.deadline = deadline;
  job.as_called = l.as_called();
  for (const v1::PtxasSource& s : l.sources()) {
    if (!IsNormalAbsolutePath(s.path())) {
      return absl::InvalidArgumentError(
          absl::StrCat("worker request: link source ", s.path(),
                       " is not absolute and normal"));
    }
    job.sources.push_back({s.path(), s.exists(), s.size(), s.mtime_ns()});
  }
  return job;
}

absl::StatusOr<PtxasJob> PtxasJobFrom(const v1::WorkerPtxas& p,
                                      absl::Time deadline) {
  PtxasJob job;
  job.ptxas = LibraryOf(p.ptxas());
  job.program = p.program();
  job.arguments.assign(p.arguments().begin(), p.arguments().end());
  job.ptx = p.ptx();
  job.working_directory = p.working_directory();
  job.input_path = p.input_path();
  job.output_path = p.output_path();
  job.deadline = deadline;
  for (const v1::PtxasSource& s : p.sources()) {
    job.sources.push_back({s.path(), s.exists(), s.size(), s.mtime_ns()});
  }
  std::vector<const std::string*> paths = {&job.working_directory,
                                           &job.input_path, &job.output_path};
  for (const PtxasJob::Source& source : job.sources) {
    paths.push_back(&source.path);
  }
  for (const std::string* path : paths) {
    if (*path != "/" && !IsNormalAbsolutePath(*path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "worker request: ptxas path ", *path, " is not absolute and normal"));
    }
  }
  return job;
}

v1::WorkerResponse ToWorkerResponse(const absl::StatusOr<ActionResult>& r) {
  v1::WorkerResponse response;
  if (!r.ok()) {
    response.set_status_code(static_cast<int>(r.status().code()));
    response.set_status_message(std::string(r.status().message()));
    response.set_reads_callers_files(IsReadsCallersFiles(r.status()));
    return response;
  }
  response.set_ok(r->ok);
  response.set_object(r->object);
  response.set_log(r->log);
  for (const auto& [expr, lowered] : r->lowered_names) {
    v1::LoweredName* name = response.add_lowered_names();
    name->set_name_expression(expr);
    name->set_lowered_name(lowered);
  }
  response.set_elapsed_us(absl::ToInt64Microseconds(r->elapsed));
  if (r->link_trace.has_value())
    *response.mutable_link_trace() = *r->link_trace;
  if (r->ptxas_run.has_value()) *response.mutable_ptxas_run() = *r->ptxas_run;
  if (r->nvvm_run.has_value()) *response.mutable_nvvm_run() = *r->nvvm_run;
  return response;
}

absl::StatusOr<ActionResult> FromWorkerResponse(v1::WorkerResponse response) {
  if (response.reads_callers_files()) return ReadsCallersFilesError();
  if (response.status_code() != 0) {
    return absl::Status(static_cast<absl::StatusCode>(response.status_code()),
                        response.status_message());
  }
  ActionResult result;
  result.ok = response.ok();
  result.object = std::move(*response.mutable_object());
  result.log = std::move(*response.mutable_log());
  for (const v1::LoweredName& name : response.lowered_names()) {
    result.lowered_names.emplace_back(name.name_expression(),
                                      name.lowered_name());
  }
  result.elapsed = absl::Microseconds(response.elapsed_us());
  if (response.has_link_trace()) {
    result.link_trace = std::move(*response.mutable_link_trace());
  }
  if (response.has_ptxas_run()) {
    result.ptxas_run = std::move(*response.mutable_ptxas_run());
  }
  if (response.has_nvvm_run()) {
    result.nvvm_run = std::move(*response.mutable_nvvm_run());
  }
  return result;
}

std::optional<std::string> ReadFrame(
    int fd, size_t max_bytes, std::optional<uint64_t>* crash_peak_bytes) {
  std::optional<uint32_t> n = frame::ReadLength(fd);
  if (!n.has_value()) return std::nullopt;
  if (*n == kCrashFrameLength) {
    char peak[8];
    if (ReadFully(fd, peak, sizeof(peak))) {
      *crash_peak_bytes = le::Get<uint64_t>(peak);
    }
    return std::nullopt;
  }
  if (*n > max_bytes) return std::nullopt;
  return frame::ReadPayload(fd, *n);
}

}  // namespace jitcache
