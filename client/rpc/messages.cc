#include "client/rpc/messages.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/compile_options.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {

namespace internal {

std::vector<std::string> NvrtcOptionsFor(const ProgramOptions& options,
                                         CodeType target) {
  std::vector<std::string> out = options.AsNvrtcOptions();
  if (target == CodeType::kLtoir && options.dlto_for_ltoir &&
      !AsksForLtoIr(out)) {
    out.push_back("-dlto");
  }
  return out;
}

}  // namespace internal

namespace {

Served FromWire(v1::Served served) {
  switch (served) {
    case v1::SERVED_HIT:
      return Served::kHit;
    case v1::SERVED_JOINED:
      return Served::kJoined;
    case v1::SERVED_LOCAL:
      return Served::kLocal;
    default:
      return Served::kMiss;
  }
}

}  // namespace

v1::CompileRequest CompileRequestFor(const Program& program,
                                     const ProgramOptions& options,
                                     CodeType target) {
  v1::CompileRequest request;
  request.set_source(program.source());
  request.set_program_name(program.name());
  for (const auto& [name, contents] : program.headers()) {
    v1::Header* header = request.add_headers();
    header->set_name(name);
    header->set_contents(contents);
  }
  for (std::string& option : internal::NvrtcOptionsFor(options, target)) {
    request.add_options(std::move(option));
  }
  for (const std::string& expr : options.name_expressions) {
    request.add_name_expressions(expr);
  }
  request.set_target(ToWireTarget(target));
  request.set_exact_include_path(!options.toolkit_include_dirs);
  return request;
}

ObjectCode ToObjectCode(v1::CompileResponse& response, CodeType target,
                        const std::string& name) {
  ObjectCode code;
  code.compiled = response.outcome() == v1::OUTCOME_OK;
  code.bytes = std::move(*response.mutable_object());
  code.code_type = target;
  code.name = name;
  code.log = std::move(*response.mutable_log());
  for (const v1::LoweredName& n : response.lowered_names()) {
    code.symbol_mapping[n.name_expression()] = n.lowered_name();
  }
  code.served = FromWire(response.served());
  code.cache_key = response.cache_key();
  code.object_digest = response.object_digest();
  code.compile_time_us = response.compile_time_us();
  code.served_remotely = response.served_remotely();
  return code;
}

DaemonStats DaemonStatsFrom(const v1::StatsResponse& r) {
  DaemonStats stats;
  const google::protobuf::Descriptor& d = *r.GetDescriptor();
  const google::protobuf::Reflection& reflect = *r.GetReflection();
  for (int i = 0; i < d.field_count(); ++i) {
    const google::protobuf::FieldDescriptor& f = *d.field(i);
    if (f.is_map()) {
      const std::map<std::string, uint64_t> by_reason(r.rejected().begin(),
                                                      r.rejected().end());
      for (const auto& [reason, count] : by_reason) {
        stats.values.emplace_back(absl::StrCat(f.name(), "_", reason),
                                  static_cast<double>(count));
      }
    } else if (f.cpp_type() ==
               google::protobuf::FieldDescriptor::CPPTYPE_UINT64) {
      stats.values.emplace_back(f.name(),
                                static_cast<double>(reflect.GetUInt64(r, &f)));
    } else if (f.cpp_type() ==
               google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
      stats.values.emplace_back(f.name(), reflect.GetDouble(r, &f));
    }
  }
  stats.requests = r.requests();
  stats.hits = r.hits();
  stats.misses = r.misses();
  stats.joins = r.joins();
  stats.compile_errors = r.compile_errors();
  stats.compiles = r.compiles();
  stats.link_requests = r.link_requests();
  stats.link_errors = r.link_errors();
  stats.rejected.insert(r.rejected().begin(), r.rejected().end());
  stats.queued = r.queued();
  stats.running = r.running();
  stats.waiting = r.waiting();
  stats.compile_seconds_spent = r.compile_seconds_spent();
  stats.compile_seconds_saved = r.compile_seconds_saved();
  stats.store_entries = r.store_entries();
  stats.store_bytes = r.store_bytes();
  stats.store_corrupt_removed = r.store_corrupt_removed();
  stats.store_write_failures = r.store_write_failures();
  stats.store_objects = r.store_objects();
  stats.store_uploads = r.store_uploads();
  stats.store_live_bytes = r.store_live_bytes();
  stats.store_max_bytes = r.store_max_bytes();
  stats.store_evicted_entries = r.store_evicted_entries();
  stats.store_evicted_bytes = r.store_evicted_bytes();
  stats.store_eviction_runs = r.store_eviction_runs();
  stats.compiler_crashes = r.compiler_crashes();
  stats.compiler_memory_limited = r.compiler_memory_limited();
  stats.compiler_time_limited = r.compiler_time_limited();
  stats.compile_workers_started = r.compile_workers_started();
  stats.remote_hits = r.remote_hits();
  stats.remote_misses = r.remote_misses();
  stats.remote_errors = r.remote_errors();
  stats.remote_corrupt = r.remote_corrupt();
  stats.remote_leases_waited = r.remote_leases_waited();
  stats.remote_bytes_up = r.remote_bytes_up();
  stats.remote_bytes_down = r.remote_bytes_down();
  for (const v1::UserStats& u : r.users()) {
    stats.users.push_back({u.uid(), u.name(), u.requests(), u.hits(),
                           u.misses(), u.joins(), u.rejected(),
                           u.compile_seconds(), u.queued()});
  }
  return stats;
}

}  // namespace jitcache
